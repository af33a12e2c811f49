// Unit tests of interval bookkeeping: runs, the log, ordering, the wire decoders, the runs
// of pages pending whole and the claims table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <tuple>

#include "proto/barrier.hpp"
#include "proto/claims.hpp"
#include "proto/intervals.hpp"
#include "proto/whole_runs.hpp"

using namespace dsm::proto;

namespace {

Interval make(std::uint32_t proc, std::uint32_t idx, VectorTime vt, std::vector<PageRun> runs = {{0, 1, 0}}) {
  return Interval{proc, idx, std::move(vt), std::move(runs)};
}

void check_same_runs(const std::vector<PageRun>& got, const std::vector<PageRun>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(got[i].first == want[i].first);
    CHECK(got[i].count == want[i].count);
    CHECK(got[i].whole == want[i].whole);
  }
}

}  // namespace

TEST_CASE("pages become maximal runs split by the whole flag") {
  std::vector<std::uint32_t> pages{1, 2, 3, 7, 8, 9};
  std::vector<std::uint8_t> whole{0, 0, 1, 1, 1, 0};
  auto runs = to_runs(pages, whole);
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].first == 1);
  CHECK(runs[0].count == 2);
  CHECK(runs[1].first == 3);
  CHECK(runs[1].whole == 1);
  CHECK(runs[2].first == 7);
  CHECK(runs[2].count == 2);
  CHECK(runs[3].first == 9);
}

TEST_CASE("two disjoint run lists merge into the runs of all their pages") {
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::uint32_t> pa, pb;
    std::vector<std::uint8_t> wa, wb, whole_of(300, 0);
    for (std::uint32_t p = 0; p < 300; ++p) {
      const auto pick = rng() % 3;
      whole_of[p] = std::uint8_t(rng() % 4 == 0);
      if (pick == 1) pa.push_back(p), wa.push_back(whole_of[p]);
      if (pick == 2) pb.push_back(p), wb.push_back(whole_of[p]);
    }
    std::vector<std::uint32_t> all;
    std::vector<std::uint8_t> wall;
    std::merge(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(all));
    for (auto p : all) wall.push_back(whole_of[p]);
    check_same_runs(merge_runs(to_runs(pa, wa), to_runs(pb, wb)), to_runs(all, wall));
  }
}

TEST_CASE("pages removed from runs leave the runs of the other pages") {
  std::mt19937 rng(9);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::uint32_t> all, kept, gone;
    std::vector<std::uint8_t> wall, wkept;
    for (std::uint32_t p = 0; p < 300; ++p) {
      const auto whole = std::uint8_t(rng() % 4 == 0);
      switch (rng() % 4) {
        case 0:  // in no run; removing it changes nothing
          if (rng() % 2) gone.push_back(p);
          break;
        case 1:
          all.push_back(p), wall.push_back(whole), gone.push_back(p);
          break;
        default:
          all.push_back(p), wall.push_back(whole), kept.push_back(p), wkept.push_back(whole);
      }
    }
    check_same_runs(remove_pages(to_runs(all, wall), gone), to_runs(kept, wkept));
  }
}

TEST_CASE("the log accepts intervals in order, ignores repeats and rejects gaps") {
  IntervalLog log(2);
  CHECK(log.add(make(1, 0, {0, 1})));
  CHECK_FALSE(log.add(make(1, 0, {0, 1})));
  CHECK_THROWS_AS(log.add(make(1, 2, {0, 3})), dsm::proto::codec::DecodeError);
  CHECK(log.add(make(1, 1, {0, 2})));
  CHECK(log.vector_time() == VectorTime{0, 2});
  CHECK(log.missing_for({0, 1}).size() == 1);
  CHECK(log.missing_for({0, 0}).size() == 2);
  log.clear();
  CHECK(log.known(1) == 2);
  CHECK(log.missing_for({0, 0}).empty());
}

