// Runtime glue of the balancer (compiled into libdsm): Site, Plan and redistribute() on top
// of the pure decision code. Figures travel in the barrier blobs, so every rank decodes the
// same bytes and computes the same assignment without messages of its own.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "blob.hpp"
#include "decide.hpp"
#include "runtime/runtime_hooks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace dsm::lb {
namespace {

// Pages (inclusive runs) a rank writes in one execution of a loop.
struct Run {
  long first, last;
  int rank;
};

// What a loop that writes a leader's rows (or the leader itself) wrote last.
struct Member {
  std::vector<Section> writes;  // its affine write sections (followers only)
  std::vector<Run> runs;        // every rank's written pages in its last execution
};

}  // namespace

// What makes loops write "the same rows": equal step, equal bytes advanced per iteration by
// the written sections, and the same first row at the loop's start, a row being what one
// iteration advances (the element index over |coef|, the least over the written arrays).
struct FollowKey {
  long step;
  std::int64_t stride;
  std::int64_t first_row;
  auto operator<=>(const FollowKey&) const = default;
};
constexpr std::size_t max_led_keys = 8;

struct Site::State {
  std::string name;
  std::uint64_t id = 0;
  std::optional<Policy> requested;  // the loop's own policy, if it has one
  bool resolved = false;
  SiteModel model;
  std::uint64_t execution = 0;         // executions started
  long lb = 0, ub = 0, step = 1;       // bounds of the last execution
  State* follows = nullptr;            // the loop whose rows this one's ranges follow, if any
  std::deque<FollowKey> led;           // rows this loop leads others in, newest last (redistribute)
  // A leader's group, by site id, itself included: its followers' pages change hands with
  // its own, so its decisions count their writes too, and a page is claimed for one rank
  // only when no other rank writes it in any loop of the group (a boundary loop writing
  // one element of a page the sweep's rank holds would otherwise take the whole page over
  // at every time step, and the sweep take it back).
  std::map<std::uint64_t, Member> group;
  double started = 0;                  // wtime() at the start of the last execution
  double period = 0;                   // from the start of the execution before to `started`
};

