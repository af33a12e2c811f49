// The messages of one source put back in the order sent. A message that arrives ahead of its
// turn waits here for its predecessors, and so does a large message until its payload is in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "net/op.hpp"

namespace dsm::net {

// How far past the message due a sequence number may be.
inline constexpr std::uint64_t max_reorder = 1 << 20;

class Reorder {
 public:
  struct Held {
    std::uint16_t type;
    std::vector<std::byte> eager;
    std::unique_ptr<Op> large;  // payload in large->owned, complete when large->done
  };

  // Whether a message numbered `seq` may be taken in: not one passed or held already, nor one
  // too far ahead.
  bool in_sequence(std::uint64_t seq) const;
  // Whether the message numbered `seq` may be delivered at once: it is due and nothing waits.
  bool due_alone(std::uint64_t seq) const { return seq == next_ && held_.empty(); }
  // The message due was delivered without being held.
  void pass() { ++next_; }
  void hold(std::uint64_t seq, Held m);
  bool holds(std::uint64_t seq) const { return held_.count(seq) != 0; }
  // The message due, if it is held and complete (a large one's payload is in); the one after
  // it is due then.
  std::optional<Held> take();

 private:
  std::uint64_t next_ = 0;  // sequence number of the message due
  std::map<std::uint64_t, Held> held_;
};

}  // namespace dsm::net
