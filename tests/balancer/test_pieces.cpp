// The pieces under the policies: rate filter, page geometry, figures blob, options.
#include <catch2/catch.hpp>

#include "blob.hpp"
#include "filter.hpp"
#include "pages.hpp"

#include <dsm/balancer.hpp>

#include <climits>
#include <cmath>
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

using namespace dsm::lb;

TEST_CASE("the rate filter trusts a slowdown sooner than a speed-up") {
  RateFilter down, up;
  filter_rate(down, 100, true);
  filter_rate(up, 100, true);
  const double after_down = filter_rate(down, 50, true);
  const double after_up = filter_rate(up, 150, true);
  CHECK(100 - after_down > after_up - 100);
  CHECK(after_down == Approx(65));  // h = 0.3 from the constant state
  RateFilter off;
  filter_rate(off, 100, false);
  CHECK(filter_rate(off, 50, false) == 50);
}

TEST_CASE("a strided section: its blocks from the lowest, its hull, nothing when it has no block") {
  static double a[100][64];
  const Section up = strided(&a[0][0], Access::read, 1, 3, 4, 64, 10);  // columns 3-4 of rows 0-9
  CHECK(up.stride == 64);
  CHECK(up.blocks == 10);
  CHECK(up.lo == 3);
  CHECK(up.hi == 9 * 64 + 4);  // the hull ends in the last block
  const Section down = strided(&a[0][0], Access::read, 1, 9 * 64 + 3, 9 * 64 + 4, -64, 10);  // rows 9 down to 0
  CHECK(down.stride == up.stride);
  CHECK(down.blocks == up.blocks);
  CHECK(down.lo == up.lo);
  CHECK(down.hi == up.hi);
  const Section none = strided(&a[0][0], Access::write, 1, 3, 4, 64, 0);
  CHECK(none.hi < none.lo);
  const Section same = strided(&a[0][0], Access::write, 1, 3, 4, 0, 5);  // five times the same block
  CHECK(same.blocks == 1);
  CHECK(same.hi == 4);
}

TEST_CASE("page geometry of rows") {
  Geometry g;
  g.sections.push_back(WriteSection{0, 4, 1024, 0, 1023, 0, {}});  // one page per row
  CHECK(g.pages(0, 3).first == 3);
  CHECK(g.pages(0, 3).last == 3);
  CHECK(g.shared_at(5, 10) == 0);
  Geometry half;
  half.sections.push_back(WriteSection{0, 4, 512, 0, 511, 0, {}});  // two rows per page
  CHECK(half.shared_at(1, 10) == 1);
  CHECK(half.shared_at(2, 10) == 0);
  const Assignment a{{{0, 3}}, {{3, 10}}};
  CHECK(shared_pages(IterationPages(half, 10), a) == 1);
  CHECK(pages_moved(IterationPages(half, 10), Assignment{{{0, 4}}, {{4, 10}}}, Assignment{{{0, 6}}, {{6, 10}}}) == 1);
  CHECK(owners(a, 10)[3] == 1);
}

TEST_CASE("page counts per rank: each page for both ranks it passes between") {
  Geometry g;
  g.sections.push_back(WriteSection{0, 4, 1024, 0, 1023, 0, {}});  // one page per row
  const Assignment from{{{0, 10}}, {{10, 20}}, {{20, 30}}, {{30, 40}}};
  const Assignment to{{{0, 12}}, {{12, 20}}, {{20, 29}}, {{29, 40}}};
  CHECK(pages_moved(IterationPages(g, 40), from, to) == 3);
  CHECK(pages_moved_by_rank(IterationPages(g, 40), from, to) == std::vector<long>{2, 2, 1, 1});
  Geometry half;
  half.sections.push_back(WriteSection{0, 4, 512, 0, 511, 0, {}});  // two rows per page
  const Assignment odd{{{0, 3}}, {{3, 7}}, {{7, 10}}};
  CHECK(shared_pages(IterationPages(half, 10), odd) == 2);
  CHECK(page_traffic_by_rank(IterationPages(half, 10), odd, false) == std::vector<long>{1, 2, 1});
  half.sections[0].holders = {2, 2, -1, -1, -1};  // rows 0-3 last written by rank 2
  CHECK(conflicts(IterationPages(half, 10), odd) == 2);
  CHECK(page_traffic_by_rank(IterationPages(half, 10), odd, true) == std::vector<long>{3, 2, 3});
}

