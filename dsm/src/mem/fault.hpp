// Access detection: SIGSEGV faults inside the shared region go to the runtime.
#pragma once

namespace dsm::mem {

// Called on the faulting thread, inside the signal handler, for faults inside [lo, hi).
// When it returns, the faulting instruction runs again (so it must have opened the page).
// errno is preserved around it.
using FaultHandler = void (*)(void* addr, bool is_write);

// Installs the process's SIGSEGV handler for [lo, hi). Faults elsewhere go to the action
// that was installed before, or, if that was the default, end the process with the
// default SIGSEGV action (core dump and the usual shell report). One installation at a
// time: throws std::logic_error if already installed.
//
// The handler runs on the faulting thread's own stack (no SA_ONSTACK): the runtime's
// handler fetches pages over the network and needs more stack than an alternate signal
// stack usually has. The price: a stack overflow elsewhere kills the process with a plain
// SIGSEGV instead of reaching a previous handler's report.
//
// is_write comes from the x86-64 page-fault error code (bit 1), and on aarch64 from the
// ESR record of the signal frame (WnR bit); elsewhere every fault counts as a write
// (always correct for the protocol, only slower for reads).
void install_fault_handler(void* lo, void* hi, FaultHandler h);

// Restores the action that was installed before. No effect when not installed.
void uninstall_fault_handler();

}  // namespace dsm::mem