TEST_CASE("application order extends happened-before and puts concurrent whole pages first") {
  IntervalLog log(3);
  log.add(make(0, 0, {1, 0, 0}));        // a
  log.add(make(1, 0, {1, 1, 0}));        // b: after a
  log.add(make(2, 0, {0, 0, 1}));        // c: concurrent with a and b
  log.add(make(2, 1, {1, 1, 2}));        // d: after everything
  std::vector<Notice> notices{{2, 1, false}, {1, 0, false}, {2, 0, true}, {0, 0, false}};
  auto order = application_order(log, notices);
  REQUIRE(order.size() == 4);
  CHECK((order[0].proc == 2 && order[0].idx == 0));  // the concurrent whole page comes first
  CHECK((order[1].proc == 0 && order[1].idx == 0));
  CHECK((order[2].proc == 1 && order[2].idx == 0));
  CHECK((order[3].proc == 2 && order[3].idx == 1));
}

TEST_CASE("application order is a linear extension for random histories") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint32_t P = 4;
    IntervalLog log(P);
    std::vector<VectorTime> know(P, VectorTime(P, 0));
    std::vector<Notice> all;
    for (int step = 0; step < 30; ++step) {
      std::uint32_t p = rng() % P;
      if (rng() % 3 == 0) {  // p learns everything q knew (an acquire)
        std::uint32_t q = rng() % P;
        dsm::proto::merge(know[p], know[q]);
        continue;
      }
      auto vt = know[p];
      std::uint32_t idx = vt[p];
      vt[p] = idx + 1;
      know[p] = vt;
      log.add(make(p, idx, vt));
      all.push_back({p, idx, rng() % 4 == 0});
    }
    auto order = application_order(log, all);
    REQUIRE(order.size() == all.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      for (std::size_t j = i + 1; j < order.size(); ++j) CHECK_FALSE(happened_before(log, order[j], order[i]));
  }
}

namespace {

// What WholeRuns lists, page by page: (proc, idx), or proc -1.
using Listing = std::vector<std::pair<int, std::uint32_t>>;

Listing listing(WholeRuns runs, std::uint32_t npages) {  // a copy: take empties it
  Listing out(npages, {-1, 0});
  runs.take(0, npages, [&](std::uint32_t page, std::uint32_t proc, std::uint32_t idx) {
    REQUIRE(out[page].first == -1);
    out[page] = {int(proc), idx};
  });
  return out;
}

}  // namespace

TEST_CASE("pages pending whole are renewed per run, handed back page by page, and rejoin") {
  WholeRuns runs(2);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> other;
  const auto record = [&](std::uint32_t a, std::uint32_t b) { other.emplace_back(a, b); };
  runs.renew(1, 10, 20, 3, record);  // nothing listed yet: all of it goes page by page
  CHECK(other == decltype(other){{10, 20}});
  runs.add(1, 10, 20, 3);
  other.clear();
  runs.renew(1, 5, 25, 4, record);  // the listed middle is renewed, the edges are not listed
  CHECK(other == decltype(other){{5, 10}, {20, 25}});
  runs.add(1, 5, 10, 4);
  runs.add(1, 20, 25, 4);
  CHECK(runs.run_count() == 1);
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> taken;
  runs.take(12, 14, [&](std::uint32_t page, std::uint32_t proc, std::uint32_t idx) { taken.emplace_back(page, proc, idx); });
  CHECK(taken == decltype(taken){{12, 1, 4}, {13, 1, 4}});
  CHECK(runs.run_count() == 2);
  other.clear();
  runs.renew(0, 0, 30, 9, record);  // another rank's run: none of proc 1's pages count
  CHECK(other == decltype(other){{0, 30}});
  runs.renew(1, 5, 25, 5, record);
  runs.add(1, 12, 14, 5);
  CHECK(runs.run_count() == 1);
  const Listing l = listing(runs, 30);
  for (std::uint32_t page = 0; page < 30; ++page)
    CHECK(l[page] == (page >= 5 && page < 25 ? std::pair<int, std::uint32_t>{1, 5} : std::pair<int, std::uint32_t>{-1, 0}));
}