namespace {

// The page counts by their definition, one iteration at a time: what IterationPages' pieces
// must reproduce.
struct Reference {
  std::vector<long> fresh, shared;
  std::vector<int> holder;
  Reference(const Geometry& g, long n) : fresh(n, 0), shared(n + 1, 0), holder(n) {
    for (std::size_t s = 0; s < g.sections.size(); ++s) {
      bool seen = false;
      PageRange f{1, 0};
      for (long k = 0; k < n; ++k) {
        const PageRange r = g.pages(s, k);
        if (r.first > r.last) continue;
        long count = r.last - r.first + 1;
        if (seen) count -= std::max(0L, std::min(r.last, f.last) - std::max(r.first, f.first) + 1);
        f = seen ? PageRange{std::min(f.first, r.first), std::max(f.last, r.last)} : r;
        seen = true;
        fresh[k] += std::max(0L, count);
      }
    }
    for (long k = 0; k < n; ++k) holder[k] = g.holder(k), shared[k] = g.shared_at(k, n);
  }
};

void add(std::vector<long>& count, int rank, long pages) {
  if (rank >= 0 && rank < static_cast<int>(count.size())) count[rank] += pages;
}

}  // namespace

TEST_CASE("page counts by pieces equal the counts iteration by iteration") {
  std::mt19937 rng(7);
  const auto pick = [&](long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const long n = pick(1, 3000);
    Geometry g;
    g.lb = pick(-5, 5);
    g.step = pick(1, 3);
    const long sections = pick(1, 3);
    for (long s = 0; s < sections; ++s) {
      WriteSection w;
      w.elem = std::array<long, 5>{1, 4, 8, 24, 4096}[pick(0, 4)];
      w.coef = pick(-3, 3);
      w.lo = pick(-2, 2);
      w.hi = w.lo + pick(-1, 40);  // hi < lo: the section writes nothing
      w.base = (1L << 30) + 4096 * pick(0, 64) + pick(0, 4095) * (pick(0, 1) ? 1 : 0);
      g.sections.push_back(w);
      const PageRange hull = g.hull(g.sections.size() - 1, n);
      g.sections.back().holder_origin = hull.first;
      // Runs of writers, some pages unknown.
      for (long p = hull.first; p <= hull.last;) {
        const long run = pick(1, 30);
        const int who = static_cast<int>(pick(-1, 3));
        for (long q = 0; q < run && p <= hull.last; ++q, ++p) g.sections.back().holders.push_back(who);
      }
    }
    const int ranks = static_cast<int>(pick(1, 4));
    const auto random_assignment = [&] {
      Assignment a(ranks);
      for (long at = pick(0, 3); at < n;) {
        const long end = std::min(n, at + pick(1, n / 3 + 1));
        a[pick(0, ranks - 1)].push_back({at, end});
        at = end + (pick(0, 4) == 0 ? pick(1, 5) : 0);  // now and then iterations nobody runs
      }
      for (auto& spans : a) normalize(spans);
      return a;
    };
    const Assignment from = random_assignment(), to = random_assignment();
    const IterationPages t(g, n);
    const Reference ref(g, n);
    const std::vector<int> x = owners(from, n), y = owners(to, n);
    long moved = 0, changed = 0, conflicts_ref = 0, shared_ref = 0;
    std::vector<long> moved_by(ranks, 0), traffic(ranks, 0);
    for (long k = 0; k < n; ++k) {
      if (x[k] != y[k]) moved += ref.fresh[k], ++changed, add(moved_by, x[k], ref.fresh[k]), add(moved_by, y[k], ref.fresh[k]);
      if (k > 0 && x[k] != x[k - 1])
        shared_ref += ref.shared[k], add(traffic, x[k - 1], ref.shared[k]), add(traffic, x[k], ref.shared[k]);
    }
    std::vector<long> traffic_recurring = traffic;
    for (long k = 0; k < n; ++k)
      if (ref.holder[k] >= 0 && ref.holder[k] != x[k])
        conflicts_ref += ref.fresh[k], add(traffic_recurring, ref.holder[k], ref.fresh[k]),
            add(traffic_recurring, x[k], ref.fresh[k]);
    INFO("trial " << trial << ", n " << n << ", " << sections << " sections, " << t.pieces() << " pieces");
    long before = 0;
    for (long k = 0; k <= n; ++k) {
      REQUIRE(t.fresh_before(k) == before);
      REQUIRE(t.shared_at(k) == ref.shared[k]);
      if (k < n) before += ref.fresh[k];
    }
    CHECK(pages_moved(t, from, to) == moved);
    CHECK(iterations_moved(from, to, n) == changed);
    CHECK(pages_moved_by_rank(t, from, to) == moved_by);
    CHECK(shared_pages(t, from) == shared_ref);
    CHECK(conflicts(t, from) == conflicts_ref);
    CHECK(page_traffic_by_rank(t, from, false) == traffic);
    CHECK(page_traffic_by_rank(t, from, true) == traffic_recurring);
    long held = 0;
    for (const auto& h : t.held()) {
      for (long k = h.begin; k < h.end; ++k) REQUIRE(ref.holder[k] == h.holder);
      held += h.end - h.begin;
    }
    CHECK(held == n);
  }
}

