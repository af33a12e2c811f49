#include "proto/page_buffers.hpp"

#include <mutex>
#include <vector>

#include "mem/region.hpp"

namespace dsm::proto {

namespace {

constexpr std::size_t kept_buffers = 4096;

struct Kept {
  std::mutex mu;
  std::vector<std::unique_ptr<std::byte[]>> free;
};

// Never destroyed: a twin may outlive static destruction's order.
Kept& kept() {
  static Kept* const k = new Kept;
  return *k;
}

}  // namespace

std::unique_ptr<std::byte[]> take_page_buffer() {
  Kept& k = kept();
  {
    std::lock_guard lock(k.mu);
    if (!k.free.empty()) {
      std::unique_ptr<std::byte[]> b = std::move(k.free.back());
      k.free.pop_back();
      return b;
    }
  }
  return std::make_unique_for_overwrite<std::byte[]>(mem::page_size);
}

void give_page_buffer(std::unique_ptr<std::byte[]> buffer) {
  if (!buffer) return;
  Kept& k = kept();
  std::lock_guard lock(k.mu);
  if (k.free.size() < kept_buffers) k.free.push_back(std::move(buffer));
}

}  // namespace dsm::proto
