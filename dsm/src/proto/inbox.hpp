// The application thread's inbox: replies the service thread (or a polling application
// thread) takes in and queues for it, and its wait for them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "net/buffer_pool.hpp"
#include "proto/dispatch.hpp"

namespace dsm::proto {

// A reply the service thread queued for the application thread: a large payload's buffer
// taken over from the transport (a fetch's replies of a MiB each cost no copy), a small one
// copied.
struct Reply {
  int src = -1;
  Msg type{};
  std::vector<std::byte> copy;
  net::Buffer large;
  std::size_t large_size = 0;
  std::span<const std::byte> payload() const {
    return large ? std::span<const std::byte>(large.get(), large_size) : std::span<const std::byte>(copy);
  }
};

// Waits for the next reply for the application thread and takes it out of the inbox. That
// thread waits for one kind of reply at a time: one of another type, or from another rank
// than `from` (-1: any), is a forged or duplicated message, and fatal.
Reply wait_inbox(Msg type, int from);
// What the application thread waits for now, in words ("a barrier departure from rank 0
// (barrier 12)"; "nothing: it computes" when it waits for no reply). Any thread.
std::string waiting_for();
// Called by the handler given `payload`.
void post_inbox(int src, Msg type, std::span<const std::byte> payload);

// Direct pushes (barrier_push), and under exchange arrivals (barrier_arrive): queued by type
// and sender whatever the application thread waits for when they come, taken by the barrier
// they belong to.
Reply wait_queued(Msg type, int from);
// Called by their handlers.
void post_queued(int src, Msg type, std::span<const std::byte> payload);

// Channels: data sent by value from one rank's application thread to another's, outside the
// consistency protocol (a pipeline's boundary strip). Messages from one rank arrive in the
// order sent; they wait in the inbox until asked for, whatever else the thread waits for
// meanwhile.
void send_channel(int dest, std::span<const std::byte> data);
// Waits for the next channel message from rank `from` and takes it.
std::vector<std::byte> wait_channel(int from);
// Called by the handler of a channel message.
void post_channel(int src, std::span<const std::byte> payload);

}  // namespace dsm::proto
