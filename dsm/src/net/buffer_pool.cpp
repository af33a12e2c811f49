#include "net/buffer_pool.hpp"

#include "mem/region.hpp"

namespace dsm::net {

BufferPool::~BufferPool() {
  for (auto& [capacity, p] : free_) delete[] p;
}

Buffer BufferPool::take(std::size_t n) {
  {
    std::lock_guard lock(mu_);
    auto it = free_.lower_bound(n);
    if (it != free_.end() && it->first <= 2 * n) {
      Buffer b(it->second, {this, it->first});
      kept_ -= it->first;
      free_.erase(it);
      return b;
    }
  }
  const std::size_t capacity = (n + granule - 1) / granule * granule;
  Buffer b(new std::byte[capacity], {this, capacity});
  mem::prefault(b.get(), capacity);
  return b;
}

void BufferPool::give(std::byte* p, std::size_t capacity) {
  {
    std::lock_guard lock(mu_);
    if (kept_ + capacity <= keep_limit) {
      free_.emplace(capacity, p);
      kept_ += capacity;
      return;
    }
  }
  delete[] p;
}

void ReturnToPool::operator()(std::byte* p) const { pool->give(p, capacity); }

}  // namespace dsm::net