namespace {

// CPU time of the calling thread (its CPU clock) and the time it spent runnable but waiting
// for its core (another program's load), from /proc/thread-self/schedstat; none where the
// kernel keeps no schedule statistics. The clock is read first: reading it brings the
// kernel's account of the running thread up to date, which schedstat alone does not (it
// lags by up to a tick, longer than a short range). Without `with_waiting`, the waiting
// time is the one read last: no waiting counts until the next read.
struct SchedTimes {
  double cpu = 0, waiting = 0;
};
SchedTimes sched_times(bool with_waiting) {
  struct File {
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    ~File() {
      if (fd >= 0) close(fd);
    }
  };
  static thread_local File file;
  static thread_local double last_waiting = 0;
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  SchedTimes t{static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9, last_waiting};
  char buf[128];
  const ssize_t n = with_waiting && file.fd >= 0 ? pread(file.fd, buf, sizeof buf - 1, 0) : -1;
  unsigned long long run = 0, waiting = 0;
  if (n > 0) {
    buf[n] = 0;
    if (std::sscanf(buf, "%llu %llu", &run, &waiting) == 2) t.waiting = last_waiting = static_cast<double>(waiting) * 1e-9;
  }
  return t;
}

// Glue state: the sites alive (for statistics) and the figures not yet carried by a barrier.
struct Glue {
  std::vector<Site::State*> sites;
  WriterRuns writers;  // pages written by earlier executions of every site
  std::vector<SiteFigures> pending;
  std::uint64_t pending_barrier = 0;
  // Figures that arrived with barriers, per site and rank: a site's figures travel with the
  // barrier after its loop, and other sites' barriers may follow before it runs again.
  std::map<std::uint64_t, std::vector<SiteFigures>> received;
  std::uint64_t harvested_barrier = 0;
  double page_seconds = 0;  // the median page cost the ranks published last
  SchedTimes last_sched;    // of the application thread, at the end of its last loop
  // Whether to read the time spent waiting for the core (a read of schedstat, ~2 us a time
  // in a VM, three times per loop): not while the core share says nobody else runs there.
  bool read_waiting = true;
  // Sites that write the same rows of their arrays decide together: the first one decides
  // (the leader) and the later ones give each iteration to the rank that runs the leader's
  // iteration of the same value. So a sweep, its copy-back and the boundary loop over the
  // same rows keep their pages on one rank instead of pulling them back and forth.
  std::map<FollowKey, Site::State*> leaders;
  // The site whose range the application thread is in: a loop started there (from a function
  // its iterations call) would run only this rank's part of itself for this rank's part of
  // the outer loop.
  const Site::State* running = nullptr;
};
Glue& glue() {
  static Glue g;
  return g;
}

const Options& run_options() {
  static const Options opts = [] {
    try {
      return options_from([](const char* k) -> const char* { return std::getenv(k); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dsm: %s\n", e.what());
      std::exit(2);
    }
  }();
  return opts;
}

std::int64_t address(const void* p) { return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p)); }

// Byte hull [first, last) a section touches over the iterations of one range (empty: first >= last).
struct Bytes {
  std::int64_t first, last;
};
Bytes hull(const Section& s, const Range& r) {
  if (r.ub <= r.lb || s.hi < s.lo) return {0, 0};
  const long i0 = r.lb, i1 = iteration_at(r.lb, r.ub, r.step, iteration_count(r.lb, r.ub, r.step) - 1);
  const long e0 = std::min(s.coef * i0, s.coef * i1) + s.lo, e1 = std::max(s.coef * i0, s.coef * i1) + s.hi;
  const auto elem = static_cast<std::int64_t>(s.elem_size);
  return {address(s.base) + e0 * elem, address(s.base) + (e1 + 1) * elem};
}

bool writes(const Section& s) { return s.access != Access::read; }

// The follow key of a loop; none when it has no affine write that advances with the loop.
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

// The geometry a site decides on: its accesses' and its followers' affine writes (their
// whole writes are not rows: the followers' own claims take care of them).
Geometry decision_geometry(const Site::State& st, std::span<const Section> accesses, long n, bool with_holders) {
  std::vector<Section> all;
  for (const auto& [id, member] : st.group) all.insert(all.end(), member.writes.begin(), member.writes.end());
  if (all.empty()) return geometry_of(accesses, st.lb, st.step, n, with_holders);
  all.insert(all.begin(), accesses.begin(), accesses.end());
  return geometry_of(all, st.lb, st.step, n, with_holders);
}

// Every rank's written pages in its ranges, one run per section and range; none when a
// write has no descriptor (anything may be written).
std::optional<std::vector<Run>> written_runs(std::span<const Section> accesses, const Assignment& a, long lb, long ub,
                                             long step) {
  std::vector<Run> runs;
  for (const Section& s : accesses) {
    if (!writes(s)) continue;
    if (s.whole) return std::nullopt;
    for (std::size_t r = 0; r < a.size(); ++r)
      for (const Range& range : to_ranges(a[r], lb, ub, step)) {
        const Bytes b = hull(s, range);
        if (b.last > b.first)
          runs.push_back({static_cast<long>(b.first / page_bytes), static_cast<long>((b.last - 1) / page_bytes),
                          static_cast<int>(r)});
      }
  }
  return runs;
}

// The pages of `mine` that no other rank writes, in `mine` or in the other members of its
// group (`self` is this loop's entry), as runs per rank.
std::vector<Run> exclusive_runs(const std::vector<Run>& mine, const std::map<std::uint64_t, Member>& group,
                                std::uint64_t self) {
  // Pages two or more ranks write: a sweep over every rank's runs, merged per rank first.
  std::map<int, std::vector<std::pair<long, long>>> by_rank;
  auto add = [&](const std::vector<Run>& runs) {
    for (const Run& r : runs) by_rank[r.rank].push_back({r.first, r.last});
  };
  add(mine);
  for (const auto& [id, member] : group)
    if (id != self) add(member.runs);
  std::vector<std::pair<long, int>> edges;  // (page, +1 where a rank's run begins, -1 after it ends)
  for (auto& [rank, pieces] : by_rank) {
    std::sort(pieces.begin(), pieces.end());
    for (std::size_t i = 0; i < pieces.size();) {
      auto [first, last] = pieces[i];
      for (++i; i < pieces.size() && pieces[i].first <= last + 1; ++i) last = std::max(last, pieces[i].second);
      edges.push_back({first, +1});
      edges.push_back({last + 1, -1});
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<std::pair<long, long>> contested;
  int writers = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const int before = writers;
    writers += edges[i].second;
    if (before < 2 && writers >= 2) contested.push_back({edges[i].first, 0});
    if (before >= 2 && writers < 2) contested.back().second = edges[i].first - 1;
  }
  std::vector<Run> out;
  for (const Run& run : mine) {
    long from = run.first;
    for (auto [first, last] : contested) {
      if (last < from || first > run.last) continue;
      if (first > from) out.push_back({from, first - 1, run.rank});
      from = last + 1;
    }
    if (from <= run.last) out.push_back({from, run.last, run.rank});
  }
  return out;
}

// Remembers who writes which pages, for the locality policy of every site (the same on
// every rank). A page several ranks write (false sharing in a naive split) keeps the writer
// it had: it belongs to nobody in particular, and recording whichever rank came last would
// send the loops that write it towards an arbitrary rank.
void record_writes(const std::vector<Run>& exclusive) {
  for (const Run& run : exclusive) record_writer(glue().writers, run.first, run.last, run.rank);
}

std::string rank_list(const std::vector<std::size_t>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Ranks that ran different loops, or a loop with different bounds, between two barriers
// would split different iteration spaces: part of a loop would run twice and part never,
// silently. Each rank's figures list the loops it ran since the barrier before (a loop run
// several times there, its last execution), so the barrier after the loop tells; every rank
// sees the same figures, so all stop. A rank names a loop it never ran by its id.
void check_same_loops(const std::vector<std::optional<Published>>& published) {
  std::map<std::uint64_t, std::vector<const SiteFigures*>> by_site;
  for (std::size_t r = 0; r < published.size(); ++r)
    for (const SiteFigures& f : published[r]->sites) {
      auto& per_rank = by_site[f.site];
      per_rank.resize(published.size());
      per_rank[r] = &f;
    }
  for (const auto& [id, per_rank] : by_site) {
    std::vector<std::size_t> ran, skipped;
    for (std::size_t r = 0; r < per_rank.size(); ++r) (per_rank[r] ? ran : skipped).push_back(r);
    const SiteFigures& a = *per_rank[ran.front()];
    std::string why;
    if (!skipped.empty()) {
      why = "ran on " + rank_list(ran) + " but not on " + rank_list(skipped) +
            " between two barriers: a parallel loop must run on every rank (one inside `if (dsm::rank() == "
            "...)` runs only those ranks' parts of it)";
    } else {
      for (std::size_t r : ran) {
        const SiteFigures& b = *per_rank[r];
        char buf[320];
        if (b.execution != a.execution) {
          std::snprintf(buf, sizeof buf,
                        "ran a different number of times on different ranks (rank %zu: %llu times so far, rank %zu: "
                        "%llu): every rank must run a parallel loop as often",
                        ran.front(), static_cast<unsigned long long>(a.execution), r,
                        static_cast<unsigned long long>(b.execution));
        } else if (a.lb != b.lb || a.ub != b.ub || a.step != b.step) {
          std::snprintf(buf, sizeof buf,
                        "ran with different bounds on different ranks (execution %llu: rank %zu [%lld, %lld) step "
                        "%lld, rank %zu [%lld, %lld) step %lld): a parallel loop's bounds must be the same on every "
                        "rank",
                        static_cast<unsigned long long>(a.execution), ran.front(), static_cast<long long>(a.lb),
                        static_cast<long long>(a.ub), static_cast<long long>(a.step), r, static_cast<long long>(b.lb),
                        static_cast<long long>(b.ub), static_cast<long long>(b.step));
        } else {
          continue;
        }
        why = buf;
        break;
      }
    }
    if (why.empty()) continue;
    std::string name;
    for (const Site::State* st : glue().sites)
      if (st->id == id) name = st->name;
    if (name.empty()) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "#%016llx", static_cast<unsigned long long>(id));
      name = hex;
    }
    const std::string line = "dsm: rank " + std::to_string(rank()) + ": loop " + name + " " + why + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::exit(1);
  }
}

// Keeps what the barriers since the last call carried (the runtime keeps only the last),
// after checking that the ranks ran the same loops. Called after every barrier (the
// barrier hook) once this rank has run a loop.
void harvest(Glue& g) {
  const std::uint64_t now = detail::barrier_count();
  if (now == g.harvested_barrier) return;
  g.harvested_barrier = now;
  const auto& blobs = detail::barrier_blobs();
  std::vector<std::optional<Published>> published(blobs.size());
  bool complete = true;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (!blobs[r].empty()) published[r] = decode_figures(blobs[r]);
    else published[r] = Published{};
    complete &= published[r].has_value();
  }
  // A malformed blob (that rank's figures stay old: no site sees a full set) leaves nothing
  // to compare.
  if (complete) check_same_loops(published);
  std::vector<double> page_seconds;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (!published[r]) continue;
    if (published[r]->page_seconds > 0) page_seconds.push_back(published[r]->page_seconds);
    for (const SiteFigures& f : published[r]->sites) {
      auto& per_rank = g.received[f.site];
      per_rank.resize(blobs.size());
      per_rank[r] = f;
    }
  }
  // The median rank's: a rank on a crowded core waits longer for every page, but the cost
  // that decides whether moving work pays is the typical one.
  if (!page_seconds.empty()) {
    std::nth_element(page_seconds.begin(), page_seconds.begin() + page_seconds.size() / 2, page_seconds.end());
    g.page_seconds = page_seconds[page_seconds.size() / 2];
  }
}

