#include "sim.hpp"

#include "decide.hpp"

#include <algorithm>
#include <deque>
#include <queue>
#include <random>
#include <stdexcept>

namespace dsm::lb {
namespace {

// Work (seconds at full speed) of iterations [b, e).
double work_of(const SimConfig& c, long b, long e) {
  if (!c.triangular) return c.iteration_seconds * static_cast<double>(e - b);
  const double n = static_cast<double>(c.iterations);
  auto tri = [](double k) { return k * (k - 1) / 2; };
  return c.iteration_seconds * 2 / n * (tri(static_cast<double>(e)) - tri(static_cast<double>(b)));
}

// CPU share of every rank in execution `e`.
class LoadModel {
 public:
  explicit LoadModel(const SimConfig& c) : c_(c), rng_(c.seed), on_(c.ranks, false), phase_(c.ranks, 0) {
    const int loaded = c.load == Load::none ? 0 : std::max(1, static_cast<int>(c.ranks * c.loaded_fraction));
    loaded_.assign(c.ranks, false);
    for (int r = 0; r < loaded; ++r) loaded_[static_cast<std::size_t>(r) * c.ranks / loaded] = true;
    std::uniform_int_distribution<int> ph(0, std::max(1, c.period) - 1);
    for (int r = 0; r < c.ranks; ++r) {
      phase_[r] = ph(rng_);
      on_[r] = loaded_[r];
    }
  }
  std::vector<double> shares(int e) {
    std::vector<double> s(c_.ranks, 1.0);
    std::bernoulli_distribution flip(2.0 / std::max(2, c_.period));
    for (int r = 0; r < c_.ranks; ++r) {
      if (!loaded_[r]) continue;
      if (c_.load == Load::onoff) on_[r] = (e + phase_[r]) % std::max(2, c_.period) < c_.period / 2;
      if (c_.load == Load::random && flip(rng_)) on_[r] = !on_[r];
      if (on_[r]) s[r] = c_.load_share;
    }
    return s;
  }

