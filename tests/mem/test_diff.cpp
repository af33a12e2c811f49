#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "mem/diff.hpp"

using namespace dsm::mem;
using Bytes = std::vector<std::byte>;

namespace {

constexpr std::size_t page = 4096;

Bytes random_page(std::mt19937_64& rng, std::size_t size = page) {
  Bytes b(size);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

// Changes each word with probability `density` (one random byte of it).
Bytes modified(const Bytes& from, double density, std::mt19937_64& rng) {
  Bytes b = from;
  std::bernoulli_distribution pick(density);
  for (std::size_t w = 0; w < b.size() / 8; ++w)
    if (pick(rng)) b[w * 8 + rng() % 8] ^= std::byte{static_cast<unsigned char>(1 + rng() % 255)};
  return b;
}

Bytes encode(const Bytes& twin, const Bytes& now) {
  Bytes d;
  const std::size_t n = diff_encode(twin.data(), now.data(), twin.size(), d);
  REQUIRE(n == d.size());
  return d;
}

Bytes applied(const Bytes& diff, Bytes target) {
  REQUIRE(diff_apply(diff, target.data(), target.size()));
  return target;
}

// A diff that must be refused, leaving the page as it was.
void check_rejected(const Bytes& diff) {
  std::mt19937_64 rng(7);
  const Bytes original = random_page(rng);
  Bytes target = original;
  CHECK_FALSE(diff_apply(diff, target.data(), target.size()));
  CHECK(target == original);
}

// A run header, then data_words byte masks (all bytes changed) and words.
Bytes run(std::uint16_t first, std::uint16_t count, std::size_t data_words) {
  Bytes d(4 + data_words * 9, std::byte{0xab});
  for (std::size_t i = 0; i < data_words; ++i) d[4 + i] = std::byte{0xff};
  d[0] = std::byte(first & 0xff), d[1] = std::byte(first >> 8);
  d[2] = std::byte(count & 0xff), d[3] = std::byte(count >> 8);
  return d;
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("random pages: diffs match the reference encoder and reproduce the page", "[kernel]") {
  std::mt19937_64 rng(1);
  for (double density : {0.0, 0.001, 0.01, 0.1, 0.5, 0.9, 1.0}) {
    for (std::size_t size : {page, std::size_t{8}, std::size_t{520}, std::size_t{8192}}) {
      for (int rep = 0; rep < 20; ++rep) {
        const Bytes twin = random_page(rng, size), now = modified(twin, density, rng);
        const Bytes d = encode(twin, now);
        Bytes ref;
        diff_encode_reference(twin.data(), now.data(), size, ref);
        CHECK(d == ref);
        CHECK(applied(d, twin) == now);
      }
    }
  }
}

TEST_CASE("equal pages give an empty diff, and an empty diff changes nothing") {
  std::mt19937_64 rng(2);
  const Bytes p = random_page(rng);
  CHECK(encode(p, p).empty());
  CHECK(applied({}, p) == p);
}

TEST_CASE("diff_encode appends to what the buffer holds") {
  std::mt19937_64 rng(9);
  const Bytes twin = random_page(rng), now = modified(twin, 0.05, rng);
  Bytes out{std::byte{1}, std::byte{2}};
  const std::size_t n = diff_encode(twin.data(), now.data(), page, out);
  CHECK(out.size() == 2 + n);
  CHECK(applied(Bytes(out.begin() + 2, out.end()), twin) == now);
}

TEST_CASE("a full-page diff is barely bigger than the page", "[kernel]") {
  std::mt19937_64 rng(3);
  const Bytes twin(page), now(page, std::byte{1});
  const Bytes d = encode(twin, now);
  CHECK(d.size() == 4 + page / 8 + page);
  CHECK(applied(d, twin) == now);
}

TEST_CASE("single changed bytes at the start and the end of the page", "[kernel]") {
  std::mt19937_64 rng(4);
  const Bytes twin = random_page(rng);
  for (std::size_t at : {std::size_t{0}, std::size_t{7}, std::size_t{8}, page - 8, page - 1}) {
    Bytes now = twin;
    now[at] ^= std::byte{0x80};
    const Bytes d = encode(twin, now);
    CHECK(d.size() == 4 + 1 + 8);
    CHECK(applied(d, twin) == now);
  }
}

TEST_CASE("writers of the two halves of one word compose", "[kernel]") {
  std::mt19937_64 rng(11);
  const Bytes twin = random_page(rng);
  Bytes a = twin, b = twin, both = twin;
  for (std::size_t w = 0; w < page / 8; ++w) {
    a[w * 8 + 1] = both[w * 8 + 1] = ~twin[w * 8 + 1];  // writer A: byte 1 of every word
    b[w * 8 + 6] = both[w * 8 + 6] = ~twin[w * 8 + 6];  // writer B: byte 6
  }
  CHECK(applied(encode(twin, b), applied(encode(twin, a), twin)) == both);
  CHECK(applied(encode(twin, a), applied(encode(twin, b), twin)) == both);
}

TEST_CASE("successive diffs applied in order reproduce the final page", "[kernel]") {
  std::mt19937_64 rng(5);
  const Bytes start = random_page(rng);
  Bytes now = start, replica = start;
  std::vector<Bytes> diffs;
  for (int interval = 0; interval < 10; ++interval) {
    const Bytes twin = now;
    now = modified(now, 0.05, rng);
    diffs.push_back(encode(twin, now));
  }
  for (const Bytes& d : diffs) replica = applied(d, replica);
  CHECK(replica == now);
}

TEST_CASE("diffs of writers of disjoint words compose in either order", "[kernel]") {
  std::mt19937_64 rng(6);
  const Bytes twin = random_page(rng);
  Bytes a = twin, b = twin, both = twin;
  for (std::size_t w = 0; w < page / 8; ++w) {
    if (rng() % 3 == 0) a[w * 8] = both[w * 8] = ~twin[w * 8];
    else if (rng() % 3 == 0) b[w * 8 + 3] = both[w * 8 + 3] = ~twin[w * 8 + 3];
  }
  const Bytes da = encode(twin, a), db = encode(twin, b);
  CHECK(applied(db, applied(da, twin)) == both);
  CHECK(applied(da, applied(db, twin)) == both);
}

TEST_CASE("malformed diffs are rejected without touching the page", "[kernel]") {
  std::mt19937_64 rng(8);
  const Bytes twin = random_page(rng), now = modified(twin, 0.02, rng);
  const Bytes good = encode(twin, now);
  REQUIRE(good.size() > 40);
  SECTION("truncated anywhere but at a run boundary") {
    std::vector<std::size_t> boundaries{0};
    for (std::size_t pos = 0; pos < good.size();) {
      pos += 4 + 9 * (std::to_integer<std::size_t>(good[pos + 2]) | std::to_integer<std::size_t>(good[pos + 3]) << 8);
      boundaries.push_back(pos);
    }
    for (std::size_t len = 1; len < good.size(); ++len)
      if (std::find(boundaries.begin(), boundaries.end(), len) == boundaries.end())
        check_rejected(Bytes(good.begin(), good.begin() + len));
  }
  SECTION("trailing bytes") {
    for (std::size_t extra = 1; extra < 12; ++extra) check_rejected(good + Bytes(extra, std::byte{0}));
  }
  SECTION("runs past the page") {
    check_rejected(run(511, 2, 2));
    check_rejected(run(512, 1, 1));
    check_rejected(run(0, 513, 513));
    check_rejected(run(65535, 65535, 1));
  }
  SECTION("empty, overlapping, touching and out-of-order runs") {
    check_rejected(run(3, 0, 0));
    check_rejected(run(10, 4, 4) + run(12, 1, 1));
    check_rejected(run(10, 4, 4) + run(14, 1, 1));
    check_rejected(run(20, 1, 1) + run(10, 1, 1));
    check_rejected(run(10, 1, 1) + run(10, 1, 1));
  }
  SECTION("valid edge runs are accepted") {
    Bytes p(page);
    CHECK(diff_apply(run(0, 1, 1) + run(2, 510, 510), p.data(), page));
    CHECK(diff_apply(run(0, 512, 512), p.data(), page));
  }
  SECTION("garbage is either refused, page untouched, or well-formed") {
    for (int rep = 0; rep < 2000; ++rep) {
      Bytes junk(rng() % 64);
      for (auto& x : junk) x = static_cast<std::byte>(rng() % 4 == 0 ? rng() % 3 : rng());
      Bytes target = twin;
      if (!diff_apply(junk, target.data(), page)) CHECK(target == twin);
    }
  }
}

TEST_CASE("page sizes the encoding cannot describe") {
  Bytes a(16), b(16), out;
  CHECK_THROWS_AS(diff_encode(a.data(), b.data(), 12, out), std::invalid_argument);
  CHECK_THROWS_AS(diff_encode(a.data(), b.data(), max_diff_page + 8, out), std::invalid_argument);
  CHECK_FALSE(diff_apply({}, a.data(), 12));
}