TEST_CASE("pages pending whole follow a page-by-page model under random operations") {
  std::mt19937 rng(11);
  const std::uint32_t P = 3, N = 64;
  WholeRuns runs(P);
  Listing model(N, {-1, 0});
  for (int step = 0; step < 3000; ++step) {
    std::uint32_t a = rng() % N, b = a + 1 + rng() % (N - a);
    std::uint32_t proc = rng() % P, idx = std::uint32_t(step);
    if (rng() % 3 == 0) {  // take: every listed page comes back once, with its interval
      runs.take(a, b, [&](std::uint32_t page, std::uint32_t p, std::uint32_t i) {
        REQUIRE(page >= a);
        REQUIRE(page < b);
        REQUIRE(model[page] == std::pair<int, std::uint32_t>{int(p), i});
        model[page] = {-1, 0};
      });
      for (std::uint32_t page = a; page < b; ++page) REQUIRE(model[page].first == -1);
      continue;
    }
    // renew, as the merge does: pages not listed for proc are taken from the others and
    // some of them listed for proc.
    std::uint32_t next = a;
    runs.renew(proc, a, b, idx, [&](std::uint32_t x, std::uint32_t y) {
      REQUIRE(x >= next);
      REQUIRE(x < y);
      REQUIRE(y <= b);
      for (std::uint32_t page = next; page < x; ++page) REQUIRE(model[page].first == int(proc));
      for (std::uint32_t page = x; page < y; ++page) REQUIRE(model[page].first != int(proc));
      next = y;
      runs.take(x, y, [&](std::uint32_t page, std::uint32_t, std::uint32_t) { model[page] = {-1, 0}; });
      const std::uint32_t cut = x + rng() % (y - x + 1);
      runs.add(proc, x, cut, idx);
      for (std::uint32_t page = x; page < cut; ++page) model[page] = {int(proc), idx};
    });
    for (std::uint32_t page = next; page < b; ++page) REQUIRE(model[page].first == int(proc));
    for (std::uint32_t page = a; page < b; ++page)
      if (model[page].first == int(proc)) model[page].second = idx;
    REQUIRE(listing(runs, N) == model);
  }
  // Maximal runs: one per stretch of pages listed alike.
  std::size_t stretches = 0;
  for (std::uint32_t page = 0; page < N; ++page)
    stretches += model[page].first != -1 && (page == 0 || model[page] != model[page - 1]);
  CHECK(runs.run_count() == stretches);
}

namespace {

// The claims page by page, as ClaimTable kept them before it kept runs.
struct ClaimModel {
  struct Entry {
    std::uint64_t epoch = ~0ull;
    int owner = -1, holder = -1;
    std::uint64_t held_epoch = 0;
  };
  std::vector<Entry> pages;
  using Contested = std::vector<std::pair<std::uint32_t, int>>;
  Contested claim(int owner, std::uint32_t first, std::uint32_t last, bool collective, std::uint64_t epoch) {
    Contested out;
    for (std::uint32_t p = first; p < last; ++p) {
      Entry& c = pages[p];
      const bool fresh = c.epoch != epoch;
      if (fresh ? c.holder >= 0 && c.holder != owner : c.owner != owner) {
        out.emplace_back(p, c.holder);
        c = {epoch, -2, -1, c.held_epoch};
      } else if (fresh) {
        c.epoch = epoch;
        c.owner = owner;
        if (collective) c.holder = owner;
      }
    }
    return out;
  }
};

ClaimModel::Contested claim(ClaimTable& t, int owner, std::uint32_t first, std::uint32_t last, bool collective,
                            std::uint64_t epoch) {
  ClaimModel::Contested out;
  t.claim(owner, first, last, collective, epoch, [&](std::uint32_t p, int holder) { out.emplace_back(p, holder); });
  return out;
}

// Each page as (owner in epoch, holder, held epoch).
using ClaimView = std::vector<std::tuple<int, int, std::uint64_t>>;

ClaimView view(const ClaimTable& t, std::uint32_t npages, std::uint64_t epoch) {
  ClaimView out;
  for (std::uint32_t p = 0; p < npages; ++p) out.emplace_back(t.owner(p, epoch), t.holder(p), t.held_epoch(p));
  return out;
}

ClaimView view(const ClaimModel& m, std::uint64_t epoch) {
  ClaimView out;
  for (const auto& c : m.pages) out.emplace_back(c.epoch == epoch ? c.owner : -1, c.holder, c.held_epoch);
  return out;
}

}  // namespace