// Every rank's figures for the last execution of `st`, when they have all arrived, and the
// page cost every rank will use.
bool gather_figures(const Site::State& st, std::vector<RankFigures>& out, double& page_seconds) {
  Glue& g = glue();
  const auto it = g.received.find(st.id);
  if (it == g.received.end()) return false;
  const auto& per_rank = it->second;
  if (per_rank.size() != static_cast<std::size_t>(nprocs())) return false;
  out.clear();
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const SiteFigures& b = per_rank[r];
    if (b.site != st.id || b.execution != st.execution) return false;
    out.push_back(b.figures);
  }
  page_seconds = g.page_seconds;
  return !out.empty();
}

// Bulk fetch of what this rank's ranges read, bulk opening of what they write (DESIGN 3a).
// A stencil reads one array through several sections (rows i-1, i, i+1): their hulls are
// merged per mode first, so each page is walked once (four walks of a block cost ~40 us).
void prefetch_sections(std::span<const Section> accesses, const std::vector<Range>& mine, const Options& o) {
  struct Want {
    Mode mode;
    Bytes bytes;
  };
  std::vector<Want> wants;
  for (const Section& s : accesses) {
    if (!(writes(s) ? o.bulk_write : o.prefetch)) continue;
    const Mode mode = s.access == Access::read ? Mode::read : s.access == Access::write ? Mode::write : Mode::read_write;
    if (s.whole) {
      const detail::Extent e = detail::allocation_of(s.base);
      if (!writes(s) && e.start) wants.push_back({Mode::read, {address(e.start), address(e.start) + std::int64_t(e.bytes)}});
      continue;
    }
    for (const Range& r : mine) {
      const Bytes b = hull(s, r);
      if (b.last <= b.first) continue;
      // Sparse references (a column of a matrix) would fetch far more than they touch.
      const long count = iteration_count(r.lb, r.ub, r.step);
      const auto touched = static_cast<std::int64_t>(count) * (s.hi - s.lo + 1) * static_cast<std::int64_t>(s.elem_size);
      if (b.last - b.first > 4 * std::max<std::int64_t>(touched, page_bytes)) continue;
      wants.push_back({mode, b});
    }
  }
  // Reads first (Mode::read is the first mode): a page both read and written is fetched
  // once, then opened.
  std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) {
    return std::pair(static_cast<int>(a.mode), a.bytes.first) < std::pair(static_cast<int>(b.mode), b.bytes.first);
  });
  for (std::size_t i = 0; i < wants.size();) {
    Want w = wants[i];
    for (++i; i < wants.size() && wants[i].mode == w.mode && wants[i].bytes.first <= w.bytes.last; ++i)
      w.bytes.last = std::max(w.bytes.last, wants[i].bytes.last);
    prefetch(reinterpret_cast<const void*>(w.bytes.first), static_cast<std::size_t>(w.bytes.last - w.bytes.first), w.mode);
  }
}

