#include "net/reorder.hpp"

namespace dsm::net {

std::string Reorder::refuse(std::uint64_t seq, std::uint64_t bytes) const {
  if (seq < next_ || seq > next_ + max_reorder || held_.count(seq)) return "out of sequence";
  // The message due is never refused: it is on its way out, and one message is bounded by
  // max_payload already.
  if (seq != next_ && held_ahead() + bytes > max_bytes_)
    return "would hold " + std::to_string(held_ahead() + bytes) + " bytes ahead of sequence, over the limit of " +
           std::to_string(max_bytes_) + " per source";
  return {};
}

void Reorder::hold(std::uint64_t seq, Held m) {
  bytes_ += m.bytes();
  held_.emplace(seq, std::move(m));
}

std::optional<Reorder::Held> Reorder::take() {
  if (held_.empty() || held_.begin()->first != next_) return std::nullopt;
  const Held& h = held_.begin()->second;
  if (h.large && !h.large->done.load()) return std::nullopt;
  auto node = held_.extract(held_.begin());
  ++next_;
  bytes_ -= node.mapped().bytes();
  return std::move(node.mapped());
}

std::uint64_t Reorder::held_ahead() const {
  const bool due_held = !held_.empty() && held_.begin()->first == next_;
  return bytes_ - (due_held ? held_.begin()->second.bytes() : 0);
}

}  // namespace dsm::net