TEST_CASE("a claim repeated for the same owner walks no page") {
  ClaimTable t;
  t.resize(1000);
  const auto none = [](std::uint32_t, int) { FAIL("nothing is contested"); };
  for (std::uint64_t epoch = 1; epoch <= 50; ++epoch) {
    t.claim(0, 0, 500, true, epoch, none);  // what dsm::own does at every step, on every rank
    t.claim(1, 500, 1000, true, epoch, none);
    t.renew(0, 500, epoch);
    if (epoch == 1) CHECK(t.pages_walked() == 1000);
  }
  CHECK(t.pages_walked() == 1000);
  CHECK(t.run_count() == 2);
  CHECK(t.owner(499, 50) == 0);
  CHECK(t.owner(500, 50) == 1);
  CHECK(t.owner(500, 51) == -1);
  CHECK(t.holder(700) == 1);
  CHECK(t.held_epoch(250) == 50);
  // A cut that moves by a few pages walks those pages (and the part of a run it splits
  // off); the pages it moves were held by the other owner: contested, no longer held.
  const std::uint64_t before = t.pages_walked();
  std::vector<std::uint32_t> contested;
  t.claim(0, 0, 504, true, 51, [&](std::uint32_t p, int holder) {
    contested.push_back(p);
    CHECK(holder == 1);
  });
  t.claim(1, 504, 1000, true, 51, none);
  CHECK(contested == std::vector<std::uint32_t>{500, 501, 502, 503});
  CHECK(t.owner(503, 51) == -2);
  CHECK(t.owner(504, 51) == 1);
  CHECK(t.pages_walked() - before <= 8);
  t.claim(0, 0, 504, true, 52, none);  // uncontested from the next epoch on
  CHECK(t.owner(503, 52) == 0);
  CHECK(t.holder(503) == 0);
  // Claimed for two owners in one epoch: contested, no holder, reported with the holder it had.
  t.claim(1, 504, 1000, true, 52, none);
  // Claimed again for its owner in the same epoch, over part of it: nothing changes, and the
  // run stays whole.
  const std::uint64_t runs = t.run_count(), walked = t.pages_walked();
  t.claim(1, 600, 700, false, 52, none);
  CHECK(t.run_count() == runs);
  CHECK(t.pages_walked() == walked);
  contested.clear();
  t.claim(0, 600, 610, true, 52, [&](std::uint32_t p, int holder) {
    contested.push_back(p);
    CHECK(holder == 1);
  });
  CHECK(contested.size() == 10);
  CHECK(t.owner(605, 52) == -2);
  CHECK(t.holder(605) == -1);
  CHECK(t.owner(611, 52) == 1);
}