TEST_CASE("figures survive the blob and malformed blobs are refused") {
  Published in{3e-6, {{site_id("a.cpp:1"), 7, {{0.5, 0.25}, {0.4, 0.2}, 2e-3, false, 1.5e-3, {{0, 10}, {12, 20}}}},
                   {site_id("b.cpp:2"), 1, {{}, {}, 0, true, 0, {}, 0.45}}},
               {std::byte{1}, std::byte{2}, std::byte{3}},
               8e-5};
  const auto blob = encode_figures(in);
  const auto decoded = decode_figures(blob);
  REQUIRE(decoded);
  // Times travel as floats: every rank decides on these same values.
  const auto as_sent = [](double t) { return static_cast<double>(static_cast<float>(t)); };
  CHECK(decoded->page_seconds == as_sent(3e-6));
  CHECK(decoded->shared_seconds == as_sent(8e-5));
  CHECK(decoded->reduction == in.reduction);
  const auto* out = &decoded->sites;
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].site == site_id("a.cpp:1"));
  CHECK((*out)[0].execution == 7);
  CHECK((*out)[0].figures.wall == std::vector<double>{0.5, 0.25});
  CHECK((*out)[0].figures.period == as_sent(2e-3));
  CHECK((*out)[0].figures.step_cpu == as_sent(1.5e-3));
  CHECK((*out)[0].figures.ran == std::vector<Span>{{0, 10}, {12, 20}});
  CHECK((*out)[1].figures.ran.empty());
  CHECK_FALSE((*out)[0].figures.core_shared);
  CHECK((*out)[1].figures.wall.empty());
  CHECK((*out)[1].figures.core_shared);
  CHECK((*out)[0].figures.share == 1);
  CHECK((*out)[1].figures.share == as_sent(0.45));
  for (std::size_t cut = 0; cut < blob.size(); ++cut)
    CHECK_FALSE(decode_figures(std::vector<std::byte>(blob.begin(), blob.begin() + cut)));
  auto bad = blob;
  bad[0] = std::byte{blob_version + 1};
  CHECK_FALSE(decode_figures(bad));
  auto not_a_flag = blob;
  not_a_flag[1 + 4 + 4 + 1 + 8 + 1 + 4] = std::byte{2};  // the first site's core_shared
  CHECK_FALSE(decode_figures(not_a_flag));
  auto trailing = blob;
  trailing.push_back(std::byte{0});
  CHECK_FALSE(decode_figures(trailing));
  // Counts and bounds are varints, each with one encoding: a redundant byte is refused.
  Published bounds{0, {{1, 300, {{}, {}, 0, false, 0}, -5, 1 << 20, 3}}};
  const auto varints = encode_figures(bounds);
  const auto back = decode_figures(varints);
  REQUIRE(back);
  CHECK(back->sites[0].execution == 300);
  CHECK(back->sites[0].lb == -5);
  CHECK(back->sites[0].ub == 1 << 20);
  CHECK(back->sites[0].step == 3);
  auto padded = encode_figures(Published{});
  padded.back() = std::byte{0x80};  // the reduction's size 0 as two bytes
  padded.push_back(std::byte{0});
  CHECK(decode_figures(encode_figures(Published{})));
  CHECK_FALSE(decode_figures(padded));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {{1, 1, {{NAN}, {0}}}}})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {{1, 1, {{0}, {0}, -1}}}})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {{1, 1, {{0}, {0}, 0, false, -1}}}})));
  CHECK_FALSE(decode_figures(encode_figures(Published{-1, {}})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {}, {}, -1})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {}, {}, NAN})));
  for (double share : {0.0, -0.5, 1.5, double(NAN)})  // a share of the core: in (0, 1]
    CHECK_FALSE(decode_figures(encode_figures(Published{0, {{1, 1, {{}, {}, 0, true, 0, {}, share}}}})));
  // Spans ran: one per figure, sorted, apart and not empty.
  const auto ran = [](std::vector<Span> spans) {
    const std::size_t n = spans.size();
    return encode_figures(Published{0, {{1, 1, {std::vector<double>(n), std::vector<double>(n), 0, false, 0, std::move(spans)}}}});
  };
  CHECK(decode_figures(ran({{0, 4}, {5, 9}})));
  CHECK_FALSE(decode_figures(ran({{5, 9}, {0, 4}})));
  CHECK_FALSE(decode_figures(ran({{0, 4}, {4, 9}})));
  CHECK_FALSE(decode_figures(ran({{3, 3}})));
  CHECK_FALSE(decode_figures(ran({{-2, 3}})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {{1, 1, {{0, 0}, {0, 0}, 0, false, 0, {{0, 4}}}}}})));
  CHECK(decode_figures(encode_figures(Published{0, {}, std::vector<std::byte>(max_reduction_bytes)})));
  CHECK_FALSE(decode_figures(encode_figures(Published{0, {}, std::vector<std::byte>(max_reduction_bytes + 1)})));
}

