// Message layer on libfabric reliable-datagram endpoints (providers shm and tcp;ofi_rxm).
// Typed messages with a checked wire header (wire.hpp), FIFO per pair of ranks, any size;
// a service thread receives and dispatches while the application computes, and sleeps
// (futex doorbell for shm, completion-queue fd for tcp) after a short spin when idle.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "job/bootstrap.hpp"
#include "job/job_env.hpp"
#include "net/buffer_pool.hpp"
#include "net/segments.hpp"
#include "net/traffic.hpp"

namespace dsm::net {

class Transport {
 public:
  // Opens an FI_EP_RDM endpoint on env.provider ("shm" or "tcp"; "" = shm) and exchanges
  // addresses through the bootstrap (collective). Throws std::runtime_error on failure.
  // Counts into `traffic` when given (it must outlive the transport), else into its own.
  Transport(const job::JobEnv&, job::Bootstrap&, Traffic* traffic = nullptr);
  ~Transport();  // stops the service thread, closes every fid
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int rank() const;
  int size() const;
  std::string provider() const;  // "shm" or "tcp"

  // Thread-safe. Returns when the caller's buffers may be reused. dest == rank() works
  // (delivered through the service thread).
  void send(int dest, std::uint16_t type, std::span<const std::byte> payload);
  // The same, taking the payload's buffer: a large message sent by a handler then needs no
  // copy (it is kept until the transfer completes).
  void send_owned(int dest, std::uint16_t type, std::vector<std::byte>&& payload);
  void sendv(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts);
  // The same, for a message only a waiting application thread needs (a barrier arrival at
  // the manager): on shm it wakes nobody unless the destination's application thread waits
  // (set_waiting); otherwise that thread finds it when it next waits and polls. A busy
  // receiver then loses no time to a service thread woken on its core.
  void send_lazy(int dest, std::uint16_t type, std::span<const std::byte> payload);
  // The same, taking the payload's buffer: a barrier arrival of megabytes of pushes to the
  // rank itself is then queued without a copy.
  void send_lazy(int dest, std::uint16_t type, std::vector<std::byte>&& payload);

  using Handler = std::function<void(int src, std::uint16_t type, std::span<const std::byte> payload)>;
  // Starts the service thread: handler runs on it for every valid message, per source in
  // the order sent; payload valid only during the call; it may send. Messages that arrived
  // earlier are delivered first. Invalid messages are dropped, counted and logged.
  void start(Handler handler);
  // Inside a handler: the payload it was given, taken over, when it came as a large message
  // or from this rank itself (empty otherwise, or if taken already). A handler that keeps a
  // reply of a MiB takes it instead of copying it; a large message's buffer returns to the
  // transport's pool when released.
  Payload take_payload();

  // Does the service thread's work on the calling thread for a moment: receives and runs
  // the handlers of what has arrived (unless the service thread is at it). A thread that
  // waits for a reply polls this for a short while instead of sleeping, so the reply needs
  // no thread wake-up (tens of microseconds across cores of a virtual machine).
  // Returns true if it handled anything.
  bool poll();
  // Tells senders (shm) and the completion queue (tcp) that a thread of this rank polls,
  // so nothing wakes the service thread meanwhile. set_polling(false) polls once more itself
  // where something may have come since the last poll (shm), so it runs handlers: never call
  // it holding a lock a handler takes. Before sleeping, call poll() once more: on tcp, what
  // arrived while the flag was up is only seen by polling.
  void set_polling(bool on);
  // Tells senders of lazy messages that an application thread of this rank waits for a
  // message. After set_waiting(true), call poll() before sleeping: a lazy message that came
  // before the flag rang no bell.
  void set_waiting(bool on);
  // Liveness (liveness.cpp): from now on a thread of its own sends a heartbeat on every
  // link nothing went over for bound/4, and calls silent(peer, seconds) once for a peer
  // nothing came from (not a message, not a heartbeat) for `bound` seconds. Heartbeats
  // never wait for room: the service thread may be stuck sending to the very peer that is
  // gone. stop_liveness() before leaving, when peers that are done go quiet for good.
  void watch_liveness(double bound_s, std::function<void(int peer, double silent_s)> silent);
  void stop_liveness();
  const Traffic& counters() const;
  // What this rank sent over the network to each rank, by rank (its own entry stays zero).
  std::span<const PeerTraffic> sent_to() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsm::net