TEST_CASE("a claim inside a run keeps the run's larger part outside it") {
  ClaimTable t;
  t.resize(100);
  const auto none = [](std::uint32_t, int) {};
  t.claim(0, 0, 100, true, 1, none);
  REQUIRE(t.run_count() == 1);
  const std::uint64_t before = t.pages_walked();
  t.claim(1, 30, 50, true, 2, none);  // another owner, next epoch: [0, 30) and [50, 100) left
  // Detached: the smaller part and the claimed pages, which the claim then walks.
  CHECK(t.pages_walked() - before == 30 + 20 + 20);
  CHECK(t.run_count() == 1);  // [50, 100); the claimed pages are contested, no run
  CHECK(t.owner(29, 2) == -1);
  CHECK(t.owner(30, 2) == -2);  // its holder was rank 0
  CHECK(t.owner(60, 1) == 0);
  CHECK(t.holder(60) == 0);
  t.claim(0, 60, 61, true, 2, none);  // too short to leave a run: [50, 60) goes, [61, 100) stays
  CHECK(t.owner(60, 2) == 0);
  CHECK(t.owner(59, 1) == 0);
  CHECK(t.run_count() == 1);
}

TEST_CASE("claims follow a page-by-page model under random operations") {
  std::mt19937 rng(GENERATE(1u, 2u, 3u, 4u));
  std::uint32_t N = 400;
  const int P = 4;
  ClaimTable t;
  t.resize(N);
  ClaimModel m;
  m.pages.resize(N);
  std::uint64_t epoch = 1;
  std::vector<std::uint32_t> cuts{0, 100, 200, 300, N};  // blocks claimed again and again, cuts moving
  for (int step = 0; step < 4000; ++step) {
    const unsigned what = rng() % 16;
    if (what == 0) {
      ++epoch;
      if (rng() % 8 == 0) {  // an allocation: more pages, the last block grows
        N += 1 + rng() % 40;
        t.resize(N);
        m.pages.resize(N);
        cuts.back() = N;
      }
    } else if (what == 1) {  // a cut moves
      const std::size_t k = 1 + rng() % (cuts.size() - 2);
      cuts[k] = cuts[k - 1] + 1 + rng() % (cuts[k + 1] - cuts[k - 1] - 1);
    } else if (what < 11) {  // a block claimed, by its owner or another; collective mostly
      const std::size_t k = rng() % (cuts.size() - 1);
      const int owner = rng() % 8 ? int(k) % P : int(rng() % P);
      const bool collective = rng() % 6 != 0;
      // Sometimes without its edge pages (a claim of the inner pages of a byte range).
      const std::uint32_t first = cuts[k] + (rng() % 4 == 0), last = cuts[k + 1] - (rng() % 4 == 0);
      REQUIRE(claim(t, owner, first, last, collective, epoch) == m.claim(owner, first, last, collective, epoch));
    } else if (what < 13) {  // any range, any owner
      const std::uint32_t first = rng() % N, last = first + rng() % (N - first + 1);
      const int owner = int(rng() % P);
      const bool collective = rng() % 2;
      REQUIRE(claim(t, owner, first, last, collective, epoch) == m.claim(owner, first, last, collective, epoch));
    } else if (what < 15) {  // holds renewed over a block or any range
      std::uint32_t first = rng() % N, last = first + rng() % (N - first + 1);
      if (what == 13) {
        const std::size_t k = rng() % (cuts.size() - 1);
        first = cuts[k], last = cuts[k + 1];
      }
      t.renew(first, last, epoch);
      for (std::uint32_t p = first; p < last; ++p) m.pages[p].held_epoch = epoch;
    } else {
      const std::uint32_t p = rng() % N;
      t.renew(p, epoch);
      m.pages[p].held_epoch = epoch;
    }
    REQUIRE(view(t, N, epoch) == view(m, epoch));
    REQUIRE(view(t, N, epoch - 1) == view(m, epoch - 1));
    REQUIRE(t.run_count() <= N / 16);
  }
  CHECK(t.run_count() > 0);  // the repeated blocks became runs
  CHECK(t.pages_walked() < 4000ull * N / 4);
}

