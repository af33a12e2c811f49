// Measuring a plan's ranges: wall, CPU and core-waiting time of the application thread
// inside each range, turned at the loop's end into the figures this rank publishes with its
// next barrier arrival.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <utility>

namespace dsm::lb {

namespace runtime {

// The CPU clock of the thread, and its waiting from /proc/thread-self/schedstat; none where
// the kernel keeps no schedule statistics. The clock is read first: reading it brings the
// kernel's account of the running thread up to date, which schedstat alone does not (it
// lags by up to a tick, longer than a short range). Without `with_waiting`, the waiting
// time is the one read last: no waiting counts until the next read.
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

namespace {

// The share of its core this rank's thread got since `last` (which it updates): CPU over CPU
// plus waiting for the core (read when `read_waiting`, which it updates), and, for a rank
// bound to one core, at most what it could keep against other programs there
// (detail::watch_core). At least 0.05. `shared`: another program takes that core's time.
// `got`: the thread's CPU over CPU plus waiting over its last half second or so of running
// (`recent`, which it updates), 1 while it waited for nothing.
struct CoreShareReading {
  double share = 1;
  bool shared = false;
  double got = 1;
};
CoreShareReading core_share(SchedTimes& last, SchedTimes& recent, bool& read_waiting) {
  const SchedTimes sched = sched_times(read_waiting);
  const double cpu = sched.cpu - last.cpu, waiting = sched.waiting - last.waiting;
  const auto got_of = [](const SchedTimes& t) { return t.cpu > 0 && t.waiting > 0 ? t.cpu / (t.cpu + t.waiting) : 1.0; };
  const double got = got_of({cpu, waiting});
  constexpr double memory_seconds = 0.5;
  const double keep = std::exp(-std::max(0.0, cpu + waiting) / memory_seconds);
  recent = {recent.cpu * keep + std::max(0.0, cpu), recent.waiting * keep + std::max(0.0, waiting)};
  const detail::CoreShare reading = detail::watch_core();
  const std::optional<double> core = reading.share;
  const bool shared = core && *core < 1.0;
  // Ranks of the job that share the core take turns with this one: what its thread got
  // says nothing about other programs then, only the core's occupancy does.
  const bool peers = reading.with_peers;
  read_waiting = !core || shared || peers;
  last = sched;
  return {std::max(peers ? core.value_or(1.0) : std::min(got, core.value_or(1.0)), 0.05), shared,
          std::clamp(got_of(recent), 0.05, 1.0)};
}

}  // namespace

void drop_departed(Glue& g) {
  const std::uint64_t now = detail::barrier_count();
  if (now == g.pending_barrier) return;
  g.pending.clear();  // the earlier figures left with that barrier
  g.reduction.clear();
  g.pending_barrier = now;
}

void attach_to_barrier(const Glue& g) {
  detail::set_barrier_blob(encode_figures({detail::page_transfer_seconds(), g.pending, g.reduction, detail::shared_page_seconds()}));
}

}  // namespace runtime

using namespace runtime;

Plan::Plan(Site& site, std::vector<Range> ranges)
    : site_(&site),
      ranges_(std::move(ranges)),
      wall_(ranges_.size(), 0.0),
      cpu_(ranges_.size(), 0.0),
      waiting_(ranges_.size(), 0.0) {}

Plan::Plan(Site& site, std::unique_ptr<Taking> taking) : site_(&site), taking_(std::move(taking)) {}

Plan::Plan(Plan&& o) noexcept
    : site_(std::exchange(o.site_, nullptr)),
      ranges_(std::move(o.ranges_)),
      taking_(std::move(o.taking_)),
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
  if (taking_) finish_taking(*taking_);
  publish();
}

Plan::iterator Plan::begin() { return iterator(this, taking_ ? next(done) : ranges_.empty() ? done : 0); }
Plan::iterator Plan::end() { return iterator(this, done); }

std::size_t Plan::next(std::size_t index) {
  if (!taking_) return index + 1 < ranges_.size() ? index + 1 : done;
  Range r{};
  if (!take_next(*taking_, r)) return done;
  ranges_.push_back(r);
  wall_.push_back(0);
  cpu_.push_back(0);
  waiting_.push_back(0);
  return ranges_.size() - 1;
}

const Range& Plan::iterator::operator*() const {
  plan_->range_started(index_);
  return plan_->ranges_[index_];
}

Plan::iterator& Plan::iterator::operator++() {
  plan_->range_finished(index_);
  index_ = plan_->next(index_);
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
  if (taking_) {
    site_->state().takes += taking_->takes;
    site_->state().iterations_taken += taking_->iterations_taken;
  }
  site_->state().in_ranges += std::accumulate(wall_.begin(), wall_.end(), 0.0);
  Glue& g = glue();
  g.cpu_in_ranges += std::accumulate(cpu_.begin(), cpu_.end(), 0.0);
  if (nprocs() <= 1) return;
  const Site::State& st = site_->state();
  drop_departed(g);
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
  const CoreShareReading reading = core_share(g.last_sched, g.got_recent, g.read_waiting);
  double share = reading.share;
  const bool shared = reading.shared;
  if (shared) {
    constexpr double long_execution = 10e-3;
    const double needs = std::accumulate(cpu_.begin(), cpu_.end(), 0.0) / share;
    const double headroom = run_options().headroom;
    share *= headroom + (1 - headroom) * std::min(1.0, needs / long_execution);
  }
  std::vector<double> taken(ranges_.size());
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    taken[i] = cpu_[i] / share + std::max(0.0, wall_[i] - cpu_[i] - waiting_[i]);
  std::vector<Span> ran;
  if (taking_) fold_ran(*taking_, taken, cpu_, ran);
  std::erase_if(g.pending, [&](const SiteFigures& f) { return f.site == st.id; });
  g.pending.push_back(
      {st.id, st.execution, {std::move(taken), cpu_, st.period, shared, st.step_cpu, std::move(ran), reading.got}, st.lb, st.ub,
       st.step});
  attach_to_barrier(g);
}

}  // namespace dsm::lb