TEST_CASE("a time in the figures is 0 or one a clock measured") {
  const auto wall = [](double t) { return decode_figures(encode_figures(Published{0, {{1, 1, {{t}, {0}}}}})); };
  const auto cpu = [](double t) { return decode_figures(encode_figures(Published{0, {{1, 1, {{1e-3}, {t}}}}})); };
  const auto period = [](double t) { return decode_figures(encode_figures(Published{0, {{1, 1, {{}, {}, t}}}})); };
  const auto page = [](double t) { return decode_figures(encode_figures(Published{t, {}})); };
  for (const auto& decode : {+wall, +cpu, +period, +page}) {
    CHECK(decode(0));
    CHECK(decode(1e-9));  // a clock's tick
    CHECK(decode(1e-25));  // the rounding left by a difference of readings
    CHECK(decode(3600));
    // Rates of iterations per such a time overflow: a subnormal, the smallest normal number
    // (times travel as floats: a double below their range goes as 0, no measurement).
    CHECK_FALSE(decode(std::numeric_limits<float>::denorm_min()));
    CHECK_FALSE(decode(std::numeric_limits<float>::min()));
    CHECK_FALSE(decode(1e-31));
    CHECK_FALSE(decode(1e10));
    CHECK_FALSE(decode(-0.5));
    CHECK_FALSE(decode(std::numeric_limits<double>::infinity()));
  }
}