TEST_CASE("interval decoding rejects malformed input") {
  Interval in = make(1, 4, {2, 5}, {{10, 3, 1}});
  dsm::proto::codec::Writer w;
  const Interval* one[] = {&in};
  encode_list(w, one);
  auto good = w.take();
  {
    dsm::proto::codec::Reader r(good);
    auto back = decode_list(r, 2, 100);
    REQUIRE(back.size() == 1);
    CHECK(back[0].proc == 1);
    CHECK(back[0].idx == 4);
    CHECK(back[0].runs.size() == 1);
    r.expect_end();
  }
  SECTION("truncated") {
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      dsm::proto::codec::Reader r(std::span<const std::byte>(good).first(cut));
      CHECK_THROWS_AS(decode_list(r, 2, 100), dsm::proto::codec::DecodeError);
    }
  }
  SECTION("a page outside the heap") {
    dsm::proto::codec::Reader r(good);
    CHECK_THROWS_AS(decode_list(r, 2, 12), dsm::proto::codec::DecodeError);
  }
  SECTION("an unknown rank") {
    dsm::proto::codec::Reader r(good);
    CHECK_THROWS_AS(decode_list(r, 1, 100), dsm::proto::codec::DecodeError);
  }
  SECTION("a forged count cannot allocate") {
    dsm::proto::codec::Writer f;
    f.put<std::uint32_t>(0xFFFFFFFFu);
    auto bad = f.take();
    dsm::proto::codec::Reader r(bad);
    CHECK_THROWS_AS(decode_list(r, 2, 100), dsm::proto::codec::DecodeError);
  }
}

TEST_CASE("a barrier's intervals travel with their stamps' changes, in bytes linear in the ranks") {
  // What a departure of a barrier at P ranks lists: one interval of each rank, each stamped
  // with what everyone knew at the barrier before, plus itself.
  for (std::uint32_t P : {2u, 8u, 64u}) {
    std::vector<Interval> list;
    for (std::uint32_t p = 0; p < P; ++p) {
      VectorTime vt(P, 7);
      vt[p] = 8;
      list.push_back(make(p, 7, vt, {{p, 1, 0}}));
    }
    std::vector<const Interval*> ptrs;
    for (const auto& in : list) ptrs.push_back(&in);
    dsm::proto::codec::Writer w;
    encode_list(w, ptrs);
    auto bytes = w.take();
    CHECK(bytes.size() <= 48 * P + 4 * P);
    dsm::proto::codec::Reader r(bytes);
    auto back = decode_list(r, P, 100);
    r.expect_end();
    REQUIRE(back.size() == P);
    for (std::uint32_t p = 0; p < P; ++p) {
      CHECK(back[p].vt == list[p].vt);
      CHECK(back[p].proc == p);
    }
  }
}

// A list of one interval (rank 0's first, no runs) whose stamp takes `form`: the whole
// vector holding `changes` (0) or the changes themselves (1).
std::vector<std::byte> one_stamp(std::uint32_t P, std::uint8_t form,
                                 const std::vector<std::pair<std::uint32_t, std::uint32_t>>& changes) {
  std::vector<std::uint32_t> words{1, 0, 0};  // one interval: proc, idx
  std::vector<std::uint32_t> after;
  if (form == 0) {
    VectorTime vt(P, 0);
    for (auto [q, v] : changes) vt[q] = v;
    after.push_back(P);
    after.insert(after.end(), vt.begin(), vt.end());
  } else {
    after.push_back(std::uint32_t(changes.size()));
    for (auto [q, v] : changes) after.insert(after.end(), {q, v});
  }
  after.push_back(0);  // no runs
  std::vector<std::byte> out(words.size() * 4 + 1 + after.size() * 4);
  std::memcpy(out.data(), words.data(), words.size() * 4);
  out[words.size() * 4] = std::byte{form};
  std::memcpy(out.data() + words.size() * 4 + 1, after.data(), after.size() * 4);
  return out;
}