 private:
  const SimConfig& c_;
  std::mt19937_64 rng_;
  std::vector<bool> loaded_, on_;
  std::vector<int> phase_;
};

// Iterations of one page of the written array: chunks are cut at multiples of it.
long page_iterations(const SimConfig& c) { return std::max(1L, page_bytes / c.row_bytes); }

// Pages rank r fetches to run span s: those another rank wrote last, and those at its edges
// that a neighbour's iterations write too (a diff every execution).
long fetched_pages(const SimConfig& c, const Geometry& g, const Span& s, int r) {
  const std::vector<int>& holders = g.sections[0].holders;
  long fetched = g.shared_at(s.begin, c.iterations) + g.shared_at(s.end, c.iterations);
  const PageRange pr{g.pages(0, s.begin).first, g.pages(0, s.end - 1).last};
  for (long p = pr.first; p <= pr.last; ++p) fetched += holders[static_cast<std::size_t>(p)] >= 0 && holders[static_cast<std::size_t>(p)] != r;
  return fetched;
}

// The first iteration from which [k, e) holds about `w` seconds of work (at full speed).
long cut_leaving(const SimConfig& c, long b, long e, double w) {
  long lo = b, hi = e;
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (work_of(c, mid, e) > w) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Iterations not yet started, at a rank's seconds per second of work.
struct Piece {
  Span s;
  double per_work;
};

// Seconds of `pieces` at their ranks' pace.
double seconds_of(const SimConfig& c, const std::deque<Piece>& pieces) {
  double t = 0;
  for (const Piece& p : pieces) t += p.per_work * work_of(c, p.s.begin, p.s.end);
  return t;
}

}  // namespace

Geometry sim_geometry(const SimConfig& c) {
  Geometry g;
  WriteSection w;
  w.base = 0;
  w.elem = 1;
  w.coef = c.row_bytes;
  w.lo = 0;
  w.hi = c.row_bytes - 1;
  w.holders.assign(static_cast<std::size_t>((c.iterations * c.row_bytes + page_bytes - 1) / page_bytes), -1);
  g.sections.push_back(std::move(w));
  return g;
}

ExecutionRun run_execution(const SimConfig& c, const Geometry& g, const Assignment& a,
                           const std::vector<double>& share, const std::vector<std::vector<double>>& span_seconds) {
  const auto nranks = a.size();
  ExecutionRun run;
  run.ran.resize(nranks);
  run.ran_seconds.resize(nranks);
  std::vector<std::deque<Piece>> queue(nranks);
  std::vector<long> chunk(nranks);
  const long page_it = page_iterations(c);
  // Pages a taker fetches per second of work it takes (the written array's, at the mean cost).
  const double pages_per_work = static_cast<double>(c.row_bytes) / page_bytes /
                                (work_of(c, 0, c.iterations) / static_cast<double>(c.iterations));
  for (std::size_t r = 0; r < nranks; ++r) {
    long block = 0;
    for (std::size_t i = 0; i < a[r].size(); ++i) {
      const Span& s = a[r][i];
      const double w = work_of(c, s.begin, s.end);
      queue[r].push_back({s, w > 0 ? span_seconds[r][i] / w : 0});
      block += s.size();
    }
    // Without taking a rank runs its spans whole: nothing is taken from it mid-way.
    chunk[r] = c.take ? std::max(page_it, (block / own_chunks + page_it - 1) / page_it * page_it) : block;
  }
  // Ranks in the order their present chunk ends (ties by rank, so runs repeat exactly).
  using Event = std::pair<double, std::size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<double> busy_until(nranks, 0);
  for (std::size_t r = 0; r < nranks; ++r) events.push({0, r});
  while (!events.empty()) {
    const auto [t, r] = events.top();
    events.pop();
    if (!queue[r].empty()) {
      Piece& f = queue[r].front();
      const Span ch{f.s.begin, std::min(f.s.end, f.s.begin + std::max(chunk[r], 1L))};
      busy_until[r] = t + f.per_work * work_of(c, ch.begin, ch.end);
      f.s.begin = ch.end;
      if (f.s.begin == f.s.end) queue[r].pop_front();
      run.ran[r].push_back(ch);
      run.ran_seconds[r].push_back(busy_until[r] - t);
      events.push({busy_until[r], r});
      continue;
    }
    run.seconds = std::max(run.seconds, t);
    if (!c.take) continue;
    // The victim: the rank that would finish last.
    std::size_t v = nranks;
    double v_end = t;
    for (std::size_t k = 0; k < nranks; ++k) {
      if (k == r || queue[k].empty()) continue;
      const double end = busy_until[k] + seconds_of(c, queue[k]);
      if (end > v_end) v = k, v_end = end;
    }
    if (v == nranks) continue;
    // From the tail of what it has not started, as much as makes both end together, at the
    // taker's pace (its share, and a page fetched for every page it writes).
    std::deque<Piece>& vq = queue[v];
    double left = 0;
    for (const Piece& p : vq) left += work_of(c, p.s.begin, p.s.end);
    const double victim_per_work = (v_end - busy_until[v]) / left;
    const double taker_per_work = 1 / share[r] + c.page_seconds * pages_per_work;
    const double keep = std::clamp((t + c.take_seconds + left * taker_per_work - busy_until[v]) / (victim_per_work + taker_per_work), 0.0, left);
    // Whole pieces from the back, then the tail of the next one, cut at a page boundary.
    std::vector<Span> taken;
    double to_take = left - keep;
    for (auto p = vq.rbegin(); p != vq.rend() && to_take > 0; ++p) {
      const double w = work_of(c, p->s.begin, p->s.end);
      long cut = p->s.begin;
      if (w > to_take) {
        cut = cut_leaving(c, p->s.begin, p->s.end, to_take);
        cut = std::max(p->s.begin + page_it, (cut + page_it - 1) / page_it * page_it);
        cut = std::min(p->s.end, cut);
      }
      if (cut < p->s.end) taken.push_back({cut, p->s.end});
      to_take -= w;
    }
    if (taken.empty()) continue;
    double w = 0, own_seconds = 0;
    for (const Span& s : taken) {
      w += work_of(c, s.begin, s.end);
      own_seconds += work_of(c, s.begin, s.end) / share[r] + c.page_seconds * static_cast<double>(fetched_pages(c, g, s, static_cast<int>(r)));
    }
    // Only a take that ends sooner than the victim would.
    if (t + c.take_seconds + own_seconds >= v_end) continue;
    for (const Span& s : taken) {
      vq.back().s.end = s.begin;
      if (vq.back().s.begin == vq.back().s.end) vq.pop_back();
      run.iterations_taken += s.size();
    }
    // Run in index order, at the taker's pace.
    for (auto s = taken.rbegin(); s != taken.rend(); ++s) queue[r].push_back({*s, own_seconds / w});
    ++run.takes;
    busy_until[r] = t + c.take_seconds;
    events.push({busy_until[r], r});
  }
  return run;
}

namespace {

// What each rank ran, its chunks merged into spans, and `figs` made the figures of those
// spans: with work taken, what ran becomes the split.
Assignment ran_spans(const ExecutionRun& run, const std::vector<double>& share, std::vector<RankFigures>& figs) {
  Assignment ran(run.ran.size());
  for (std::size_t k = 0; k < run.ran.size(); ++k) {
    std::vector<std::pair<Span, double>> pieces;
    for (std::size_t i = 0; i < run.ran[k].size(); ++i) pieces.emplace_back(run.ran[k][i], run.ran_seconds[k][i]);
    std::sort(pieces.begin(), pieces.end(), [](const auto& x, const auto& y) { return x.first.begin < y.first.begin; });
    figs[k].wall.clear();
    figs[k].cpu.clear();
    for (const auto& [s, secs] : pieces) {
      const bool joins = !ran[k].empty() && ran[k].back().end == s.begin;
      if (joins) ran[k].back().end = s.end;
      else ran[k].push_back(s), figs[k].wall.push_back(0), figs[k].cpu.push_back(0);
      figs[k].wall.back() += secs;
      figs[k].cpu.back() += secs * share[k];
    }
  }
  return ran;
}

}  // namespace

Load parse_load(const std::string& name) {
  if (name == "none") return Load::none;
  if (name == "constant") return Load::constant;
  if (name == "onoff") return Load::onoff;
  if (name == "random") return Load::random;
  throw std::invalid_argument("unknown load '" + name + "' (none|constant|onoff|random)");
}

SimResult simulate(const SimConfig& c, Policy policy) {
  SiteModel m;
  m.opt = c.options;
  m.opt.policy = resolve_policy(policy, true, false);
  Geometry g = sim_geometry(c);
  LoadModel load(c);
  std::mt19937_64 rng(c.seed * 7919 + 1);
  std::uniform_real_distribution<double> noise(1 - c.noise, 1 + c.noise);
  std::vector<RankFigures> figs;
  double ideal = 0, actual = 0;
  long takes = 0, taken = 0;
  for (int e = 0; e < c.executions; ++e) {
    const Assignment& a = next_execution(m, c.iterations, c.ranks, e ? &figs : nullptr, g, c.page_seconds);
    const std::vector<double> share = load.shares(e);
    std::vector<int>& holders = g.sections[0].holders;
    figs.assign(c.ranks, {});
    std::vector<std::vector<double>> span_seconds(static_cast<std::size_t>(c.ranks));
    double total_share = 0;
    for (int r = 0; r < c.ranks; ++r) {
      total_share += share[r];
      for (const Span& s : a[r]) {
        const double cpu = work_of(c, s.begin, s.end) * noise(rng);
        const double wall = cpu / share[r] + c.page_seconds * static_cast<double>(fetched_pages(c, g, s, r));
        figs[r].wall.push_back(wall);
        figs[r].cpu.push_back(cpu);
        span_seconds[static_cast<std::size_t>(r)].push_back(wall);
      }
      // Exact, where the runtime's measurement (detail::watch_core) needs another program's
      // use of the core above a noise floor over 0.1 s windows.
      figs[r].core_shared = share[r] < 1;
      figs[r].share = share[r];
    }
    const ExecutionRun run = run_execution(c, g, a, share, span_seconds);
    takes += run.takes;
    taken += run.iterations_taken;
    if (run.takes > 0) adopt_ran(m, ran_spans(run, share, figs));
    for (int r = 0; r < c.ranks; ++r)
      for (const Span& s : run.ran[static_cast<std::size_t>(r)])
        std::fill(holders.begin() + g.pages(0, s.begin).first, holders.begin() + g.pages(0, s.end - 1).last + 1, r);
    ideal += work_of(c, 0, c.iterations) / total_share;
    actual += run.seconds;
  }
  return {ideal / actual, m.redistributions, m.iterations_moved, m.pages_moved, takes, taken};
}

}  // namespace dsm::lb
