// Large payload buffers, kept for reuse: a fresh 1 MiB buffer costs 256 page faults (glibc
// maps and unmaps blocks that large), more than copying it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace dsm::net {

class BufferPool;
struct ReturnToPool {
  BufferPool* pool = nullptr;
  std::size_t capacity = 0;
  void operator()(std::byte* p) const;
};
using Buffer = std::unique_ptr<std::byte[], ReturnToPool>;

// A handler's payload taken over (Transport::take_payload): a large message's buffer, or
// the bytes of a message this rank sent itself. Empty when neither, or taken already.
struct Payload {
  Buffer large;
  std::vector<std::byte> own;
  explicit operator bool() const { return large || !own.empty(); }
};

class BufferPool {
 public:
  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();
  // At least n bytes, uninitialized.
  Buffer take(std::size_t n);
  void give(std::byte* p, std::size_t capacity);

 private:
  static constexpr std::size_t granule = 64 << 10;
  static constexpr std::size_t keep_limit = 64 << 20;
  std::mutex mu_;
  std::multimap<std::size_t, std::byte*> free_;
  std::size_t kept_ = 0;
};

}  // namespace dsm::net
