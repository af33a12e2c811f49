#include "net/reorder.hpp"

namespace dsm::net {

bool Reorder::in_sequence(std::uint64_t seq) const {
  return seq >= next_ && seq <= next_ + max_reorder && !held_.count(seq);
}

void Reorder::hold(std::uint64_t seq, Held m) { held_.emplace(seq, std::move(m)); }

std::optional<Reorder::Held> Reorder::take() {
  if (held_.empty() || held_.begin()->first != next_) return std::nullopt;
  const Held& h = held_.begin()->second;
  if (h.large && !h.large->done.load()) return std::nullopt;
  auto node = held_.extract(held_.begin());
  ++next_;
  return std::move(node.mapped());
}

}  // namespace dsm::net