TEST_CASE("options from the environment, with errors naming the variable") {
  std::map<std::string, std::string> env;
  auto get = [&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  CHECK(options_from(get).policy == Policy::automatic);
  env = {{"DSM_LB", "fgdls"}, {"DSM_LB_WARMUP", "3"}, {"DSM_LB_THRESHOLD", "0.2"}};
  const Options o = options_from(get);
  CHECK(o.policy == Policy::fgdls);
  CHECK(o.warmup == 3);
  CHECK(o.threshold == 0.2);
  env = {{"DSM_LB", "fast"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB=fast"));
  env = {{"DSM_LB_WARMUP", "ten"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_WARMUP"));
  env = {{"DSM_LB_THRESHOLD", "-1"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_THRESHOLD"));
  env = {{"DSM_LB_LEAVE_SHARE", "0.5"}};
  CHECK(options_from(get).leave_share == 0.5);
  env = {{"DSM_LB_LEAVE_SHARE", "2"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_LEAVE_SHARE"));
  env = {{"DSM_LB_HEADROOM", "0.8"}};
  CHECK(options_from(get).headroom == 0.8);
  env = {{"DSM_LB_HEADROOM", "0"}};  // a rank would count on nothing of a shared core
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_HEADROOM"));
  env = {{"DSM_LB_HEADROOM", "1.5"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_HEADROOM"));
  env = {};
  CHECK(options_from(get).take == Options::Take::where_it_pays);
  env = {{"DSM_LB_TAKE", "0"}};
  CHECK(options_from(get).take == Options::Take::never);
  env = {{"DSM_LB_TAKE", "always"}};
  CHECK(options_from(get).take == Options::Take::always);
  env = {{"DSM_LB_TAKE", "yes"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_TAKE=yes") && Catch::Contains("always"));
  env = {};
  CHECK(options_from(get).evidence == 0.5);
  env = {{"DSM_LB_EVIDENCE", "0"}};  // act on imbalances of any length (the executions decide)
  CHECK(options_from(get).evidence == 0);
  env = {{"DSM_LB_EVIDENCE", "-0.1"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_EVIDENCE"));
  env = {{"DSM_LB_EVIDENCE", "soon"}};
  CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_EVIDENCE"));
  env = {};
  CHECK(options_from(get).shares.empty());
  env = {{"DSM_LB_SHARES", "3,1"}};  // weights, kept as shares of the work
  CHECK(options_from(get).shares == std::vector<double>{0.75, 0.25});
  env = {{"DSM_LB_SHARES", "1"}};
  CHECK(options_from(get).shares == std::vector<double>{1.0});
  for (const char* bad : {"", "1,", "1,0", "1,-2", "1;2", "a,b"}) {
    env = {{"DSM_LB_SHARES", bad}};
    CAPTURE(bad);
    CHECK_THROWS_WITH(options_from(get), Catch::Contains("DSM_LB_SHARES"));
  }
}

TEST_CASE("equal blocks and index ranges") {
  CHECK(equal_blocks(10, 3) == Assignment{{{0, 4}}, {{4, 7}}, {{7, 10}}});
  CHECK(equal_blocks(2, 3)[2].empty());
  CHECK(iteration_count(1, 10, 3) == 3);
  CHECK(iteration_count(5, 5, 1) == 0);
  CHECK_THROWS_AS(iteration_count(0, 5, 0), std::invalid_argument);
  const auto r = to_ranges({{1, 3}}, 1, 10, 3);
  CHECK(r[0].lb == 4);
  CHECK(r[0].ub == 10);
}

TEST_CASE("loops whose bounds or steps do not fit ub - lb or k * step in a long") {
  // Well-defined loops: for (i = LONG_MIN; i < 0; i += 2^62) runs LONG_MIN and -2^62.
  CHECK(iteration_count(LONG_MIN, 0, 1L << 62) == 2);
  CHECK(iteration_count(LONG_MIN, 1, 1L << 62) == 3);
  CHECK(iteration_count(-1, LONG_MAX, 1L << 40) == 1L << 23);
  CHECK(iteration_count(LONG_MIN, LONG_MAX, LONG_MAX) == 3);
  CHECK(iteration_count(0, LONG_MAX, 1) == LONG_MAX);
  CHECK_THROWS_WITH(iteration_count(LONG_MIN, 1, 1), Catch::Contains("more iterations than a long"));
  // Every iteration in exactly one range, the last range ending at ub.
  const long lb = LONG_MIN, ub = 1, step = 1L << 62;
  const std::vector<Range> parts = to_ranges({{0, 1}, {1, 3}}, lb, ub, step);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].lb == LONG_MIN);
  CHECK(parts[0].ub == -(1L << 62));
  CHECK(parts[1].lb == -(1L << 62));
  CHECK(parts[1].ub == ub);
  CHECK(iteration_at(lb, ub, step, 2) == 0);
  CHECK(iteration_at(-1, LONG_MAX, 1L << 40, 1L << 23) == LONG_MAX);  // past the end: ub
  CHECK(iteration_at(0, 10, 3, LONG_MAX) == 10);                       // k * step overflows: ub
}

TEST_CASE("the page writer memory keeps the last writer of every page") {
  WriterRuns w;
  record_writer(w, 0, 99, 0);
  record_writer(w, 50, 149, 1);
  record_writer(w, 60, 69, 2);
  const std::vector<int> got = writers_of(w, 48, 151);
  CHECK(got[0] == 0);    // 48
  CHECK(got[1] == 0);    // 49
  CHECK(got[2] == 1);    // 50
  CHECK(got[12] == 2);   // 60
  CHECK(got[21] == 2);   // 69
  CHECK(got[22] == 1);   // 70
  CHECK(got[101] == 1);  // 149
  CHECK(got[102] == -1); // 150
  CHECK(w.runs.size() == 4);
}

TEST_CASE("a follower loop's spans give each value to the rank that runs it in the leader") {
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    const int ranks = 1 + static_cast<int>(rng() % 4);
    const long leader_n = 1 + static_cast<long>(rng() % 300);
    // The leader's iterations cut into 1-12 spans dealt to random ranks.
    std::vector<long> cuts{0, leader_n};
    for (int c = static_cast<int>(rng() % 12); c > 0; --c) cuts.push_back(static_cast<long>(rng() % leader_n));
    std::sort(cuts.begin(), cuts.end());
    Assignment leader(static_cast<std::size_t>(ranks));
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
      if (cuts[i] < cuts[i + 1]) leader[rng() % ranks].push_back({cuts[i], cuts[i + 1]});
    for (auto& spans : leader) normalize(spans);
    const long leader_lb = static_cast<long>(rng() % 21) - 10, leader_step = 1 + static_cast<long>(rng() % 3);
    const long lb = static_cast<long>(rng() % 41) - 20, step = 1 + static_cast<long>(rng() % 3);
    const long n = static_cast<long>(rng() % 400);
    const Assignment got = follow_spans(leader, leader_lb, leader_step, leader_n, lb, step, n);
    // Reference: value by value, clamped to the leader's first and last iterations.
    const std::vector<int> own = owners(leader, leader_n);
    Assignment want(static_cast<std::size_t>(ranks));
    for (long k = 0; k < n; ++k) {
      const long offset = lb + k * step - leader_lb;
      const long kl = std::clamp(offset >= 0 ? offset / leader_step : -1, 0L, leader_n - 1);
      want[static_cast<std::size_t>(own[kl])].push_back({k, k + 1});
    }
    for (auto& spans : want) normalize(spans);
    INFO("round " << round);
    CHECK(got == want);
  }
  CHECK_THROWS_WITH(follow_spans(Assignment{{{0, 2}}, {{3, 5}}}, 0, 1, 5, 0, 1, 5), Catch::Contains("no rank"));
}
