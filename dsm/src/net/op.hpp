// Context of every operation posted on the transport's endpoint; a completion names it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/buffer_pool.hpp"

namespace dsm::net {

struct Op {
  enum Kind { rx_eager, tx_eager, tx_large_wait, tx_large_owned, rx_large } kind;
  int index = -1;                  // buffer index for eager ops
  std::atomic<bool> done{false};   // tx_large_wait
  Buffer owned;
  std::vector<std::byte> adopted;  // tx_large_owned: a payload taken over instead of copied
  std::size_t len = 0;             // completed length (rx)
  std::uint32_t src = 0;           // rx_large
  std::uint64_t seq = 0;           // rx_large
  bool failed = false;             // rx_large: the payload did not arrive whole; skipped in order
};

}  // namespace dsm::net