// Claims, for every rank, the pages it alone writes in this execution (no twins, no diffs).
// Every rank makes the same calls in the same order from the same assignment.
void claim_exclusive(const std::vector<Run>& exclusive) {
  for (const Run& run : exclusive)
    detail::claim_exclusive_write(run.rank, reinterpret_cast<const void*>(run.first * page_bytes),
                                  static_cast<std::size_t>(run.last - run.first + 1) * page_bytes);
}

void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  out += '"';
}

// DSM_LB_TRACE=1: rank 0 prints every change of a deciding site; 2: every execution's figures.
int trace_level() { return run_options().trace; }

void trace(const Site::State& st, const std::vector<RankFigures>& figs, bool moved) {
  char since[64];
  std::snprintf(since, sizeof since, " period %.3f ms, changes cost x%.1f", st.period * 1e3,
                change_cost_factor(st.model));
  std::string line = st.name + " #" + std::to_string(st.execution) + (moved ? " moved:" : ":") + since;
  const std::vector<double> power = relative_power(st.model);
  for (std::size_t r = 0; r < figs.size(); ++r) {
    double taken = 0, cpu = 0;
    for (double t : figs[r].wall) taken += t;
    for (double c : figs[r].cpu) cpu += c;
    char buf[160];
    std::snprintf(buf, sizeof buf, " | r%zu %.3f ms (cpu %.3f) power %.3f spans", r, taken * 1e3, cpu * 1e3,
                  r < power.size() ? power[r] : 0.0);
    line += buf;
    for (const Span& sp : st.model.assign[r]) line += " [" + std::to_string(sp.begin) + "," + std::to_string(sp.end) + ")";
  }
  line += std::string(" | ") + verdict_name(st.model.verdict);
  if (st.model.verdict == Verdict::kept || st.model.verdict == Verdict::dear) {
    char over[48];
    std::snprintf(over, sizeof over, " over %.0f executions", st.model.horizon);
    line += over;
  }
  std::fprintf(stderr, "dsm-lb: %s\n", line.c_str());
}

