// A counter the application thread waits on while the service thread works: notify()
// increments it, wait_until(v) returns once value() >= v. Waiting spins only briefly, then
// sleeps in a futex, so a waiting rank leaves its core to the computation.
#pragma once

#include <atomic>
#include <cstdint>

namespace dsm::net {

class WaitCounter {
 public:
  void notify();
  void wait_until(std::uint64_t v);
  std::uint64_t value() const { return value_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::uint64_t> value_{0};
  // Futex word (futexes are 32-bit): bumped on every notify, so a sleeper re-checks value_.
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

// Whether waiting by spinning can pay off: only when this process may run on more than one
// core. A rank bound to one core (dsmrun --bind) would spin on the very core the thread it
// waits for needs. Read once.
bool may_spin();

// Futex helpers shared with the transport's doorbells (shared = word in shared memory).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns,
                bool shared);
void futex_wake_all(std::atomic<std::uint32_t>& word, bool shared);

}  // namespace dsm::net
