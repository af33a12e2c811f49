#include "mem/fault.hpp"

#include <signal.h>
#include <ucontext.h>
#if defined(__aarch64__)
#include <asm/sigcontext.h>  // _aarch64_ctx, ESR_MAGIC, esr_context
#endif

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dsm::mem {
namespace {

// Read by the signal handler: atomics, set before the handler is installed.
std::atomic<std::uintptr_t> g_lo{0}, g_hi{0};
std::atomic<FaultHandler> g_handler{nullptr};
struct sigaction g_previous;
bool g_installed = false;

bool is_write_fault([[maybe_unused]] const void* context) {
#if defined(__x86_64__)
  return (static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#elif defined(__aarch64__)
  // The kernel appends records to __reserved; the ESR one holds the data abort syndrome.
  const auto* mc = &static_cast<const ucontext_t*>(context)->uc_mcontext;
  const auto* p = reinterpret_cast<const unsigned char*>(mc->__reserved);
  const auto* end = p + sizeof mc->__reserved;
  while (p + sizeof(_aarch64_ctx) <= end) {
    const auto* ctx = reinterpret_cast<const _aarch64_ctx*>(p);
    if (ctx->magic == 0 || ctx->size == 0) break;
    if (ctx->magic == ESR_MAGIC) return (reinterpret_cast<const esr_context*>(ctx)->esr & (1u << 6)) != 0;
    p += ctx->size;
  }
  return true;
#else
  return true;
#endif
}

// Hands a fault that is not ours to whoever had SIGSEGV before.
void forward(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous;
  if (prev.sa_flags & SA_SIGINFO) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action (ignoring SIGSEGV would loop forever on the same fault): restore it and
  // let the faulting instruction run again, so the kernel reports the real fault. A SIGSEGV
  // sent by kill() has no instruction to repeat: send it again, it arrives on return.
  signal(sig, SIG_DFL);
  if (info->si_code <= 0) raise(sig);
}

void on_segv(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  FaultHandler h = g_handler.load(std::memory_order_acquire);
  if (h && info->si_code > 0 && addr >= g_lo.load(std::memory_order_relaxed) &&
      addr < g_hi.load(std::memory_order_relaxed)) {
    const int saved = errno;
    h(info->si_addr, is_write_fault(context));
    errno = saved;
    return;
  }
  forward(sig, info, context);
}

}  // namespace

void install_fault_handler(void* lo, void* hi, FaultHandler h) {
  if (g_installed) throw std::logic_error("dsm: the fault handler is already installed");
  if (!h || reinterpret_cast<std::uintptr_t>(lo) >= reinterpret_cast<std::uintptr_t>(hi))
    throw std::invalid_argument("dsm: install_fault_handler needs a handler and a non-empty range");
  g_lo.store(reinterpret_cast<std::uintptr_t>(lo), std::memory_order_relaxed);
  g_hi.store(reinterpret_cast<std::uintptr_t>(hi), std::memory_order_relaxed);
  g_handler.store(h, std::memory_order_release);
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_previous) != 0) {
    g_handler.store(nullptr, std::memory_order_release);
    throw std::runtime_error(std::string("dsm: cannot install the SIGSEGV handler: ") + std::strerror(errno));
  }
  g_installed = true;
}

void uninstall_fault_handler() {
  if (!g_installed) return;
  sigaction(SIGSEGV, &g_previous, nullptr);
  g_handler.store(nullptr, std::memory_order_release);
  g_installed = false;
}

}  // namespace dsm::mem