// The balancer's part of the statistics of `dsmrun --stats`: an object with one entry per loop
// site: executions, redistributions, iterations and pages moved, and each rank's power, last
// times and final ranges.
std::string stats_json() {
  std::string out = "{";
  bool first = true;
  for (const Site::State* st : glue().sites) {
    const SiteModel& m = st->model;
    if (!first) out += ", ";
    first = false;
    json_string(out, st->name);
    char head[256];
    std::snprintf(head, sizeof head,
                  ": {\"policy\": \"%s\", \"executions\": %ld, \"redistributions\": %ld, \"iterations_moved\": %ld, "
                  "\"pages_moved\": %ld, ",
                  st->resolved ? policy_name(m.opt.policy) : "none", m.executions, m.redistributions,
                  m.iterations_moved, m.pages_moved);
    out += head;
    if (st->follows) {  // its ranks were never measured: the leader's powers decide
      out += "\"follows\": ";
      json_string(out, st->follows->name);
      out += ", ";
    }
    out += "\"ranks\": [";
    const std::vector<double> power = relative_power(st->follows ? st->follows->model : m);
    for (std::size_t r = 0; r < m.assign.size(); ++r) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s{\"rank\": %zu, \"power\": %.4f, \"wall\": %.6f, \"cpu\": %.6f, \"ranges\": [",
                    r ? ", " : "", r, r < power.size() ? power[r] : 0.0, r < m.last_wall.size() ? m.last_wall[r] : 0.0,
                    r < m.last_cpu.size() ? m.last_cpu[r] : 0.0);
      out += buf;
      bool first_range = true;
      for (const Range& range : to_ranges(m.assign[r], st->lb, st->ub, st->step)) {
        std::snprintf(buf, sizeof buf, "%s[%ld, %ld, %ld]", first_range ? "" : ", ", range.lb, range.ub, range.step);
        out += buf;
        first_range = false;
      }
      out += "]}";
    }
    out += "]}";
  }
  return out + "}";
}

}  // namespace

