#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "mem/heap.hpp"

using namespace dsm::mem;

namespace {

// Resident pages among the whole pages of [lo, hi).
std::size_t resident(std::uintptr_t lo, std::uintptr_t hi, std::size_t& pages) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  lo = (lo + page - 1) / page * page;
  hi = hi / page * page;
  pages = hi > lo ? (hi - lo) / page : 0;
  std::vector<unsigned char> in(pages);
  if (pages == 0 || mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()) != 0) return 0;
  std::size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

}  // namespace

TEST_CASE("the heap grows in steps, and populate_heap gives a step its pages at once") {
  constexpr std::size_t step = 8 << 20;
  tune_heap(step);
  populate_heap();  // from the heap's end as it is now
  const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  std::vector<void*> blocks;
  while (reinterpret_cast<std::uintptr_t>(sbrk(0)) == before && blocks.size() < (64u << 20) / 4096)
    blocks.push_back(std::malloc(4096));
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  if (after == before) {
    WARN("malloc does not grow the heap with brk here (a sanitizer's allocator): nothing to check");
  } else {
    CHECK(after - before >= step);  // M_TOP_PAD: one growth of a step, not of one block
    std::size_t pages = 0;
    const std::size_t untouched = resident(before, after, pages);
    CHECK(pages >= step / 4096 / 2);
    CHECK(untouched < pages / 2);  // the step beyond the block that grew the heap
    populate_heap();
    CHECK(resident(before, after, pages) == pages);
  }
  for (void* b : blocks) std::free(b);
}