TEST_CASE("a stamp decodes from one form only") {
  const std::uint32_t P = 16;
  auto encoded = [&](std::uint8_t form, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& changes) {
    return one_stamp(P, form, changes);
  };
  auto decodes = [&](const std::vector<std::byte>& b) {
    dsm::proto::codec::Reader r(b);
    decode_list(r, P, 100);
    r.expect_end();
  };
  CHECK_NOTHROW(decodes(encoded(1, {{0, 1}, {5, 3}})));
  CHECK_THROWS_AS(decodes(encoded(0, {{0, 1}, {5, 3}})), dsm::proto::codec::DecodeError);  // changes are shorter
  CHECK_THROWS_AS(decodes(encoded(1, {{5, 3}, {0, 1}})), dsm::proto::codec::DecodeError);  // out of order
  CHECK_THROWS_AS(decodes(encoded(1, {{0, 1}, {0, 1}})), dsm::proto::codec::DecodeError);  // twice
  CHECK_THROWS_AS(decodes(encoded(1, {{0, 1}, {16, 3}})), dsm::proto::codec::DecodeError);  // no such rank
  CHECK_THROWS_AS(decodes(encoded(1, {{0, 1}, {4, 0}})), dsm::proto::codec::DecodeError);  // changes nothing
  CHECK_THROWS_AS(decodes(encoded(2, {{0, 1}})), dsm::proto::codec::DecodeError);          // unknown form
  std::vector<std::pair<std::uint32_t, std::uint32_t>> many;
  for (std::uint32_t q = 0; q < 8; ++q) many.push_back({q, 1});
  CHECK_NOTHROW(decodes(encoded(0, many)));
  CHECK_THROWS_AS(decodes(encoded(1, many)), dsm::proto::codec::DecodeError);  // the whole is shorter
}

TEST_CASE("the barrier tree: every rank but 0 is the child of its parent, and subtrees follow the parents") {
  using namespace dsm::proto;
  for (int fanout : {1, 2, 3, 4}) {
    for (int P = 1; P <= 40; ++P) {
      std::vector<int> parent_of(P, -2);
      for (int r = 0; r < P; ++r)
        for (int c : barrier_children(r, P, fanout)) {
          REQUIRE(c < P);
          CHECK(parent_of[c] == -2);  // one parent each
          parent_of[c] = r;
        }
      CHECK(barrier_parent(0, fanout) == -1);
      for (int r = 1; r < P; ++r) {
        CHECK(parent_of[r] == barrier_parent(r, fanout));
        CHECK(barrier_children(r, P, fanout).size() <= std::size_t(fanout));
      }
      for (int r = 0; r < P; ++r)
        for (int root = 0; root < P; ++root) {
          bool on_path = false;
          for (int a = r; a >= 0; a = barrier_parent(a, fanout)) on_path |= a == root;
          CHECK(in_subtree(r, root, fanout) == on_path);
        }
    }
  }
}

// A departure for v.me with no intervals, empty figures and flags off, then what `put` writes.
template <class Put>
std::vector<std::byte> departure_of(const BarrierView& v, Put put) {
  codec::Writer w;
  w.put<std::uint64_t>(v.epoch);
  encode_list(w, std::span<const Interval* const>{});
  w.put<std::uint32_t>(v.nprocs);
  for (std::uint32_t r = 0; r < v.nprocs; ++r) w.bytes({});
  w.put<std::uint8_t>(0);
  w.put<std::uint8_t>(0);
  put(w);
  return w.take();
}