Site::Site(std::string name, std::optional<Policy> policy) : state_(std::make_unique<State>()) {
  state_->id = site_id(name);
  state_->name = std::move(name);
  state_->requested = policy;
  glue().sites.push_back(state_.get());
  detail::set_stats_section_hook(stats_json);
}

Site::~Site() {
  if (state_->follows) state_->follows->group.erase(state_->id);
  for (State* other : glue().sites)
    if (other->follows == state_.get()) other->follows = nullptr;
  std::erase(glue().sites, state_.get());
  std::erase_if(glue().leaders, [&](const auto& kv) { return kv.second == state_.get(); });
}

Plan::Plan(Site& site, std::vector<Range> ranges)
    : site_(&site),
      ranges_(std::move(ranges)),
      wall_(ranges_.size(), 0.0),
      cpu_(ranges_.size(), 0.0),
      waiting_(ranges_.size(), 0.0) {}

Plan::Plan(Plan&& o) noexcept
    : site_(std::exchange(o.site_, nullptr)),
      ranges_(std::move(o.ranges_)),
      wall_(std::move(o.wall_)),
      cpu_(std::move(o.cpu_)),
      waiting_(std::move(o.waiting_)),
      started_(o.started_),
      cpu_started_(o.cpu_started_),
      waiting_started_(o.waiting_started_),
      open_(std::exchange(o.open_, false)) {}

Plan::~Plan() {
  if (!site_) return;
  for (std::size_t i = 0; i < ranges_.size() && open_; ++i) range_finished(i);  // loop left early
  publish();
}

Plan::iterator Plan::begin() { return iterator(this, 0); }
Plan::iterator Plan::end() { return iterator(this, ranges_.size()); }

const Range& Plan::iterator::operator*() const {
  plan_->range_started(index_);
  return plan_->ranges_[index_];
}

Plan::iterator& Plan::iterator::operator++() {
  plan_->range_finished(index_);
  ++index_;
  return *this;
}

void Plan::range_started(std::size_t) {
  if (open_) return;
  open_ = true;
  glue().running = &site_->state();
  started_ = wtime();
  const SchedTimes t = sched_times(glue().read_waiting);
  cpu_started_ = t.cpu;
  waiting_started_ = t.waiting;
}

void Plan::range_finished(std::size_t index) {
  if (!open_ || index >= ranges_.size()) return;
  open_ = false;
  glue().running = nullptr;
  wall_[index] += wtime() - started_;
  const SchedTimes t = sched_times(glue().read_waiting);
  cpu_[index] += t.cpu - cpu_started_;
  waiting_[index] += t.waiting - waiting_started_;
}

