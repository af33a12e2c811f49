// Loops that write the same rows of their arrays decide together: the first one (the leader)
// decides, the others (its followers) give each iteration to the rank that runs the leader's
// iteration of the same value, and the leader decides on the pages its whole group writes.
#include "glue.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

namespace dsm::lb::runtime {
namespace {

// How many of a loop's latest row keys it leads at once.
constexpr std::size_t max_led_keys = 8;

// The share of a loop's iterations whose loop values the leader's last execution may lack (or
// have beyond the loop's) for the loop to still take the leader's split.
constexpr double follow_slack = 0.02;

// Whether `st` runs over the same loop values as the leader. Equal keys say equal row bytes and
// an equal first row, not an equal count: 3mm's product over 800 rows, keyed like the
// initialization of a 1000-row factor, took that loop's cut at row 512 and ran 64 % of its
// iterations on rank 0. (Steps are equal: they are part of the key.)
bool same_values(const Site::State& st, const Site::State& leader) {
  const long n = iteration_count(st.lb, st.ub, st.step), leader_n = leader.model.n;
  const long lo = std::max(st.lb, leader.lb);
  const long hi = std::min(st.lb + n * st.step, leader.lb + leader_n * leader.step);
  const long shared = hi > lo ? (hi - lo + st.step - 1) / st.step : 0;
  const long most = std::max(n, leader_n);
  return static_cast<double>(most - shared) <= follow_slack * static_cast<double>(most);
}

Geometry geometry_of(std::span<const Section> accesses, long lb, long step, long n, bool with_holders) {
  Geometry g;
  g.lb = lb;
  g.step = step;
  for (const Section& s : accesses) {
    if (!writes(s)) continue;
    if (s.whole) return Geometry{};  // a write anywhere: no page reasoning is safe
    g.sections.push_back({address(s.base), static_cast<std::int64_t>(s.elem_size), s.coef, s.lo, s.hi, 0, {}});
    const PageRange h = g.hull(g.sections.size() - 1, n);
    if (with_holders && h.first <= h.last) {
      g.sections.back().holder_origin = h.first;
      g.sections.back().holders = writers_of(glue().writers, h.first, h.last);
    }
  }
  return g;
}

}  // namespace

std::optional<FollowKey> follow_key(std::span<const Section> accesses, long lb, long step) {
  std::int64_t stride = 0, first = std::numeric_limits<std::int64_t>::max();
  for (const Section& s : accesses) {
    if (!writes(s) || s.whole || s.coef == 0) continue;
    stride = std::max<std::int64_t>(stride, std::abs(s.coef * step) * static_cast<std::int64_t>(s.elem_size));
    const std::int64_t element = s.coef * lb + s.lo, row = std::abs(s.coef);
    first = std::min(first, element >= 0 ? element / row : -((-element + row - 1) / row));
  }
  if (stride == 0) return std::nullopt;
  return FollowKey{step, stride, first};
}

Site::State* leader_of(Site::State& st, const std::optional<FollowKey>& key) {
  if (!key) return &st;
  Glue& g = glue();
  const auto [at, inserted] = g.leaders.try_emplace(*key, &st);
  // A leader that no longer runs (an initialization loop, run once) would hold its
  // followers' ranges for good, whatever the load: a follower that runs again, the leader not
  // having started since its own last start, takes the rows over. The same on every rank:
  // the order of executions is the program's.
  const Site::State* leader = at->second;
  const bool stopped = !inserted && leader != &st && st.started_before > 0 && leader->started_at < st.started_before;
  if (stopped) at->second = &st;
  // A loop leads the rows of its last few first rows only: one that alternates among a few
  // (odd and even steps) keeps its followers, and one whose rows move at every step (a
  // sliding window) does not add a key per step for as long as the job runs.
  if (inserted || stopped) {
    st.led.push_back(*key);
    if (st.led.size() > max_led_keys) {
      if (auto old = g.leaders.find(st.led.front()); old != g.leaders.end() && old->second == &st) g.leaders.erase(old);
      st.led.pop_front();
    }
  }
  return at->second;
}

bool takes_leaders_ranges(const Site::State& st, const Site::State& leader, int nranks) {
  // A site whose own policy is static (a policy(static) clause under another run policy)
  // keeps its equal blocks instead of the leader's ranges.
  return &leader != &st && leader.model.n > 0 && leader.model.opt.policy != Policy::static_blocks &&
         st.model.opt.policy != Policy::static_blocks && leader.model.assign.size() == static_cast<std::size_t>(nranks) &&
         same_values(st, leader);
}

void follow_leader(Site::State& st, Site::State& leader, std::span<const Section> accesses, long lb, long step,
                   long n) {
  Member& member = leader.group[st.id];
  member.writes.clear();
  for (const Section& s : accesses)
    if (writes(s) && !s.whole) member.writes.push_back(s);
  member.lb = lb, member.ub = st.ub, member.step = step, member.n = n;
  Assignment next = follow_spans(leader.model.assign, leader.lb, leader.step, leader.model.n, lb, step, n);
  if (!st.model.assign.empty() && st.model.assign != next) ++st.model.redistributions;
  st.model.assign = std::move(next);
  st.model.n = n;
  ++st.model.executions;
}

void refresh_followers(Site::State& st) {
  for (auto& [id, member] : st.group) {
    if (id == st.id || member.n <= 0) continue;
    const Assignment a = follow_spans(st.model.assign, st.lb, st.step, st.model.n, member.lb, member.step, member.n);
    std::optional<std::vector<Run>> runs = written_runs(member.writes, a, member.lb, member.ub, member.step);
    member.runs = runs ? std::move(*runs) : std::vector<Run>{};
  }
}

// The followers' whole writes are not rows: the followers' own claims take care of them.
Geometry decision_geometry(const Site::State& st, std::span<const Section> accesses, long n, bool with_holders) {
  std::vector<Section> all;
  for (const auto& [id, member] : st.group) all.insert(all.end(), member.writes.begin(), member.writes.end());
  if (all.empty()) return geometry_of(accesses, st.lb, st.step, n, with_holders);
  all.insert(all.begin(), accesses.begin(), accesses.end());
  return geometry_of(all, st.lb, st.step, n, with_holders);
}

}  // namespace dsm::lb::runtime
