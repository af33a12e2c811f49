// Progress: reading the completion queue, the service thread's loop of polling and sleeping,
// a waiting thread's polls, and waking the service thread.
#include <poll.h>
#include <rdma/fi_eq.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "net/transport_impl.hpp"
#include "net/wait_counter.hpp"

namespace dsm::net {

namespace {
using clock_type = std::chrono::steady_clock;
// Short: the service thread usually shares its core with the computation, which every
// microsecond of spinning takes from.
constexpr auto idle_spin = std::chrono::microseconds(3);
constexpr long idle_sleep_ns = 200'000'000;  // nothing in flight: sleep until woken
constexpr long busy_sleep_ns = 50'000;       // transfers in flight that need our progress
}  // namespace

constinit thread_local const Transport::Impl* Transport::Impl::serving = nullptr;
constinit thread_local Buffer* Transport::Impl::handed = nullptr;
constinit thread_local std::vector<std::byte>* Transport::Impl::handed_own = nullptr;

// Reads completions (either thread may); transmit completions are finished here, receive
// completions queue for the service thread.
std::size_t Transport::Impl::progress() {
  std::lock_guard lock(fab_mu);
  fi_cq_msg_entry entries[16];
  const ssize_t n = fi_cq_read(fab.cq.p, entries, 16);
  std::vector<Completion> done;
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(fab.cq.p, &err, 0) == 1 && err.op_context) {
      if (err.err != FI_ECANCELED)
        std::fprintf(stderr, "dsm: rank %d: transfer failed: %s\n", env.rank,
                     fi_cq_strerror(fab.cq.p, err.prov_errno, err.err_data, nullptr, 0));
      done.push_back({static_cast<Op*>(err.op_context), 0, true, false, {}});
    }
  } else if (n < 0 && n != -FI_EAGAIN) {
    fail("fi_cq_read", static_cast<int>(n));
  }
  for (ssize_t i = 0; i < n; ++i) done.push_back({static_cast<Op*>(entries[i].op_context), entries[i].len, false, false, {}});
  bool queued = false;
  for (const Completion& c : done) {
    switch (c.op->kind) {
      case Op::tx_eager: {
        std::lock_guard pl(pool_mu);
        free_tx.push_back(c.op->index);
        break;
      }
      case Op::tx_large_wait:
        in_flight.fetch_sub(1);
        c.op->done.store(true, std::memory_order_release);
        break;
      case Op::tx_large_owned: {
        in_flight.fetch_sub(1);
        std::lock_guard ol(owned_mu);
        owned_ops.erase(c.op);
        break;
      }
      case Op::rx_eager:
      case Op::rx_large: {
        std::lock_guard rl(ready_mu);
        ready.push_back(c);
        queued = true;
        break;
      }
    }
  }
  if (queued && serving != this) wake(env.rank);
  return done.size();
}

void Transport::Impl::wake(int dest) {
  if (bell_mode) {
    bells.ring(dest);
  } else if (dest == env.rank) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t w = write(event_fd, &one, sizeof one);
  }
}

// How long the service thread may sleep: until woken when nothing needs its progress, a nap
// while transfers do. Read after the thread announced its sleep (Bell::sleeping, parked):
// a transfer a poller starts before that is seen here, one started after it wakes the
// thread (set_polling), so no transfer waits out the idle timeout.
long Transport::Impl::sleep_ns() const { return in_flight.load() > 0 ? busy_sleep_ns : idle_sleep_ns; }

void Transport::Impl::block() {
  auto has_work = [&] {
    std::scoped_lock lock(ready_mu, self_mu);
    return !ready.empty() || !self_queue.empty() || stop.load();
  };
  if (bell_mode) {
    Bell& b = bells[env.rank];
    b.sleeping.store(1, std::memory_order_seq_cst);
    const std::uint32_t ring = b.ring.load(std::memory_order_seq_cst);
    if (progress() == 0 && !has_work()) futex_wait(b.ring, ring, sleep_ns(), true);
    b.sleeping.store(0, std::memory_order_seq_cst);
    return;
  }
  pollfd fds[] = {{event_fd, POLLIN, 0}, {fab.cq_fd, POLLIN, 0}};
  nfds_t nfds = 1;
  // parked is set before app_polling is read (both sequentially consistent): set_polling(false)
  // either sees parked and rings event_fd, or this thread sees the poller gone.
  parked.store(true);
  if (!app_polling.load()) {
    fid* fids[] = {&fab.cq.p->fid};
    bool ready_to_wait;
    {
      std::lock_guard lock(fab_mu);
      ready_to_wait = fi_trywait(fab.fabric.p, fids, 1) == FI_SUCCESS;
    }
    if (!ready_to_wait || has_work()) {
      parked.store(false);
      return;
    }
    nfds = 2;
  }
  const timespec ts{0, sleep_ns()};
  const int n = ppoll(fds, nfds, &ts, nullptr);
  parked.store(false);
  if (n > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t v;
    [[maybe_unused]] ssize_t r = read(event_fd, &v, sizeof v);
  }
}

void Transport::Impl::serve() {
  serving = this;
  // Requests wait for this thread while the rank computes on the same core: ask the
  // scheduler to run it first when it wakes (allowed for root or CAP_SYS_NICE; else ignored).
  [[maybe_unused]] int rc = setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10);
  auto last_work = clock_type::now();
  while (!stop.load(std::memory_order_relaxed)) {
    const bool worked = progress() > 0;
    bool delivered;
    {
      std::lock_guard lock(dispatch_mu);
      delivered = drain_ready() | drain_self();
    }
    if (worked || delivered) {
      last_work = clock_type::now();
      continue;
    }
    if (may_spin() && clock_type::now() - last_work < idle_spin) continue;
    block();
    last_work = clock_type::now() - idle_spin;  // after a sleep, check once and sleep again
  }
}

bool Transport::Impl::poll() {
  std::unique_lock lock(dispatch_mu, std::try_to_lock);
  if (!lock) {
    // The service thread is dispatching; on a rank bound to one core it runs only when this
    // poller lets it, so spinning here would hold up the very message being waited for.
    if (!may_spin()) sched_yield();
    return false;
  }
  if (bell_mode) polled_ring.store(bells[env.rank].ring.load(std::memory_order_seq_cst), std::memory_order_relaxed);
  const Impl* outer = serving;
  serving = this;  // like the service thread: no wake-up of ourselves, no waiting for our own progress
  bool any = progress() > 0;
  any |= drain_ready();
  any |= drain_self();
  serving = outer;
  hand_off();
  return any;
}

// Senders do not wake the service thread while the application thread polls, and what the
// poller took may have started transfers that need this rank's progress after it stops (a
// large payload it receives, a large reply it sent from a handler). The service thread
// chose its sleep before those began: it is woken to choose again, or the transfer would
// wait out the idle sleep (idle_sleep_ns) whenever a waiting rank's poll started one. Called
// by the application thread after a poll and when it stops polling.
void Transport::Impl::hand_off() {
  const bool polling = bell_mode ? bells[env.rank].polling.load(std::memory_order_seq_cst) : app_polling.load();
  if (!polling && in_flight.load() > 0) wake(env.rank);
}

}  // namespace dsm::net
