// Whole pages copied past the cache (mem/page_copy.hpp): the same bytes as memcpy.
#include <catch2/catch.hpp>

#include "mem/page_copy.hpp"

#include <cstring>
#include <random>
#include <vector>

TEST_CASE("a streamed page copy has the source's bytes, from an unaligned source too", "[page_copy]") {
  constexpr std::size_t page = 4096;
  std::vector<std::byte> src(page + 64);
  std::mt19937_64 rng(7);
  for (auto& b : src) b = static_cast<std::byte>(rng());
  alignas(64) static std::byte dst[page + 64];
  for (std::size_t offset : {0, 1, 8, 17, 63}) {
    std::memset(dst, 0xa5, sizeof dst);
    dsm::mem::copy_page_streaming(dst, src.data() + offset, page);
    dsm::mem::stream_fence();
    CHECK(std::memcmp(dst, src.data() + offset, page) == 0);
    // Nothing past the page is written.
    for (std::size_t k = page; k < sizeof dst; ++k) REQUIRE(dst[k] == std::byte{0xa5});
  }
}
