#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mem/region.hpp"
#include "region_base.hpp"

using namespace dsm::mem;

namespace {

const std::uintptr_t base = test_region_base();
constexpr std::size_t capacity = 64 << 20;

struct Vma {
  std::uintptr_t lo, hi;
  std::string perms;
};

// The kernel mappings overlapping [lo, hi), from /proc/self/maps.
std::vector<Vma> vmas_in(const void* lo_p, std::size_t bytes) {
  const auto lo = reinterpret_cast<std::uintptr_t>(lo_p), hi = lo + bytes;
  std::ifstream maps("/proc/self/maps");
  std::vector<Vma> out;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    const auto dash = range.find('-');
    Vma v{std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16), perms};
    if (v.lo < hi && v.hi > lo) out.push_back(v);
  }
  return out;
}

std::string perms_of(const Region& r, std::size_t page) {
  auto v = vmas_in(r.app() + page * page_size, page_size);
  REQUIRE(v.size() == 1);
  return v[0].perms.substr(0, 3);
}

}  // namespace

TEST_CASE("region maps the object twice at the fixed address, zero-filled and inaccessible") {
  Region r(base, capacity);
  CHECK(r.app() == reinterpret_cast<std::byte*>(base));
  CHECK(r.alias() != r.app());
  CHECK(r.capacity() == capacity);
  CHECK(r.contains(r.app()));
  CHECK(r.contains(r.app() + capacity - 1));
  CHECK_FALSE(r.contains(r.app() + capacity));
  CHECK_FALSE(r.contains(r.app() - 1));
  CHECK(r.page_of(r.app() + 3 * page_size + 17) == 3);
  CHECK(perms_of(r, 0) == "---");
  CHECK(vmas_in(r.app(), capacity).size() == 1);
  std::vector<std::byte> zeros(page_size);
  CHECK(std::memcmp(r.alias() + 5 * page_size, zeros.data(), page_size) == 0);
}

TEST_CASE("writes through the alias show in the application view and back") {
  Region r(base, capacity);
  std::memcpy(r.alias() + 2 * page_size + 8, "alias", 5);
  r.protect(2, 1, Prot::read);
  CHECK(perms_of(r, 2) == "r--");
  CHECK(std::memcmp(r.app() + 2 * page_size + 8, "alias", 5) == 0);
  r.protect(2, 1, Prot::read_write);
  CHECK(perms_of(r, 2) == "rw-");
  std::memcpy(r.app() + 2 * page_size + 100, "app", 3);
  CHECK(std::memcmp(r.alias() + 2 * page_size + 100, "app", 3) == 0);
  r.protect(2, 1, Prot::none);
  CHECK(perms_of(r, 2) == "---");
  CHECK(vmas_in(r.app(), capacity).size() == 1);  // equal neighbours merge again
}

TEST_CASE("a second region over the same addresses fails cleanly") {
  Region r(base, capacity);
  for (std::uintptr_t b : {base, base + capacity / 2, base - page_size}) {
    try {
      Region again(b, capacity);
      FAIL("reserved an occupied range");
    } catch (const std::runtime_error& e) {
      std::ostringstream hex;
      hex << "0x" << std::hex << b;
      CHECK_THAT(e.what(), Catch::Contains(hex.str()));
    }
  }
  // The first region is intact.
  r.protect(0, 1, Prot::read_write);
  r.app()[0] = std::byte{7};
  CHECK(r.alias()[0] == std::byte{7});
}

TEST_CASE("an unrelated mapping is never clobbered") {
  void* other = mmap(reinterpret_cast<void*>(base + page_size), page_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  REQUIRE(other != MAP_FAILED);
  std::memset(other, 0x5a, page_size);
  CHECK_THROWS_AS(Region(base, capacity), std::runtime_error);
  CHECK(static_cast<unsigned char*>(other)[page_size - 1] == 0x5a);
  munmap(other, page_size);
}

TEST_CASE("bad arguments are refused") {
  CHECK_THROWS_AS(Region(base + 1, capacity), std::invalid_argument);
  CHECK_THROWS_AS(Region(base, capacity + 1), std::invalid_argument);
  CHECK_THROWS_AS(Region(base, 0), std::invalid_argument);
  Region r(base, capacity);
  CHECK_THROWS_AS(r.protect(r.pages(), 1, Prot::read), std::out_of_range);
  CHECK_THROWS_AS(r.protect(1, r.pages(), Prot::read), std::out_of_range);
}

TEST_CASE("protect_pages makes one call per run of consecutive pages") {
  Region r(base, capacity);
  const std::vector<std::size_t> pages{1, 2, 3, 7, 9, 10};
  const auto before = r.mprotect_calls();
  r.protect_pages(pages, Prot::read_write);
  CHECK(r.mprotect_calls() - before == 3);
  // none | rw 1-3 | none 4-6 | rw 7 | none 8 | rw 9-10 | none 11..
  CHECK(vmas_in(r.app(), capacity).size() == 7);
  for (std::size_t p : pages) CHECK(perms_of(r, p) == "rw-");
  for (std::size_t p : {0, 4, 6, 8, 11}) CHECK(perms_of(r, p) == "---");
  r.protect_pages({}, Prot::none);
  CHECK(r.mprotect_calls() - before == 3);
}

TEST_CASE("populate leaves the pages' bytes as they were and the protection asked for") {
  Region r(base, capacity);
  r.protect(2, 3, Prot::read_write);
  for (std::size_t i = 0; i < 3 * page_size; ++i) r.app()[2 * page_size + i] = std::byte(i * 7 + 1);
  r.protect(2, 3, Prot::none);
  if (!r.populate(1, 5, Prot::read)) WARN("MADV_POPULATE_WRITE unsupported here: pages fault as usual");
  for (std::size_t p = 1; p < 6; ++p) CHECK(perms_of(r, p) == "r--");
  bool same = true;
  for (std::size_t i = 0; i < 3 * page_size; ++i) same = same && r.app()[2 * page_size + i] == std::byte(i * 7 + 1);
  CHECK(same);
  CHECK(r.app()[page_size] == std::byte{0});
  CHECK(r.alias()[5 * page_size + page_size - 1] == std::byte{0});
}

TEST_CASE("an 8 GiB region costs nothing until touched") {
  Region r(base, std::size_t{8} << 30);
  const std::size_t last = r.pages() - 1;
  r.protect(last, 1, Prot::read_write);
  CHECK(r.app()[last * page_size + page_size - 1] == std::byte{0});
  r.app()[last * page_size] = std::byte{1};
  CHECK(r.alias()[last * page_size] == std::byte{1});
}

TEST_CASE("running out of kernel mappings gives a clear error") {
  std::size_t max_maps = 0;
  std::ifstream("/proc/sys/vm/max_map_count") >> max_maps;
  if (max_maps == 0 || max_maps > (1u << 20)) {
    WARN("vm.max_map_count is " << max_maps << ": limit not tested");
    return;
  }
  Region r(base, (2 * max_maps + 64) * page_size);
  try {
    for (std::size_t p = 1; p < r.pages(); p += 2) r.protect(p, 1, Prot::read);
    FAIL("no error after " << max_maps << " mappings");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("vm.max_map_count"));
  }
}
