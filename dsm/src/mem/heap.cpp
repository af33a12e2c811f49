#include "mem/heap.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "mem/region.hpp"

namespace dsm::mem {
namespace {
std::uintptr_t g_populated = 0;  // the heap's end as of the last populate_heap
bool g_stepped = false;
}  // namespace

void tune_heap(std::size_t step) {
  // Memory given back to the kernel costs a fault again when the next diff reuses it.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  g_stepped = step > 0;
  if (!g_stepped) return;
  mallopt(M_TOP_PAD, static_cast<int>(std::min<std::size_t>(step, 1 << 30)));
  g_populated = reinterpret_cast<std::uintptr_t>(sbrk(0));
}

void populate_heap() {
  if (!g_stepped) return;
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));  // glibc: no system call
  // Not the first accesses: much of a step is never used (gramschmidt's kernel 2-6 % slower
  // when they were paid here, at a barrier, for a heap grown to 150 MiB).
  if (end > g_populated) prefault(reinterpret_cast<std::byte*>(g_populated), end - g_populated, false);
  g_populated = end;  // also after a shrink: what grows again is fresh
}

void reserve_populated(std::vector<std::byte>& v, std::size_t bytes) {
  v.reserve(bytes);
  if (bytes >= (std::size_t{1} << 20)) prefault(v.data(), bytes);
}

}  // namespace dsm::mem
