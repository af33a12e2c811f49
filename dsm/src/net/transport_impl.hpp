// The transport's state, shared by the files that make it up, one concern each:
//   transport.cpp    setting it up and tearing it down; the public face (transport.hpp)
//   endpoint.cpp     the libfabric objects on the job's provider, the address exchange
//   doorbell.cpp     shm's futex doorbells
//   buffer_pool.cpp  pooled buffers of large payloads
//   progress.cpp     the completion queue, the service thread's polling and sleep, waking it
//   send.cpp         eager, inline and large sends; backing off while the provider is busy
//   receive.cpp      posted receives, order per source (reorder.cpp), dispatch
// Only these files include it.
#pragma once

#include <rdma/fi_errno.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/buffer_pool.hpp"
#include "net/doorbell.hpp"
#include "net/endpoint.hpp"
#include "net/op.hpp"
#include "net/reorder.hpp"
#include "net/transport.hpp"

namespace dsm::net {

// Messages up to this size (header included) travel in one eager send into a posted
// buffer; larger payloads follow their header as a tagged zero-copy send.
inline constexpr std::size_t eager_limit = 64 << 10;
inline constexpr int rx_buffers = 32;
inline constexpr int tx_buffers = 64;

// Monotonic time read cheaply (a few ms of resolution), for liveness: stamped on every
// message sent and received.
std::int64_t coarse_now_ns();

struct Transport::Impl {
  struct Completion {
    Op* op;
    std::size_t len;
    bool error;
    // An eager message copied out of its receive buffer by a thread waiting to send (the
    // buffer is posted again at once): its bytes, and op no longer describes it.
    bool copied = false;
    std::vector<std::byte> copy;
  };

  // The transport whose service thread this is (a handler's sends must not wait for it).
  static constinit thread_local const Impl* serving;
  // The large payload, or the message to self, this thread's handler was given
  // (take_payload).
  static constinit thread_local Buffer* handed;
  static constinit thread_local std::vector<std::byte>* handed_own;

  job::JobEnv env;
  std::string prov;
  std::uint64_t token = 0;
  bool bell_mode = false;

  // Buffers and contexts outlive the endpoint (declared first, destroyed last).
  BufferPool buffers;
  std::vector<std::byte> rx_pool, tx_pool;
  std::vector<Op> rx_ops{static_cast<std::size_t>(rx_buffers)};
  std::vector<Op> tx_ops{static_cast<std::size_t>(tx_buffers)};
  std::mutex owned_mu;
  std::map<Op*, std::unique_ptr<Op>> owned_ops;
  Doorbells bells;
  int event_fd = -1;

  Endpoint fab;

  std::mutex tx_mu;  // sequence numbers
  std::vector<std::uint64_t> next_seq;
  std::mutex pool_mu;
  std::vector<int> free_tx;
  // Every call into the provider on the endpoint and its completion queue holds this. The
  // provider's own locks spin: a thread spinning on a lock held by the other thread of the
  // same core (ranks are bound to one core) spins for a whole time slice.
  std::mutex fab_mu;
  std::mutex ready_mu;
  std::deque<Completion> ready;
  std::mutex self_mu;
  std::deque<std::pair<std::uint16_t, std::vector<std::byte>>> self_queue;
  std::atomic<int> in_flight{0};  // operations whose completion needs our progress
  // tcp: while an application thread polls (set_polling), the service thread is parked on
  // event_fd alone; on the completion fd every arriving message would wake it only to find
  // that the poller took the message, and the two would contend for the socket.
  std::atomic<bool> app_polling{false};
  std::atomic<bool> parked{false};
  // shm: this rank's bell's ring when the application thread's last poll began. Senders do
  // not wake the service thread while that thread polls; a ring that moved since then, when
  // it stops, means something may have come that neither thread has seen.
  std::atomic<std::uint32_t> polled_ring{0};

  std::vector<Reorder> sources;
  Handler handler;
  std::mutex dispatch_mu;  // one thread at a time receives and dispatches: FIFO per source
  bool held_back = false;  // under dispatch_mu: messages taken in but not delivered
  std::thread service;
  std::atomic<bool> stop{false};
  Traffic own_traffic;
  Traffic& traffic;
  std::vector<PeerTraffic> sent_to;  // by destination rank; this rank's own stays zero

  // Liveness (liveness.cpp): when anything last came from / went to each rank (coarse
  // monotonic ns; from the transport's start on), the watching thread, and its stop.
  std::unique_ptr<std::atomic<std::int64_t>[]> heard_ns, told_ns;
  std::thread watcher;
  std::mutex watch_mu;
  std::condition_variable watch_cv;
  bool watch_stop = false;

  Impl(const job::JobEnv& e, job::Bootstrap& boot, Traffic* into);
  ~Impl();

  // progress.cpp
  std::size_t progress();
  void wake(int dest);
  long sleep_ns() const;
  void block();
  void hand_off();
  void serve();
  bool poll();

  // send.cpp
  void backoff(int& round);
  template <class Call>
  void post(const char* what, Call call);
  // adopt: the payload's own buffer (one part), which the send may keep instead of copying.
  void send(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts,
            std::vector<std::byte>* adopt = nullptr, bool lazy = false);
  void post_eager(int dest, std::span<const std::byte> msg);

  // liveness.cpp
  void watch(double bound_s, const std::function<void(int, double)>& silent);
  bool heartbeat(int dest);
  void end_watch();

  // receive.cpp
  void post_rx(int i);
  void keep_receiving();
  void take_in(const Completion& c, bool deliver);
  bool drain_ready();
  bool drain_self();
  void on_eager(std::span<const std::byte> msg, bool deliver = true);
  void on_large_done(Op& op, std::size_t len, bool deliver = true);
  void deliver_in_order(std::uint32_t src);
  // `large` or `own`: the payload's buffer, which the handler may take over (take_payload).
  void dispatch(int src, std::uint16_t type, std::span<const std::byte> payload, Buffer* large = nullptr,
                std::vector<std::byte>* own = nullptr);
  void reject(const std::string& why);
};

// Posts one operation: `call` runs under fab_mu and returns the provider's code. While the
// provider is out of room (-FI_EAGAIN), makes progress and backs off; other errors throw.
template <class Call>
void Transport::Impl::post(const char* what, Call call) {
  int round = 0;
  for (;;) {
    ssize_t rc;
    {
      std::lock_guard lock(fab_mu);
      rc = call();
    }
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) fail(what, static_cast<int>(rc));
    if (round == 0) traffic.send_waits.fetch_add(1, std::memory_order_relaxed);
    progress();
    keep_receiving();
    backoff(round);
  }
}

}  // namespace dsm::net
