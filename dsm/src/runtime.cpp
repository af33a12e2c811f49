// Temporary single-rank runtime so that everything links while the protocol is written.
#include <dsm/dsm.hpp>

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "runtime_hooks.hpp"

namespace dsm {
namespace {
struct Bump {
  std::byte* base = nullptr;
  std::size_t used = 0, cap = std::size_t{8} << 30;
} g_bump;
std::vector<std::vector<std::byte>> g_blobs(1);
}  // namespace

void init(int, char**) {
  void* p = mmap(nullptr, g_bump.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("dsm::init: cannot reserve the shared region");
  g_bump.base = static_cast<std::byte*>(p);
}
void finalize() {}
int rank() { return 0; }
int nprocs() { return 1; }
void barrier() {}
void lock_acquire(int) {}
void lock_release(int) {}
int max_locks() { return 1024; }
void prefetch(const void*, std::size_t, Mode) {}
double wtime() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
namespace detail {
void* alloc_bytes(std::size_t bytes) {
  std::size_t rounded = (bytes + page_size - 1) / page_size * page_size;
  void* p = g_bump.base + g_bump.used;
  g_bump.used += rounded;
  return p;
}
void set_barrier_blob(std::vector<std::byte> blob) { g_blobs[0] = std::move(blob); }
const std::vector<std::vector<std::byte>>& barrier_blobs() { return g_blobs; }
std::uint64_t barrier_count() { return 0; }
void claim_exclusive_write(const void*, std::size_t) {}
std::vector<int> page_writers(const void* addr, std::size_t bytes) {
  auto a = reinterpret_cast<std::uintptr_t>(addr);
  return std::vector<int>((a + bytes + page_size - 1) / page_size - a / page_size, 0);
}
double page_transfer_seconds() { return 0; }
Extent allocation_of(const void*) { return {nullptr, 0}; }
}  // namespace detail
}  // namespace dsm
