// The application thread's inbox: replies the service thread (or a polling application
// thread) takes in and queues for it, and its wait for them.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "proto/dispatch.hpp"

namespace dsm::proto {

// A reply the service thread queued for the application thread.
struct Reply {
  int src;
  Msg type;
  std::vector<std::byte> payload;
};

// Waits for the next reply for the application thread and takes it out of the inbox. That
// thread waits for one kind of reply at a time: one of another type, or from another rank
// than `from` (-1: any), is a forged or duplicated message, and fatal.
Reply wait_inbox(Msg type, int from);
void post_inbox(int src, Msg type, std::span<const std::byte> payload);
// Gives a taken reply's buffer back for a later reply: a fetch of many pages takes a reply
// of a MiB after another, and fresh memory for each costs more page faults than the copy.
void recycle_inbox(std::vector<std::byte>&& payload);

}  // namespace dsm::proto