TEST_CASE("a departure's pushes: whole pages, parts at their offsets, and malformed parts refused") {
  const BarrierView v{2, 10, 1, 3, 5};
  // A departure to rank 1 of a 2-rank job with the pushes `put` writes after its fixed fields.
  auto departure = [&](auto put) { return departure_of(v, put); };
  std::vector<std::byte> page(4096, std::byte{7}), row(300, std::byte{9});
  const Push whole{1, 0, 4, 2, true, page}, part{1, 0, 4, 3, true, row, 3796}, diff{1, 0, 4, 5, false, row};
  CHECK_FALSE(whole.part());
  CHECK(part.part());
  const std::vector<const Push*> all{&whole, &part, &diff};
  const auto msg = departure([&](codec::Writer& w) {
    put_pushes(w, all);
    put_direct(w, {});
  });
  const Departure d = decode_departure(msg, v, true);
  REQUIRE(d.pushes.size() == 3);
  CHECK((d.pushes[0].whole && !d.pushes[0].part() && d.pushes[0].data.size() == 4096));
  CHECK((d.pushes[1].part() && d.pushes[1].offset == 3796 && d.pushes[1].data.size() == 300 && d.pushes[1].page == 3));
  CHECK((!d.pushes[2].whole && d.pushes[2].data.size() == 300));
  // A part past the page's end, an empty part, a part as long as the page, a kind beyond 2.
  auto one = [&](std::uint8_t kind, std::uint16_t offset, std::size_t bytes) {
    return departure([&](codec::Writer& w) {
      w.put<std::uint32_t>(1);
      for (std::uint32_t x : {1u, 0u, 4u, 3u}) w.put(x);
      w.put(kind);
      if (kind == 2) w.put(offset);
      w.bytes(std::vector<std::byte>(bytes));
      put_direct(w, {});
    });
  };
  CHECK_NOTHROW(decode_departure(one(2, 4000, 96), v, true));
  CHECK_THROWS_AS(decode_departure(one(2, 4000, 97), v, true), codec::DecodeError);
  CHECK_THROWS_AS(decode_departure(one(2, 10, 0), v, true), codec::DecodeError);
  CHECK_THROWS_AS(decode_departure(one(2, 0, 4096), v, true), codec::DecodeError);
  CHECK_THROWS_AS(decode_departure(one(1, 0, 4095), v, true), codec::DecodeError);
  CHECK_THROWS_AS(decode_departure(one(3, 0, 4096), v, true), codec::DecodeError);
}

TEST_CASE("direct pushes: named by departures for their readers, decoded only as the writer's changes to this rank") {
  // Rank 1 of a 3-rank job, in barrier 5.
  const BarrierView v{3, 10, 1, 3, 5};
  auto departure = [&](std::vector<DirectPush> direct) {
    return departure_of(v, [&](codec::Writer& w) {
      put_pushes(w, {});
      put_direct(w, direct);
    });
  };
  const Departure d = decode_departure(departure({{0, 1}, {2, 1}}), v, true);
  REQUIRE(d.direct.size() == 2);
  CHECK((d.direct[0].writer == 0 && d.direct[1].writer == 2 && d.direct[1].reader == 1));
  CHECK_THROWS_AS(decode_departure(departure({{0, 2}}), v, true), codec::DecodeError);  // not to this rank
  CHECK_THROWS_AS(decode_departure(departure({{1, 1}}), v, true), codec::DecodeError);  // to its writer
  CHECK_THROWS_AS(decode_departure(departure({{3, 1}}), v, true), codec::DecodeError);  // no such rank

  std::vector<std::byte> page(4096, std::byte{7});
  auto message = [&](std::uint64_t epoch, std::vector<Push> pushes) {
    codec::Writer w;
    w.put(epoch);
    std::vector<const Push*> ptrs;
    for (const Push& p : pushes) ptrs.push_back(&p);
    put_pushes(w, ptrs);
    return w.take();
  };
  const Push mine{1, 2, 4, 6, true, page};
  const auto got = decode_direct_pushes(message(5, {mine}), 2, v);
  REQUIRE(got.size() == 1);
  CHECK((got[0].proc == 2 && got[0].page == 6 && got[0].whole && got[0].data.size() == 4096));
  CHECK_THROWS_AS(decode_direct_pushes(message(4, {mine}), 2, v), codec::DecodeError);  // another barrier
  CHECK_THROWS_AS(decode_direct_pushes(message(5, {mine}), 0, v), codec::DecodeError);  // not its sender's
  const Push elsewhere{0, 2, 4, 6, true, page};
  CHECK_THROWS_AS(decode_direct_pushes(message(5, {elsewhere}), 2, v), codec::DecodeError);  // for another reader
}