void Plan::publish() {
  if (nprocs() <= 1) return;
  Glue& g = glue();
  const Site::State& st = site_->state();
  const std::uint64_t now = detail::barrier_count();
  if (now != g.pending_barrier) {  // the earlier figures left with that barrier
    g.pending.clear();
    g.pending_barrier = now;
  }
  // A rank sharing its core with another program loses the core mostly outside its ranges:
  // Linux runs a thread that slept at the barrier first, and makes it wait for the core
  // after the barrier instead. So the time a range "takes" is its CPU time at the share of
  // the core this rank gets, plus what the range spent waiting for other ranks' pages (wall
  // beyond CPU and core). The share is the smaller of what its thread got since its last loop
  // (CPU over CPU plus waiting for the core), which a rank that sleeps at barriers
  // overstates, and, for a rank bound to one core, what it could keep against the others on
  // that core (detail::watch_core). The share is what the rank gets on average; the other
  // program keeps the core for a time slice at a time (a 4 ms tick at HZ=250), so ranges
  // that must end by a barrier a few milliseconds away count on the headroom's part of it,
  // and ranges that take `long_execution` or more at that share count on all of it.
  const SchedTimes sched = sched_times(g.read_waiting);
  const double cpu = sched.cpu - g.last_sched.cpu, waiting = sched.waiting - g.last_sched.waiting;
  const double got = cpu > 0 && waiting > 0 ? cpu / (cpu + waiting) : 1.0;
  const detail::CoreShare reading = detail::watch_core();
  const std::optional<double> core = reading.share;
  const bool shared = core && *core < 1.0;
  // Ranks of the job that share the core take turns with this one: what its thread got
  // says nothing about other programs then, only the core's occupancy does.
  const bool peers = reading.with_peers;
  double share = std::max(peers ? core.value_or(1.0) : std::min(got, core.value_or(1.0)), 0.05);
  if (shared) {
    constexpr double long_execution = 10e-3;
    const double needs = std::accumulate(cpu_.begin(), cpu_.end(), 0.0) / share;
    const double headroom = run_options().headroom;
    share *= headroom + (1 - headroom) * std::min(1.0, needs / long_execution);
  }
  g.read_waiting = !core || shared || peers;
  g.last_sched = sched;
  std::vector<double> taken(ranges_.size());
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    taken[i] = cpu_[i] / share + std::max(0.0, wall_[i] - cpu_[i] - waiting_[i]);
  std::erase_if(g.pending, [&](const SiteFigures& f) { return f.site == st.id; });
  g.pending.push_back({st.id, st.execution, {std::move(taken), cpu_, st.period, shared}, st.lb, st.ub, st.step});
  detail::set_barrier_blob(encode_figures({detail::page_transfer_seconds(), g.pending}));
}

