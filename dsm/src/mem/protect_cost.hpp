// What this machine charges for the page protection the protocol relies on, measured once
// at start-up: on a virtual machine whose hypervisor shadows the page tables, a write fault
// costs five times what it costs on one with nested paging, and the balancer must know
// which it runs on to weigh a page that two ranks write.
#pragma once

namespace dsm::mem {

struct ProtectCost {
  double fault = 0;  // seconds: a write fault whose handler opens the page for writing
  double close = 0;  // seconds: making a written page read-only again
};

// Medians of a few samples on a scratch page, through the fault handler's own machinery:
// call it before the runtime's handler is installed (it installs and removes one).
ProtectCost measure_protect_cost();

}  // namespace dsm::mem
