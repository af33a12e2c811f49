#include "net/wait_counter.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

namespace dsm::net {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns,
                bool shared) {
  timespec ts{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected, timeout_ns >= 0 ? &ts : nullptr,
          nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word, bool shared) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

bool may_spin() {
  static const bool spin = [] {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) > 1;
  }();
  return spin;
}

void WaitCounter::notify() {
  value_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(epoch_, false);
}

void WaitCounter::wait_until(std::uint64_t v) {
  using clock = std::chrono::steady_clock;
  // A reply usually comes within microseconds: spin that long before paying for a sleep.
  const auto spin_end = clock::now() + std::chrono::microseconds(may_spin() ? 30 : 0);
  while (value() < v) {
    if (clock::now() < spin_end) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t e = epoch_.load(std::memory_order_seq_cst);
    if (value() < v) futex_wait(epoch_, e, -1, false);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace dsm::net
