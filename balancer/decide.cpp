#include "decide.hpp"

#include <algorithm>
#include <optional>
#include <cmath>
#include <numeric>
#include <utility>

namespace dsm::lb {
namespace {

// Piecewise-constant work per iteration over [0, n): uniform (one unit per iteration, the
// paper's model) or, for fgdls, the CPU time measured inside each span (Starr, "Feedback Guided Load Balancing in Distributed Memory Environments").
struct Profile {
  std::vector<long> start;   // piece p = [start[p], start[p+1]); start.back() == n
  std::vector<double> cum;   // work of [0, start[p])
  std::vector<double> density;

  double at(long k) const {
    const auto it = std::upper_bound(start.begin(), start.end() - 1, k);
    const std::size_t p = it == start.begin() ? 0 : static_cast<std::size_t>(it - start.begin()) - 1;
    return cum[p] + density[p] * static_cast<double>(std::clamp(k, start[p], start[p + 1]) - start[p]);
  }
  double total() const { return cum.back(); }
  double work(const std::vector<Span>& spans) const {
    double w = 0;
    for (const Span& s : spans) w += at(s.end) - at(s.begin);
    return w;
  }
  // Index whose cumulative work is nearest w.
  long inverse(double w) const {
    const auto it = std::upper_bound(cum.begin(), cum.end() - 1, w);
    const std::size_t p = it == cum.begin() ? 0 : static_cast<std::size_t>(it - cum.begin()) - 1;
    const double k = static_cast<double>(start[p]) + (w - cum[p]) / density[p];
    return std::clamp(std::lround(k), start[p], start[p + 1]);
  }
};

Profile make_profile(std::vector<std::pair<Span, double>> pieces, long n) {
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  Profile p;
  p.cum.push_back(0);
  for (const auto& [span, work] : pieces) {
    p.start.push_back(span.begin);
    p.density.push_back(work / static_cast<double>(span.size()));
    p.cum.push_back(p.cum.back() + work);
  }
  p.start.push_back(n);
  return p;
}

Profile uniform_profile(long n) { return make_profile({{Span{0, n}, static_cast<double>(n)}}, n); }

Profile cpu_profile(const SiteModel& m) {
  if (m.window == 0) return uniform_profile(m.n);
  std::vector<std::pair<Span, double>> pieces;
  double total = 0;
  for (std::size_t r = 0; r < m.assign.size(); ++r)
    for (std::size_t j = 0; j < m.assign[r].size(); ++j) total += m.span_cpu[r][j];
  // A span measured as free (clock resolution) still costs something: never a zero density.
  const double floor = std::max(total, 1e-9) * 1e-6 / static_cast<double>(m.n);
  for (std::size_t r = 0; r < m.assign.size(); ++r)
    for (std::size_t j = 0; j < m.assign[r].size(); ++j) {
      const Span s = m.assign[r][j];
      pieces.push_back({s, std::max(m.span_cpu[r][j] / m.window, floor * static_cast<double>(s.size()))});
    }
  return make_profile(std::move(pieces), m.n);
}

// Whether `pieces` cover [0, n) in order, each with some work.
bool covers(const std::vector<std::pair<Span, double>>& pieces, long n) {
  long at = 0;
  for (const auto& [span, work] : pieces) {
    if (span.begin != at || span.end <= span.begin || !(work > 0) || !std::isfinite(work)) return false;
    at = span.end;
  }
  return at == n && n > 0;
}

// The work of iterations as the runtime knows it (SiteModel::costs), one unit each without.
Profile known_profile(const SiteModel& m, long n) {
  return covers(m.costs, n) ? make_profile(m.costs, n) : uniform_profile(n);
}

Profile profile_of(const SiteModel& m) {
  return m.opt.policy == Policy::fgdls ? cpu_profile(m) : known_profile(m, m.n);
}

// Whether rank r has left the computation (SiteModel::left).
bool has_left(const SiteModel& m, std::size_t r) { return r < m.left.size() && m.left[r]; }

// A speed so small against the others' that a rank's share of any split rounds to nothing.
constexpr double left_speed = 1e-9;

// Speeds for the decision: ranks never measured (0) get the mean of the others; ranks that
// left the computation (`out`, empty: none) next to nothing.
std::vector<double> usable(std::vector<double> s, const std::vector<char>& out) {
  const auto is_out = [&](std::size_t r) { return r < out.size() && out[r]; };
  double sum = 0, fastest = 0;
  int count = 0;
  for (std::size_t r = 0; r < s.size(); ++r)
    if (s[r] > 0 && !is_out(r)) sum += s[r], ++count, fastest = std::max(fastest, s[r]);
  for (std::size_t r = 0; r < s.size(); ++r) {
    if (s[r] <= 0) s[r] = count ? sum / count : 1.0;
    if (is_out(r)) s[r] = left_speed * std::max(fastest, 1e-300);
  }
  return s;
}
std::vector<double> usable_speeds(const SiteModel& m) { return usable(m.speed, m.left); }

std::vector<double> normalized(std::vector<double> v) {
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  for (double& x : v) x /= sum;
  return v;
}

Assignment contiguous(const std::vector<long>& cuts) {
  Assignment a(cuts.size() - 1);
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r)
    if (cuts[r + 1] > cuts[r]) a[r].push_back({cuts[r], cuts[r + 1]});
  return a;
}

// Cuts giving rank r the share power[r] of the profile's work, ranks in order.
std::vector<long> balanced_cuts(const Profile& prof, const std::vector<double>& power, long n) {
  std::vector<long> cuts(power.size() + 1, 0);
  double target = 0;
  for (std::size_t r = 0; r + 1 < power.size(); ++r) {
    target += power[r] * prof.total();
    cuts[r + 1] = std::max(cuts[r], prof.inverse(target));
  }
  cuts.back() = n;
  return cuts;
}

// Appends `v` to `last`, which keeps the last `kept` values.
template <class T>
void keep_last(std::vector<T>& last, T v, std::size_t kept = kept_breaks) {
  last.push_back(v);
  if (last.size() > kept) last.erase(last.begin());
}

void record_break(SiteModel& m, long execution) { keep_last(m.breaks, execution); }

// Siegell's thesis (section 5.6.2): executions over which the saving of a change accrues, the time the
// system is expected to stay as it is. One that has stayed as it is for E executions (since
// the start or the last change) is expected to stay so about as long again, so count at
// least E executions; right after a change that is little: moving pages again then needs a
// large saving, which keeps noisy speeds from swinging the cuts back and forth. Where
// lasting imbalances have begun at a steady interval (a load that comes and goes), what is
// left of the present one is that interval less the executions since it began: a change that
// the load's next turn would undo before it paid for its pages is not made. An imbalance that
// has gone on for more than twice that interval says the pattern no longer holds (two
// breaks a few executions apart at the start of a run, while the load began to bite, had
// made a constant load look like one that turns every few executions, and no change ever
// seemed to pay): it is expected to go on as long as it has outlasted those two intervals.
double expected_stability(const SiteModel& m) {
  double stable = std::max<double>(m.opt.horizon, static_cast<double>(m.observed));
  if (m.breaks.size() >= 2) {
    const double interval =
        static_cast<double>(m.breaks.back() - m.breaks.front()) / static_cast<double>(m.breaks.size() - 1);
    const double since = static_cast<double>(m.executions - m.breaks.back());
    stable = std::min(stable, std::max(1.0, since > 2 * interval ? since - 2 * interval : interval - since));
  }
  return stable;
}

// Locality-conscious cuts (paper section 2.3, "Locality-conscious Load Balancing"): each cut
// moves from its balanced place to where the cost over the next `horizon` executions is
// least: imbalance, pages written by both neighbours (twins and diffs every execution),
// and the pages whose last writer is on the wrong side of the cut: once when they only
// move (at move_s, what a page of a change costs), every execution when another site keeps
// writing them (`recurring`).
void place_for_locality(std::vector<long>& cuts, const Profile& prof, const std::vector<double>& speed,
                        const IterationPages& t, double page_s, double move_s, double horizon, bool recurring) {
  const std::vector<long> balanced = cuts;
  for (std::size_t j = 1; j + 1 < cuts.size(); ++j) {
    const long lo = cuts[j - 1], hi = std::max(lo, balanced[j + 1]);
    const long b = std::clamp(balanced[j], lo, hi);
    const double at_b = prof.at(b);
    long best = b;
    double best_cost = INFINITY;
    // `wrong`: the one-time page cost of a cut at k relative to one at lo (the pages of
    // [lo, k) whose holder is on the right of cut j count for it, the others against it).
    const auto consider = [&](long k, long shared, double wrong) {
      const double moved = prof.at(k) - at_b;
      const double imbalance = std::abs(moved) / speed[moved > 0 ? j - 1 : j];
      const double cost = horizon * (imbalance + page_s * static_cast<double>(shared)) +
                          wrong * (recurring ? page_s * horizon : move_s);
      if (cost < best_cost - 1e-15) best_cost = cost, best = k;
    };
    // Within a piece only the imbalance changes from one cut to the next, so the cuts worth
    // costing are its first iteration and, after it, the one nearest the balanced cut.
    double wrong = 0;
    for (std::size_t p = lo < t.n ? t.piece_of(lo) : t.pieces(); p < t.pieces() && t.begin(p) <= hi; ++p) {
      const long first = std::max(t.begin(p), lo), last = std::min(t.end(p) - 1, hi);
      consider(first, t.shared_in(p, first), wrong);
      if (first == t.begin(p) && t.holder(p) >= 0)
        wrong += (t.holder(p) >= static_cast<int>(j) ? 1.0 : -1.0) * static_cast<double>(t.fresh(p));
      if (last > first) {
        const long k = std::clamp(b, first + 1, last);
        consider(k, t.shared_in(p, k), wrong);
      }
    }
    if (hi >= t.n) consider(t.n, 0, wrong);
    cuts[j] = best;
  }
}

// Moves only the surplus of ranks above their share, from the end of their spans, to the
// ranks below it (paper: "multiple loop bounds"). Ranks keep their other iterations.
Assignment move_surplus(const Assignment& cur, const Profile& prof, const std::vector<double>& power) {
  Assignment next = cur;
  std::vector<Span> pool;
  std::vector<double> deficit(cur.size(), 0);
  for (std::size_t r = 0; r < cur.size(); ++r) {
    double extra = prof.work(cur[r]) - power[r] * prof.total();
    deficit[r] = -extra;
    while (extra > 0 && !next[r].empty()) {
      Span& last = next[r].back();
      const double w = prof.at(last.end) - prof.at(last.begin);
      if (w <= extra) {
        pool.push_back(last);
        extra -= w;
        next[r].pop_back();
        continue;
      }
      const long cut = std::clamp(prof.inverse(prof.at(last.end) - extra), last.begin, last.end);
      if (cut < last.end) pool.push_back({cut, last.end});
      last.end = cut;
      extra = 0;
    }
  }
  std::sort(pool.begin(), pool.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  // The givers' cuts round too: the takers share what the pool really holds.
  double pooled = 0, wanted = 0;
  for (const Span& piece : pool) pooled += prof.at(piece.end) - prof.at(piece.begin);
  for (double d : deficit) wanted += std::max(d, 0.0);
  if (wanted > 0)
    for (double& d : deficit) d = d > 0 ? d * pooled / wanted : d;
  // Takers in rank order; a cut rounds to whole iterations, and what the rounding leaves
  // or overdraws goes on to the next taker, so that no rounding piles up on the last one.
  std::size_t taker = 0;
  auto skip_givers = [&] {
    while (taker + 1 < cur.size() && deficit[taker] <= 0) ++taker;
  };
  skip_givers();
  for (const Span& piece : pool) {
    Span rest = piece;
    while (rest.size() > 0) {
      const double w = prof.at(rest.end) - prof.at(rest.begin);
      long cut = rest.end;
      if (w > deficit[taker] && taker + 1 < cur.size())
        cut = std::clamp(prof.inverse(prof.at(rest.begin) + deficit[taker]), rest.begin, rest.end);
      if (cut > rest.begin) {
        next[taker].push_back({rest.begin, cut});
        deficit[taker] -= prof.at(cut) - prof.at(rest.begin);
        rest.begin = cut;
      }
      if (rest.size() > 0) {  // this taker is full
        const double left = deficit[taker];
        deficit[taker] = 0;
        ++taker;
        skip_givers();
        deficit[taker] += left;
      }
    }
  }
  for (auto& spans : next) normalize(spans);
  return next;
}

// Time of the slowest rank, counting the page traffic each rank pays every execution.
double execution_cost(const Assignment& a, const Profile& prof, const std::vector<double>& speed,
                      const IterationPages& t, double page_s, bool recurring) {
  const std::vector<long> pages = page_traffic_by_rank(t, a, recurring);
  double slowest = 0;
  for (std::size_t r = 0; r < a.size(); ++r)
    slowest = std::max(slowest, prof.work(a[r]) / speed[r] + page_s * static_cast<double>(pages[r]));
  return slowest;
}

// Locality: the cuts placed near the balanced ones.
Assignment place_locality(const SiteModel& m, const Profile& prof, const std::vector<double>& speed,
                          const std::vector<double>& power, const IterationPages& t, double page_s, double move_s,
                          bool recurring) {
  std::vector<long> cuts = balanced_cuts(prof, power, m.n);
  // Over as many executions as the cost/benefit check counts (m.horizon, set with the
  // proposal, each worth m.stretch of its time in ranges): a move the check would take is not
  // ruled out here by a shorter horizon. The stretch weighs every cost an execution pays again,
  // the pages its cut shares as much as its imbalance: weighed on the imbalance alone, cuts
  // went where they shared pages (Jacobi's rows at 1582 where 1536 starts a page), and the
  // twins of those pages cost a third of every execution.
  if (t.known) place_for_locality(cuts, prof, speed, t, page_s, move_s, m.horizon * m.stretch, recurring);
  return contiguous(cuts);
}

// All n iterations on rank `r` of `ranks`, none elsewhere.
Assignment whole_on(std::size_t r, long n, std::size_t ranks) {
  Assignment a(ranks);
  if (n > 0) a[r].push_back({0, n});
  return a;
}

// A loop that writes a few pages only (the periodic copy of one row) runs whole on the rank
// that holds most of them, as a hand-parallelized program gives it to the row's owner, when
// its total CPU time on that one rank costs less than a split: split, every rank writes
// those pages each execution (twins, diffs, a fetch from every writer). A question of where
// the pages are, not of the ranks' speeds: a loop that costs next to nothing has timings
// that are mostly noise, so it is answered from the first measured execution on, without
// waiting for an imbalance to last. Nothing when the loop writes more, or its pages have
// no holder.
std::optional<Assignment> whole_on_holder(const SiteModel& m, const Profile& prof, const std::vector<double>& speed,
                                          const Geometry& g, const IterationPages& t, double page_s) {
  if (m.opt.policy != Policy::locality || !g.known() || m.last_cpu.size() != m.assign.size()) return std::nullopt;
  long written = 0;
  for (std::size_t s = 0; s < g.sections.size(); ++s) {
    const PageRange h = g.hull(s, m.n);
    written += std::max(0L, h.last - h.first + 1);
  }
  if (written > 2 * static_cast<long>(m.assign.size() * g.sections.size())) return std::nullopt;
  std::vector<long> held(m.assign.size(), 0);  // iterations whose pages each rank holds
  for (const IterationPages::Held& h : t.held())
    if (h.holder >= 0 && h.holder < static_cast<int>(held.size())) held[h.holder] += h.end - h.begin;
  const auto owner = std::max_element(held.begin(), held.end()) - held.begin();
  if (held[owner] == 0) return std::nullopt;
  Assignment whole = whole_on(static_cast<std::size_t>(owner), m.n, m.assign.size());
  const double one_rank = std::accumulate(m.last_cpu.begin(), m.last_cpu.end(), 0.0) +
                          page_s * static_cast<double>(conflicts(t, whole));
  const Assignment split = contiguous(balanced_cuts(prof, normalized(speed), m.n));
  if (one_rank > execution_cost(split, prof, speed, t, page_s, true)) return std::nullopt;
  return whole;
}

Assignment propose(const SiteModel& m, const Profile& prof, const std::vector<double>& speed,
                   const IterationPages& t, double page_s, double move_s, bool recurring) {
  const std::vector<double> power = normalized(speed);
  switch (m.opt.policy) {
    case Policy::multi:
      return move_surplus(m.assign, prof, power);
    case Policy::locality:
      return place_locality(m, prof, speed, power, t, page_s, move_s, recurring);
    default:  // shift, fgdls (static never gets here)
      return contiguous(balanced_cuts(prof, power, m.n));
  }
}


// A fixed split (Options::shares): blocks at its shares, whatever the ranks measure.
bool fixed(const SiteModel& m) { return !m.opt.shares.empty(); }

// Cuts that move, within a 32nd of an equal block, to where the fewest written pages are
// shared (the nearest such place): what locality knows of `targets` (cuts at shares of the
// work) before any measurement of the pages. A page shared at a cut costs a twin and a diff
// an execution; a cut moved by a quarter of a block, as it once could, cost a quarter of the
// block's work: 3mm's product of 900 rows of 8800 bytes, whose nearest page-aligned cut is
// at row 512, ran 57 % of its rows on rank 0.
Assignment page_aligned_blocks(const Geometry& g, const std::vector<long>& targets, long n) {
  const int nranks = static_cast<int>(targets.size()) - 1;
  const long reach = n / (32L * nranks);
  std::vector<long> cuts(static_cast<std::size_t>(nranks) + 1, n);
  cuts[0] = 0;
  for (int j = 1; j < nranks; ++j) {
    const long b = targets[static_cast<std::size_t>(j)];
    long best = b;
    for (long d = 1; d <= reach && g.shared_at(best, n) > 0; ++d)
      for (long k : {b - d, b + d})
        if (k > cuts[j - 1] && k < n && g.shared_at(k, n) < g.shared_at(best, n)) best = k;
    cuts[j] = std::max(best, cuts[j - 1]);
  }
  return contiguous(cuts);
}

// Blocks of [0, n): at shares `power` of its work once the ranks are measured (nullptr:
// equal), page-aligned under locality. The work is the iterations' known costs, if any
// (never under static: equal blocks).
Assignment blocks(const SiteModel& m, long n, int nranks, const std::vector<double>* power, const Geometry& g) {
  if (fixed(m)) power = &m.opt.shares;
  const bool aligned = m.opt.policy == Policy::locality && g.known();
  const bool weighed = m.opt.policy != Policy::static_blocks && covers(m.costs, n);
  if ((!power && !aligned && !weighed) || n <= 0) return equal_blocks(n, nranks);
  std::vector<long> cuts(static_cast<std::size_t>(nranks) + 1, n);
  const std::vector<double> equal(static_cast<std::size_t>(nranks), 1.0 / nranks);
  if (power || weighed) cuts = balanced_cuts(known_profile(m, n), power ? *power : equal, n);
  else
    for (int j = 0; j < nranks; ++j) cuts[static_cast<std::size_t>(j)] = n * j / nranks;
  return aligned ? page_aligned_blocks(g, cuts, n) : contiguous(cuts);
}

void start(SiteModel& m, long n, int nranks, const Geometry& g) {
  m.n = n;
  if (m.new_costs) m.costs = std::move(*std::exchange(m.new_costs, std::nullopt));
  m.assign = blocks(m, n, nranks, nullptr, g);
  m.lb = g.lb, m.step = g.step;
  m.left.assign(nranks, 0);
  m.filters.assign(nranks, RateFilter{});
  m.speed.assign(nranks, 0.0);
  m.own_recent.assign(nranks, {});
  m.own_clock.assign(nranks, m.clock);
  m.turning = false;
  m.span_cpu.assign(nranks, {});
  m.window = 0;
  m.observed = 0;
  m.streak = 0;
  m.calm = true;
  m.short_rank = -1;
  m.skip = 1;
  m.declined.clear();
  m.change_estimate = 0;  // what changes cost stays a property of the site
}

void reset_window(SiteModel& m) {
  for (std::size_t r = 0; r < m.assign.size(); ++r) m.span_cpu[r].assign(m.assign[r].size(), 0.0);
  m.recent.assign(m.assign.size(), {});
  m.window = 0;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Records what the watched change cost: its first change_watch periods against the median
// of those after them; and, for a change against an imbalance with no known cause, what it
// saved: the periods before it against that median.
void finish_watch(SiteModel& m) {
  const double settled = median({m.after.begin() + change_watch, m.after.end()});
  double excess = 0;
  for (int e = 0; e < change_watch; ++e) excess += m.after[e] - settled;
  keep_last(m.change_costs, std::clamp(excess / m.change_estimate, 1.0, 64.0), kept_change_costs);
  if (m.saving_counted > 0) {
    keep_last(m.change_savings, std::pair{std::clamp((m.period_before - settled) / m.saving_counted, 0.0, 1.0), m.executions},
              kept_change_costs);
    m.undo = settled >= m.period_before;
  }
  m.change_estimate = 0;
  m.saving_counted = 0;
}

// `period`: the slowest rank's period carried by the figures, 0 if a rank sent none. Figures
// of execution E carry the period of E - 1; they arrive at the start of E + 1, so the period
// is of the execution two before the one starting now (m.executions).
void watch_change(SiteModel& m, double period) {
  if (!m.opt.learn_change_cost || m.change_estimate <= 0 || m.executions - 2 < m.change_at || period <= 0) return;
  m.after.push_back(period);
  if (m.after.size() == change_watch + rate_window) finish_watch(m);
}

void observe(SiteModel& m, const std::vector<RankFigures>& figs) {
  if (figs.size() != m.assign.size()) return;
  for (std::size_t r = 0; r < figs.size(); ++r)
    if (figs[r].wall.size() != m.assign[r].size() || figs[r].cpu.size() != m.assign[r].size()) return;
  m.last_wall.assign(figs.size(), 0);
  m.last_cpu.assign(figs.size(), 0);
  // A rank's core shared where it was not in the last figures, or the reverse: a turn.
  const bool seen = m.core_shared.size() == figs.size();
  if (!seen) m.core_shared.assign(figs.size(), 0);
  m.core_got.resize(figs.size());
  bool turned = false;
  double period = 0, slowest = 0;  // the slowest rank's period, and time in its ranges
  bool every_period = true;
  for (std::size_t r = 0; r < figs.size(); ++r) {
    m.last_wall[r] = std::accumulate(figs[r].wall.begin(), figs[r].wall.end(), 0.0);
    m.last_cpu[r] = std::accumulate(figs[r].cpu.begin(), figs[r].cpu.end(), 0.0);
    turned = turned || (seen && figs[r].core_shared != (m.core_shared[r] != 0));
    m.core_shared[r] = figs[r].core_shared;
    m.core_got[r] = figs[r].share;
    period = std::max(period, figs[r].period);
    every_period = every_period && figs[r].period > 0;
    slowest = std::max(slowest, m.last_wall[r]);
  }
  watch_change(m, every_period ? period : 0);
  m.clock += period > 0 ? period : slowest;
  if (turned) keep_last(m.turns, m.clock);
  if (m.skip > 0) {
    --m.skip;
    return;
  }
  if (every_period && slowest > 0) {
    m.stretches.emplace_back(period, slowest);
    if (m.stretches.size() > rate_window) m.stretches.erase(m.stretches.begin());
  }
  const Profile known = known_profile(m, m.n);
  for (std::size_t r = 0; r < figs.size(); ++r) {
    // Work done per second inside the ranges: iterations (paper Fig. 1), weighed by their
    // known costs if any, or, for fgdls, CPU seconds, whose ratio to wall time is the share
    // of the core the rank got.
    const double work = m.opt.policy == Policy::fgdls ? m.last_cpu[r] : known.work(m.assign[r]);
    if (work > 0 && m.last_wall[r] > 0) {
      auto& recent = m.recent[r];
      recent.emplace_back(work, m.last_wall[r]);
      if (recent.size() > rate_window) recent.erase(recent.begin());
      double sum_work = 0, sum_seconds = 0;
      for (auto [w, t] : recent) sum_work += w, sum_seconds += t;
      m.speed[r] = filter_rate(m.filters[r], sum_work / sum_seconds, m.opt.filter);
      // Its core its own: its thread ran all the time it spent in its ranges. (The figures'
      // core_shared comes from readings a tenth of a second apart, late for loads that turn
      // within a few tenths.)
      if (!figs[r].core_shared && m.last_cpu[r] >= own_cpu_share * m.last_wall[r]) {
        auto& own = m.own_recent[r];
        own.push_back(work / m.last_wall[r]);
        if (own.size() > own_window) own.erase(own.begin());
        m.own_clock[r] = m.clock;
      }
    }
    for (std::size_t j = 0; j < figs[r].cpu.size(); ++j) m.span_cpu[r][j] += figs[r].cpu[j];
  }
  ++m.window;
  ++m.observed;
}

// Pages the busiest rank moves in a change from `from` to `to`.
long busiest_pages(const IterationPages& t, const Assignment& from, const Assignment& to) {
  const std::vector<long> by_rank = pages_moved_by_rank(t, from, to);
  return by_rank.empty() ? 0 : *std::max_element(by_rank.begin(), by_rank.end());
}

// Starts timing a change whose pages were estimated to cost `estimate` seconds. The change
// watched before, if any, is judged by the settled periods it had (a few will do; changes
// that follow each other closely would otherwise never be measured).
void watch_from(SiteModel& m, double estimate) {
  if (m.change_estimate > 0 && m.after.size() >= change_watch + 3) finish_watch(m);
  m.change_estimate = estimate;
  m.change_at = m.executions;
  m.after.clear();
}

// `short_rank`: the rank the change gives less to make up for its slowness (-1: none);
// `counted`: the saving per period the change counts on, to be judged against what it
// brings (SiteModel::change_savings; 0: not judged).
void adopt(SiteModel& m, const IterationPages& t, Assignment next, double estimate, int short_rank, double counted = 0) {
  watch_from(m, estimate);
  m.saving_counted = 0;
  m.undo = false;
  m.replaced.clear();
  if (counted > 0 && m.stretches.size() >= rate_window / 2) {
    std::vector<double> periods;
    for (auto [p, ranges] : m.stretches) periods.push_back(p);
    m.saving_counted = counted;
    m.period_before = median(periods);
    m.replaced = m.assign;
    m.replaced_n = m.n;
  }
  m.solo.periods.clear();  // the split's periods are the new spans' from now on (watch_solo)
  m.solo.work.clear();
  m.iterations_moved += iterations_moved(m.assign, next, m.n);
  m.pages_moved += pages_moved(t, m.assign, next);
  ++m.redistributions;
  m.assign = std::move(next);
  m.observed = 0;
  m.streak = 0;
  m.calm = false;
  m.short_rank = short_rank;
  m.skip = 1;
  m.declined.clear();
  m.stretches.clear();
  reset_window(m);
}

// How much longer the site's periods run than its slowest rank's time in its ranges (at
// least 1, at most max_stretch; 1 before half a window of them).
double period_stretch(const SiteModel& m) {
  if (m.stretches.size() < rate_window / 2) return 1;
  std::vector<double> periods, times;
  for (auto [p, t] : m.stretches) periods.push_back(p), times.push_back(t);
  return std::clamp(median(periods) / median(times), 1.0, max_stretch);
}

const IterationPages& iteration_pages(SiteModel& m, const Geometry& g) {
  if (!m.pages || m.pages->second.n != m.n || m.pages->first != g) m.pages.emplace(g, IterationPages(g, m.n));
  return m.pages->second;
}

// The fastest and the slowest rank's time under `a` at `speed` (ranks out of the computation
// with nothing to run take no time), and the slowest rank.
struct Extremes {
  double fastest = INFINITY, slowest = 0;
  int slowest_rank = 0;
  bool beyond(double threshold) const { return slowest > (1 + threshold) * fastest; }
  bool imbalanced(const Options& o) const { return beyond(o.threshold); }
};
Extremes extremes(const SiteModel& m, const Profile& prof, const Assignment& a, const std::vector<double>& speed) {
  Extremes e;
  for (std::size_t r = 0; r < a.size(); ++r) {
    if (has_left(m, r) && a[r].empty()) continue;
    const double t = prof.work(a[r]) / speed[r];
    e.fastest = std::min(e.fastest, t);
    if (t > e.slowest) e.slowest = t, e.slowest_rank = static_cast<int>(r);
  }
  return e;
}

// Whether the last figures say another program shares rank r's core.
bool core_shared(const SiteModel& m, int r) {
  return static_cast<std::size_t>(r) < m.core_shared.size() && m.core_shared[static_cast<std::size_t>(r)];
}

// The solo watch (SiteModel::Solo): an execution's figures give the slowest rank's period and
// the work of every rank over it. Nothing where a rank sent no period, or none measured its
// work (a program whose ranks measure no CPU).
void watch_solo(SiteModel& m, const std::vector<RankFigures>& figs) {
  using Stage = SiteModel::Solo::Stage;
  double period = 0, work = 0;
  for (const RankFigures& f : figs) {
    // Another program's load is the split's to follow: with it, periods say nothing of what
    // the split itself costs.
    if (f.period <= 0 || f.core_shared) return;
    period = std::max(period, f.period);
    work += f.step_cpu;
  }
  SiteModel::Solo& s = m.solo;
  if (work <= 0 || s.stage == Stage::alone) return;
  if (s.stage == Stage::trying) {
    if (m.executions - s.since >= solo_lag) s.tried.push_back(period);
    return;
  }
  // The periods of a change's aftermath are not the split's: after Jacobi's rows moved back
  // with a load gone, its periods ran 4-5 ms for 12-17 executions where its work took 1.5 ms,
  // then 1 ms; taken for the split's, they put the loop on a trial that lost.
  if (m.executions - 2 < m.change_at + change_watch + static_cast<long>(rate_window)) return;
  s.periods.push_back(period);
  s.work.push_back(work);
  if (s.periods.size() > solo_window) {
    s.periods.erase(s.periods.begin());
    s.work.erase(s.work.begin());
  }
}

// The rank with the most iterations in `a` (the lowest of equals): its pages stay.
int busiest_rank(const Assignment& a) {
  std::size_t best = 0;
  long most = -1;
  for (std::size_t r = 0; r < a.size(); ++r) {
    long its = 0;
    for (const Span& sp : a[r]) its += sp.end - sp.begin;
    if (its > most) most = its, best = r;
  }
  return static_cast<int>(best);
}

// The rank a trial runs the loop on: where other loops run alone, else the busiest.
int solo_rank(const SiteModel& m, int nranks) {
  return m.solo.prefer >= 0 && m.solo.prefer < nranks ? m.solo.prefer : busiest_rank(m.assign);
}

// Whether what the split costs besides the work, over the executions it is expected to last,
// could pay for a trial's pages: the rank alone fetches every page the others write, and
// gives them back if it loses. At most the trial saves the period's excess over the work.
// Four ranks on two cores across hosts ran periods ten times their work, and each trial
// moved both of Jacobi's arrays to one rank and back, 1.3 GB in 1200 iterations.
bool trial_pays(SiteModel& m, int nranks, const Geometry& g, double page_s) {
  const IterationPages& t = iteration_pages(m, g);
  const Assignment whole = whole_on(static_cast<std::size_t>(solo_rank(m, nranks)), m.n, static_cast<std::size_t>(nranks));
  const double cost = 2 * page_s * change_cost_factor(m) * static_cast<double>(busiest_pages(t, m.assign, whole));
  return (median(m.solo.periods) - median(m.solo.work)) * expected_stability(m) >= cost;
}

// Where the solo trial stands for this execution of n iterations: true when it gave the
// spans (the loop runs on one rank, on trial or for good), false when the split decides.
// A loop goes on trial when the split's periods cost more than solo_ratio times all the
// ranks' work in them, no rank sharing its core with another program; it stays on one rank
// if that measured faster by solo_gain, and goes back to a split when it did not, when a load
// comes during the trial, or when one comes to that rank's core later.
bool solo(SiteModel& m, long n, int nranks, const Geometry& g, double page_s) {
  using Stage = SiteModel::Solo::Stage;
  SiteModel::Solo& s = m.solo;
  if (!m.opt.solo || m.opt.policy == Policy::static_blocks || fixed(m) || nranks < 2) return false;
  const auto run_alone = [&](Verdict v) {
    if (m.new_costs) m.costs = std::move(*std::exchange(m.new_costs, std::nullopt));
    m.n = n, m.lb = g.lb, m.step = g.step;
    Assignment whole = whole_on(static_cast<std::size_t>(s.rank), n, static_cast<std::size_t>(nranks));
    // The window's per-span sums follow the spans' shape (observe adds the figures' spans to
    // them).
    const bool reshaped = whole.size() != m.assign.size() ||
                          !std::equal(whole.begin(), whole.end(), m.assign.begin(),
                                      [](const std::vector<Span>& a, const std::vector<Span>& b) { return a.size() == b.size(); });
    m.assign = std::move(whole);
    if (reshaped) reset_window(m);
    m.verdict = v;
    return true;
  };
  const auto back_to_split = [&] {
    // From a trial, to the split it left at the speeds measured then, where the bounds are
    // the same; from a loop that ran alone for good, at the speeds measured since.
    const bool from_trial = s.stage == Stage::trying && s.speed.size() == m.speed.size() && s.filters.size() == m.filters.size();
    if (from_trial) {
      m.speed = std::move(s.speed);
      m.filters = std::move(s.filters);
    }
    Assignment split = std::move(s.split);
    s = {Stage::split, s.rank, s.prefer, m.executions, s.failures + 1, {}, {}, {}, {}, {}, {}};
    const std::vector<double> power = normalized(usable_speeds(m));
    const bool same_bounds = n == m.n && g.lb == m.lb && g.step == m.step;
    m.n = n, m.lb = g.lb, m.step = g.step;
    if (from_trial && same_bounds && split.size() == static_cast<std::size_t>(nranks)) m.assign = std::move(split);
    else m.assign = blocks(m, n, nranks, m.observed >= m.opt.warmup ? &power : nullptr, g);
    reset_window(m);
    m.skip = 1;
    ++m.redistributions;
    m.verdict = Verdict::changed;
    return true;
  };
  switch (s.stage) {
    case Stage::split:
      if (m.executions - s.since < solo_retry << std::min(s.failures - 1, 10)) return false;
      [[fallthrough]];
    case Stage::watching:
      if (m.observed < m.opt.warmup || s.periods.size() < solo_window || median(s.periods) <= solo_ratio * median(s.work))
        return false;
      if (!trial_pays(m, nranks, g, page_s)) return false;
      s.stage = Stage::trying;
      s.since = m.executions;
      s.tried.clear();
      s.rank = solo_rank(m, nranks);
      s.split = m.assign;
      s.speed = m.speed;
      s.filters = m.filters;
      ++m.redistributions;
      return run_alone(Verdict::trying);
    case Stage::trying: {
      if (std::find(m.core_shared.begin(), m.core_shared.end(), 1) != m.core_shared.end()) return back_to_split();
      const double split = median(s.periods);
      // A trial far slower than the split needs no more periods to be judged.
      const bool losing = !s.tried.empty() && s.tried.back() > solo_losing * split;
      if (!losing && s.tried.size() < solo_trial) return run_alone(Verdict::trying);
      if (losing || median(s.tried) >= solo_gain * split) return back_to_split();
      s.stage = Stage::alone;
      s.since = m.executions;
      return run_alone(Verdict::alone);
    }
    case Stage::alone:
      return core_shared(m, s.rank) ? back_to_split() : run_alone(Verdict::alone);
  }
  return false;
}

// Consecutive executions out of balance a change needs (`settle`; four times that after the
// first change: rates are means over overlapping windows, so consecutive ones are not
// independent evidence).
int persistence(const SiteModel& m) { return std::max(m.opt.settle, 1) * (m.redistributions == 0 ? 1 : 4); }

// Whether the present streak out of balance has lasted `evidence` seconds of the site's
// executions (or `executions` of them), which a known cause of the slowness does without.
bool lasted(const SiteModel& m, bool known_cause, int executions) {
  return known_cause || m.clock - m.streak_began >= m.opt.evidence || m.streak >= executions;
}

// Seconds an execution of the site took on average so far.
double mean_period(const SiteModel& m) { return m.executions > 0 ? m.clock / static_cast<double>(m.executions) : 0; }

// Seconds the balancer takes to follow a new state: the evidence, then the executions of the
// persistence and of a rate window of the new spans, at the site's mean period so far.
double reaction_seconds(const SiteModel& m) {
  return m.opt.evidence + static_cast<double>(persistence(m) + static_cast<int>(rate_window)) * mean_period(m);
}

// Whether another program comes and goes on the ranks' cores faster than changes follow it
// (SiteModel::turning): the figures said the last kept_breaks times that one began or ceased
// to share a rank's core each less than turning_reactions reactions after the one before,
// the last of them that recently, where changes have measured to cost more than
// turning_change_cost times their pages' estimate (where they cost what their pages say,
// following short turns pays: dsm-lbsim's modelled ranks). Imbalances are no measure of it:
// noise inside a turn of seconds began them close together, and equal blocks came back while
// the load was on. The site stays turning while no load comes (the split at the ranks' own
// speeds is the right one then too), until a rank has run that long without its core to
// itself: a load that stayed, followed again from a fresh count.
void update_turning(SiteModel& m) {
  if (m.turns.size() < kept_breaks) return;
  const double followed = turning_reactions * reaction_seconds(m);
  if (!m.turning) {
    bool short_turns = m.clock - m.turns.back() < followed;
    for (std::size_t k = 1; k < m.turns.size(); ++k)
      short_turns = short_turns && m.turns[k] - m.turns[k - 1] < followed;
    m.turning = short_turns && change_cost_factor(m) > turning_change_cost;
    if (m.turning) {  // it has turned since the first of those turns
      const double period = mean_period(m);
      m.turning_since = m.executions - (period > 0 ? std::lround((m.clock - m.turns.front()) / period) : 0);
    }
  } else if (m.clock - *std::min_element(m.own_clock.begin(), m.own_clock.end()) > followed) {
    m.turning = false;
    m.turns.clear();
    m.breaks.clear();  // the turns', which would hold the change back as soon undone
  }
}

// The ranks' speeds with their cores their own, where measured (else their present ones):
// the median rate, which a few executions slowed otherwise do not move. Taken only where a
// turning load needs it: a median of own_window rates at every execution cost loops of a few
// microseconds a tenth of their time.
std::vector<double> own_speeds(const SiteModel& m) {
  std::vector<double> s = m.speed;
  for (std::size_t r = 0; r < s.size(); ++r)
    if (r < m.own_recent.size() && !m.own_recent[r].empty()) s[r] = median(m.own_recent[r]);
  return usable(std::move(s), {});
}

// The spans for new bounds (a factorization's next step: most of the last step's rows again).
// Under locality every iteration value stays with the rank that ran it, and so its pages,
// until that split has been out of balance at the ranks' powers for as long as a change
// between executions of the same bounds needs (`settle` executions, four times that after
// the first change, and the evidence unless the slowest rank's core is another program's
// too). Cut afresh at the measured powers of every step, the rows at the cut went back and
// forth on the powers' noise: hundreds of pages a step in an LU factorization. A fresh cut
// is a redistribution.
Assignment new_bounds(SiteModel& m, long old_n, long n, int nranks, const std::vector<double>* power,
                      const Geometry& g) {
  const bool follows_values = m.opt.policy == Policy::locality && g.known() && old_n > 0 && n > 0 &&
                              m.step == g.step && static_cast<int>(m.assign.size()) == nranks;
  if (!follows_values) return blocks(m, n, nranks, power, g);
  Assignment kept = follow_spans(m.assign, m.lb, m.step, old_n, g.lb, g.step, n);
  const std::vector<double> equal(static_cast<std::size_t>(nranks), 1.0 / nranks);
  const Extremes e = extremes(m, known_profile(m, n), kept, power ? *power : equal);
  if (!e.imbalanced(m.opt)) {
    m.streak = 0;
    return kept;
  }
  if (++m.streak == 1) m.streak_began = m.clock;
  if (m.streak < persistence(m) || !lasted(m, core_shared(m, e.slowest_rank), evidence_executions)) return kept;
  m.streak = 0;
  Assignment fresh = blocks(m, n, nranks, power, g);
  if (fresh != kept) {
    m.iterations_moved += iterations_moved(kept, fresh, n);
    m.pages_moved += pages_moved(iteration_pages(m, g), kept, fresh);
    ++m.redistributions;
  }
  return fresh;
}

// Under a load that turns faster than changes follow it, the split that holds is the one at
// the ranks' own speeds (cores their own): a split chased after each turn runs most of the
// next one at the wrong powers and pays two changes' pages a turn, and a rank given little
// work on a shared core waits for its core after every barrier all the same. One change to
// it, judged over as long as the turning has lasted, and none while it lasts.
void keep_own_split(SiteModel& m, const Profile& prof, const IterationPages& t, double page_s, double each_s,
                    double move_s, bool recurring) {
  m.verdict = Verdict::turning;
  const std::vector<double> own = own_speeds(m);
  // Own speeds come from the executions a load spared, fewer and noisier than the present
  // rates: a change to them needs twice the threshold.
  if (!extremes(m, prof, m.assign, own).beyond(2 * m.opt.threshold)) return;
  m.horizon = std::max<double>(m.opt.horizon, static_cast<double>(m.executions - m.turning_since));
  m.stretch = 1;
  Assignment next = propose(m, prof, own, t, each_s, move_s, recurring);
  if (next == m.assign) return;
  const double saving = execution_cost(m.assign, prof, own, t, each_s, recurring) -
                        execution_cost(next, prof, own, t, each_s, recurring);
  const auto busiest = static_cast<double>(busiest_pages(t, m.assign, next));
  if (saving <= 0 || (m.opt.cost_benefit && move_s * busiest > saving * m.horizon)) return;
  adopt(m, t, std::move(next), page_s * busiest, -1);
  m.verdict = Verdict::changed;
}

void consider_change(SiteModel& m, const Geometry& g, double page_s, double shared_s) {
  m.verdict = Verdict::idle;
  if (m.opt.policy == Policy::static_blocks || fixed(m) || m.observed == 0 || m.n <= 0) return;
  // A rank whose core another program shares and that runs below opt.leave of the fastest
  // leaves: one that gets its core a time slice at a time holds every barrier up by one, more
  // than its share of the work is worth. It comes back at the speed it left with, which its
  // next measurements correct (the others' mean would overload a rank slow for other
  // reasons too).
  // Leaving pays for a load that lasts: under one that turns faster than changes follow it,
  // a rank out comes back, and none leaves.
  const bool turns = m.turning;
  bool back = false;
  if (turns) {
    back = std::find(m.left.begin(), m.left.end(), 1) != m.left.end();
    std::fill(m.left.begin(), m.left.end(), 0);
  } else {
    back = update_left(m.left, m.speed, m.core_shared, m.opt.leave, m.core_got, m.opt.leave_share).returns > 0;
  }
  const Profile prof = profile_of(m);
  const std::vector<double> speed = usable_speeds(m);
  const double move_s = page_s * change_cost_factor(m);
  // A page two ranks write moves at every execution, and each of them pays its faults and
  // protection changes besides (on a VM that shadows page tables, ten times its transfer),
  // and over a network the round trip of its fetch: weighed at its transfer alone, Jacobi's
  // cut stayed 45 rows from the page edge, where its pages took a fifth of every execution.
  const double each_s = page_s + shared_s;
  const IterationPages& t = iteration_pages(m, g);
  // A change against an imbalance with no known cause that measured to save nothing is undone
  // where it made ranks share written pages (SiteModel::replaced), unless a load has come since.
  const bool loaded = std::find(m.core_shared.begin(), m.core_shared.end(), 1) != m.core_shared.end();
  if (std::exchange(m.undo, false) && !back && !turns && !loaded) {
    Assignment previous = std::exchange(m.replaced, {});
    if (previous.size() == m.assign.size() && m.replaced_n == m.n &&
        shared_pages(t, previous) < shared_pages(t, m.assign)) {
      const double estimate = page_s * static_cast<double>(busiest_pages(t, m.assign, previous));
      adopt(m, t, std::move(previous), estimate, -1);
      m.undone_at = m.executions;
      m.verdict = Verdict::undone;
      return;
    }
  }
  // A rank back from leaving has no iterations to be measured on: its share comes at once.
  if (back && !turns) {
    m.horizon = expected_stability(m);
    m.stretch = 1;
    Assignment next = propose(m, prof, speed, t, each_s, move_s, false);
    if (next != m.assign) {
      const double estimate = page_s * static_cast<double>(busiest_pages(t, m.assign, next));
      adopt(m, t, std::move(next), estimate, -1);
      m.verdict = Verdict::changed;
    }
    return;
  }
  if (std::optional<Assignment> whole = whole_on_holder(m, prof, speed, g, t, each_s)) {
    if (*whole != m.assign) {
      const double estimate = page_s * static_cast<double>(busiest_pages(t, m.assign, *whole));
      adopt(m, t, std::move(*whole), estimate, -1);
      m.verdict = Verdict::changed;
    }
    m.streak = 0;
    return;
  }
  const Extremes times = extremes(m, prof, m.assign, speed);
  const int slowest_rank = times.slowest_rank;
  // The current spans have run since the last change, so pages whose last writer is still
  // another rank are rewritten by another site every time: a recurring cost.
  const bool locality = m.opt.policy == Policy::locality;
  const bool recurring = locality && conflicts(t, m.assign) > 0;
  const bool imbalanced = times.imbalanced(m.opt);
  // Only rates measured over a full window of the current spans say they are in balance:
  // right after a change the filtered rates are still mostly the old spans'.
  if (!imbalanced && m.observed >= static_cast<int>(rate_window)) m.calm = true;
  // A balanced split that shares no written page leaves nothing to gain: no proposal (the
  // placement costs a scan of the pages per execution).
  m.verdict = Verdict::balanced;
  if (!imbalanced && !(locality && (recurring || shared_pages(t, m.assign) > 0))) {
    m.streak = 0;
    return;
  }
  // Locality may also act on a balanced loop whose split makes ranks share written pages.
  auto gains_pages = [&](const Assignment& next) {
    return locality && (shared_pages(t, next) < shared_pages(t, m.assign) ||
                        (recurring && conflicts(t, next) < conflicts(t, m.assign)));
  };
  // The first change after the warm-up; later ones after a full rate window of the new spans
  // and four times `settle` executions out of balance (rates are means over overlapping windows,
  // so consecutive ones are not independent evidence).
  const bool first = m.redistributions == 0;
  const int enough = first ? m.opt.warmup : static_cast<int>(rate_window);
  const int persist = persistence(m);
  // Paper 2.3: act only when the powers stay at odds with the distribution, first through
  // the warm-up, then through `settle` consecutive executions and `evidence` seconds; noise
  // rarely lasts that long.
  // An imbalance counts without a proposal, which (a scan of the pages) is made only when
  // it could be acted on.
  const std::vector<double> power = normalized(speed);
  auto declined_before = [&] {
    if (m.declined.size() != power.size() || m.observed >= 2 * m.declined_at) return false;
    for (std::size_t r = 0; r < power.size(); ++r)
      if (std::abs(power[r] - m.declined[r]) > 0.5 * m.opt.threshold * m.declined[r]) return false;
    return true;
  };
  auto decline = [&](Verdict why) {
    m.declined = power;
    m.declined_at = std::max(m.observed, 1);
    m.verdict = why;
  };
  std::optional<Assignment> proposed;
  bool page_gain = false;
  // The proposal, and the horizon it and the cost/benefit check count over.
  auto make_proposal = [&] {
    m.horizon = expected_stability(m);
    // Where the slowest rank shares its core with another program, what a change saves shows
    // in the periods more than in the ranges: the loops that follow the split shrink with it,
    // and so do the rank's waits for its core (Jacobi under the paper's load: periods of
    // 4.5-8 ms at equal rows, where the loaded rank's sweep was modelled at 2 ms; 2 ms after
    // the change). Judged on the ranges alone, the first change came after 40-76 executions
    // of 500, when the time lost already matched its pages.
    m.stretch = core_shared(m, slowest_rank) ? period_stretch(m) : 1.0;
    proposed = propose(m, prof, speed, t, each_s, move_s, recurring);
    page_gain = gains_pages(*proposed);
  };
  if (imbalanced && ++m.streak == persist) {
    if (m.calm || slowest_rank != m.short_rank) record_break(m, m.executions - persist + 1);
    m.calm = false;
  }
  if (turns && !imbalanced) m.streak = 0;
  update_turning(m);
  if (m.turning) return keep_own_split(m, prof, t, page_s, each_s, move_s, recurring);
  if (!imbalanced) {
    if (declined_before()) {
      m.streak = 0;
      m.verdict = Verdict::declined;
      return;
    }
    make_proposal();
    m.streak = page_gain ? m.streak + 1 : 0;
    if (!page_gain) return decline(Verdict::balanced);
  }
  if (m.streak == 1) m.streak_began = m.clock;
  // A slowest rank that shares its core with another program is slow for as long as that
  // program runs: unless the site has seen imbalances come and go (two breaks), it needs no
  // evidence in seconds that the imbalance lasts (the warm-up and `settle` still apply).
  const bool known_cause = imbalanced && m.breaks.size() < 2 && core_shared(m, slowest_rank);
  m.verdict = Verdict::waiting;
  if (m.streak < persist || m.observed < enough || !lasted(m, known_cause, steady_evidence_executions)) return;
  if (!proposed) {
    if (declined_before()) {
      m.verdict = Verdict::declined;
      return;
    }
    make_proposal();
  }
  Assignment next = std::move(*proposed);
  if (next == m.assign) return decline(Verdict::kept);
  const double saving = execution_cost(m.assign, prof, speed, t, each_s, recurring) -
                        execution_cost(next, prof, speed, t, each_s, recurring);
  if (saving <= 0) return decline(Verdict::futile);
  double largest = 0;
  for (std::size_t r = 0; r < m.assign.size(); ++r)
    largest = std::max(largest, std::abs(prof.work(next[r]) - prof.work(m.assign[r])));
  if (!page_gain && largest < m.opt.min_move * prof.total() / static_cast<double>(m.assign.size()))
    return decline(Verdict::futile);
  const auto busiest = static_cast<double>(busiest_pages(t, m.assign, next));
  // An imbalance with no known cause is followed at what such changes have saved: one of
  // noise that a change did not remove is not chased again and again (0: not at all).
  const bool unexplained = !core_shared(m, slowest_rank);
  const double counted = saving * m.stretch * (unexplained ? change_saving_factor(m) : 1.0);
  if (m.opt.cost_benefit && move_s * busiest > counted * m.horizon) return decline(Verdict::dear);
  adopt(m, t, std::move(next), page_s * busiest, slowest_rank, unexplained ? saving * m.stretch : 0);
  m.verdict = Verdict::changed;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::idle: return "idle";
    case Verdict::balanced: return "balanced";
    case Verdict::waiting: return "waiting for the imbalance to last";
    case Verdict::declined: return "declined before at these powers";
    case Verdict::kept: return "kept: moving pages would not pay";
    case Verdict::futile: return "kept: the change would save nothing or move too little";
    case Verdict::dear: return "kept: its pages cost more than it saves";
    case Verdict::turning: return "kept at the ranks' own speeds: the load turns faster than a change follows";
    case Verdict::changed: return "changed";
    case Verdict::undone: return "changed back: the last change saved nothing and shares more pages";
    case Verdict::trying: return "on trial on one rank alone";
    case Verdict::alone: return "one rank alone: faster than the split";
  }
  return "?";
}

Policy resolve_policy(Policy requested, bool affine_writes, bool whole_writes) {
  if (requested != Policy::automatic) return requested;
  return affine_writes && !whole_writes ? Policy::locality : Policy::fgdls;
}

const Assignment& next_execution(SiteModel& m, long n, int nranks, const std::vector<RankFigures>* figures,
                                 const Geometry& g, double page_seconds, double shared_seconds) {
  ++m.executions;
  if (m.n < 0 || static_cast<int>(m.assign.size()) != nranks) {
    start(m, n, nranks, g);
    reset_window(m);
    return m.assign;
  }
  // The figures describe the spans that ran, whatever the bounds are now.
  if (figures) {
    watch_solo(m, *figures);
    observe(m, *figures);
  }
  if (solo(m, n, nranks, g, page_seconds > 0 ? page_seconds : default_page_seconds)) return m.assign;
  if (n != m.n || m.new_costs) {
    // New bounds, as every step of a factorization gives (i from k + 1), or new costs (a new
    // matrix): what the ranks' speeds say carries over, measured in work of the same loop
    // body. New blocks at the ranks' powers once the warm-up has measured them, equal ones
    // before (or always, under static); under locality and new bounds, the last spans while
    // they stay in balance (new_bounds).
    const bool measured = m.opt.policy != Policy::static_blocks && m.observed >= m.opt.warmup;
    const std::vector<double> power = normalized(usable_speeds(m));
    const long old_n = std::exchange(m.n, n);
    const bool recosted = m.new_costs.has_value();
    if (recosted || fixed(m)) {
      if (recosted) m.costs = std::move(*std::exchange(m.new_costs, std::nullopt));
      m.assign = blocks(m, n, nranks, measured ? &power : nullptr, g);
    } else {
      m.assign = new_bounds(m, old_n, n, nranks, measured ? &power : nullptr, g);
    }
    m.lb = g.lb, m.step = g.step;
    // Under new bounds the rates of the last executions stay: they measure the same loop
    // body, and one execution of a few milliseconds alone is mostly noise (faults, a time
    // slice). New costs change what a unit of work is.
    auto recent = std::move(m.recent);
    reset_window(m);
    if (!recosted) m.recent = std::move(recent);
    return m.assign;
  }
  m.lb = g.lb, m.step = g.step;
  if (!figures) return m.assign;
  consider_change(m, g, page_seconds > 0 ? page_seconds : default_page_seconds, shared_seconds);
  return m.assign;
}

void set_costs(SiteModel& m, std::vector<std::pair<Span, double>> costs) {
  if (costs == m.costs) m.new_costs.reset();
  else if (!m.new_costs || costs != *m.new_costs) m.new_costs = std::move(costs);
}

void adopt_ran(SiteModel& m, Assignment ran) {
  if (ran.size() != m.assign.size()) return;
  for (auto& spans : ran) normalize(spans);
  if (ran == m.assign) return;
  m.assign = std::move(ran);
  reset_window(m);
}

double change_cost_factor(const SiteModel& m) { return m.change_costs.empty() ? 1.0 : median(m.change_costs); }

double change_saving_factor(const SiteModel& m) {
  if (m.undone_at >= 0 && m.executions - m.undone_at < saving_memory) return 0;
  std::vector<double> saved;
  for (auto [ratio, at] : m.change_savings)
    if (m.executions - at < saving_memory) saved.push_back(ratio);
  return saved.empty() ? 1.0 : median(saved);
}

std::vector<double> relative_power(const SiteModel& m) {
  if (m.speed.empty()) return {};
  return normalized(usable_speeds(m));
}

}  // namespace dsm::lb