Plan redistribute(Site& site, long lb, long ub, long step, std::span<const Section> accesses) {
  const long n = iteration_count(lb, ub, step);
  Site::State& st = site.state();
  if (!detail::joined()) {
    // Every rank would run the whole loop, on shared arrays that do not exist yet or any more.
    std::fprintf(stderr, "dsm: loop %s runs outside the job: parallel loops run between dsm::init and dsm::finalize\n",
                 st.name.c_str());
    std::exit(2);
  }
  if (const Site::State* outer = glue().running) {
    std::fprintf(stderr,
                 "dsm: rank %d: loop %s starts inside an iteration of loop %s (from a function it calls): parallel "
                 "loops cannot be nested, each rank would run only its part of the inner loop; mark only the outer one\n",
                 rank(), st.name.c_str(), outer->name.c_str());
    std::exit(1);
  }
  const int nranks = nprocs(), me = rank();
  st.lb = lb, st.ub = ub, st.step = step;
  const Options& opts = run_options();  // a bad setting is refused at one rank too
  if (nranks <= 1) {
    ++st.model.executions;
    ++st.execution;
    return Plan(site, n > 0 ? std::vector<Range>{{lb, ub, step}} : std::vector<Range>{});
  }
  if (!st.resolved) {
    bool affine = false, whole = false;
    for (const Section& s : accesses)
      if (writes(s)) (s.whole ? whole : affine) = true;
    st.model.opt = opts;
    st.model.opt.policy =
        resolve_policy(st.requested.value_or(opts.policy), affine, whole);
    st.resolved = true;
  }
  detail::set_barrier_hook([] { harvest(glue()); });
  harvest(glue());  // every barrier's figures, whichever site runs after it
  const double now = wtime();
  st.period = st.started > 0 ? now - st.started : 0;
  st.started = now;
  const std::optional<FollowKey> key = follow_key(accesses, lb, step);
  Site::State* leader = &st;
  if (key) {
    const auto [at, inserted] = glue().leaders.try_emplace(*key, &st);
    leader = at->second;
    // A loop leads the rows of its last few first rows only: one that alternates among a few
    // (odd and even steps) keeps its followers, and one whose rows move at every step (a
    // sliding window) does not add a key per step for as long as the job runs.
    if (inserted) {
      st.led.push_back(*key);
      if (st.led.size() > max_led_keys) {
        if (auto old = glue().leaders.find(st.led.front()); old != glue().leaders.end() && old->second == &st)
          glue().leaders.erase(old);
        st.led.pop_front();
      }
    }
  }
  // A site whose own policy is static (a policy(static) clause under another run policy)
  // keeps its equal blocks instead of the leader's ranges.
  const bool follow = leader != &st && leader->model.n > 0 && leader->model.opt.policy != Policy::static_blocks &&
                      st.model.opt.policy != Policy::static_blocks &&
                      leader->model.assign.size() == static_cast<std::size_t>(nranks);
  std::vector<RankFigures> figs;
  bool have = false;
  double page_seconds = 0;
  if (st.execution > 0 && !follow) have = gather_figures(st, figs, page_seconds);
  const Geometry g = decision_geometry(st, accesses, n, have && st.model.opt.policy == Policy::locality);
  if (st.follows && st.follows != leader) st.follows->group.erase(st.id);
  // A site that followed holds the leader's ranges but no figures or tables of its own: back
  // to deciding for itself, it starts as a site that never ran (next_execution starts it).
  if (st.follows && !follow) st.model.n = -1;
  st.follows = follow ? leader : nullptr;
  Site::State& head = follow ? *leader : st;
  if (follow) {
    auto& mine = head.group[st.id].writes;
    mine.clear();
    for (const Section& s : accesses)
      if (writes(s) && !s.whole) mine.push_back(s);
    Assignment next = follow_spans(leader->model.assign, leader->lb, leader->step, leader->model.n, lb, step, n);
    if (!st.model.assign.empty() && st.model.assign != next) ++st.model.redistributions;
    st.model.assign = std::move(next);
    st.model.n = n;
    ++st.model.executions;
  }
  const long moves_before = st.model.redistributions;
  const Assignment& a = follow ? st.model.assign : next_execution(st.model, n, nranks, have ? &figs : nullptr, g, page_seconds);
  if (trace_level() > 0 && me == 0 && !follow && have && (trace_level() > 1 || st.model.redistributions != moves_before))
    trace(st, figs, st.model.redistributions != moves_before);
  ++st.execution;
  std::optional<std::vector<Run>> written = written_runs(accesses, a, lb, ub, step);
  const std::vector<Run> exclusive = written ? exclusive_runs(*written, head.group, st.id) : std::vector<Run>{};
  head.group[st.id].runs = written ? std::move(*written) : std::vector<Run>{};
  record_writes(exclusive);
  std::vector<Range> mine = to_ranges(a[me], lb, ub, step);
  if (opts.exclusive) claim_exclusive(exclusive);
  prefetch_sections(accesses, mine, opts);
  return Plan(site, std::move(mine));
}

}  // namespace dsm::lb
