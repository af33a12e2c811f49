// The messages of one source put back in the order sent. A message that arrives ahead of its
// turn waits here for its predecessors, and so does a large message until its payload is in.
// What waits is bounded in count and in bytes: a peer, broken or forged, cannot make a rank
// hold more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/op.hpp"

namespace dsm::net {

// How far past the message due a sequence number may be.
inline constexpr std::uint64_t max_reorder = 1 << 20;
// Bytes of one source's messages held ahead of the one due: eager payloads, and the announced
// length of large ones, whose buffers are taken when their header arrives. A peer's own
// messages hold little ahead (the replies to one bulk fetch, about a MiB each, while the first
// is still in transfer); without a bound, a peer could make a rank take max_reorder buffers
// of up to 4 GiB each.
inline constexpr std::uint64_t max_reorder_bytes = std::uint64_t{1} << 30;

class Reorder {
 public:
  struct Held {
    std::uint16_t type;
    std::vector<std::byte> eager;
    std::unique_ptr<Op> large;  // payload in large->owned, complete when large->done
    std::uint64_t bytes() const { return large ? large->len : eager.size(); }
  };

  explicit Reorder(std::uint64_t max_bytes = max_reorder_bytes) : max_bytes_(max_bytes) {}

  // Why a message numbered `seq` of `bytes` payload bytes cannot be taken in; empty when it
  // can. Refused: one passed or held already, one too far ahead, and one ahead of the message
  // due that would raise the bytes held ahead over the limit.
  std::string refuse(std::uint64_t seq, std::uint64_t bytes) const;
  // Whether the message numbered `seq` may be delivered at once: it is due and nothing waits.
  bool due_alone(std::uint64_t seq) const { return seq == next_ && held_.empty(); }
  // The message due was delivered without being held.
  void pass() { ++next_; }
  void hold(std::uint64_t seq, Held m);
  bool holds(std::uint64_t seq) const { return held_.count(seq) != 0; }
  // The message due, if it is held and complete (a large one's payload is in); the one after
  // it is due then.
  std::optional<Held> take();
  // Bytes held for messages after the one due.
  std::uint64_t held_ahead() const;

 private:
  std::uint64_t next_ = 0;  // sequence number of the message due
  std::map<std::uint64_t, Held> held_;
  std::uint64_t bytes_ = 0;  // of every message held
  std::uint64_t max_bytes_;
};

}  // namespace dsm::net
