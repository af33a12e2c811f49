// Whether other programs take CPU time a rank needs, measured for the runtime (a waiting rank
// polls only while they do not) and the balancer (a loaded rank's power).
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <dsm/dsm.hpp>

#include "runtime/cpus.hpp"
#include "runtime/runtime_hooks.hpp"

namespace dsm::detail {
namespace {

// CPU seconds of the job's other ranks on this host that ran last on one of `cpus` (sorted),
// from /proc/<pid>/stat, and how many they are; none without the host's statistics board,
// which lists them.
struct Peers {
  double seconds = 0;
  int count = 0;
};
std::optional<Peers> peers_on(const std::vector<int>& cpus, double hz) {
  const std::optional<std::vector<int>> pids = host_peer_pids();
  if (!pids) return std::nullopt;
  Peers out;
  for (const int pid : *pids) {
    char path[48], line[1024];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    std::FILE* f = std::fopen(path, "re");
    if (!f) continue;  // gone: its time no longer matters
    const bool read = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    const char* rest = read ? std::strrchr(line, ')') : nullptr;  // the name may hold spaces
    if (!rest) continue;
    // Fields from the third (state) on: utime and stime are the 14th and 15th, the CPU it
    // last ran on the 39th.
    std::vector<unsigned long long> field;
    for (const char* p = rest + 1; *p && field.size() < 37;) {
      while (*p == ' ') ++p;
      char* end = nullptr;
      field.push_back(std::strtoull(p, &end, 10));
      while (*end && *end != ' ') ++end;
      p = end;
    }
    if (field.size() < 37 || !std::binary_search(cpus.begin(), cpus.end(), static_cast<int>(field[36]))) continue;
    out.seconds += static_cast<double>(field[11] + field[12]) / hz;
    ++out.count;
  }
  return out;
}

// Seconds the CPUs in `cpus` (sorted) ran programs (user, nice and system time), from
// /proc/stat; none unless every one of them is listed there. Not steal time (the
// hypervisor's: a rank that sleeps gets none of it back) nor interrupts (mostly the job's
// own messages).
std::optional<double> busy_seconds(const std::vector<int>& cpus, double hz) {
  std::FILE* f = std::fopen("/proc/stat", "re");
  if (!f) return std::nullopt;
  double busy = 0;
  std::size_t found = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    // "cpuN user nice system ...", N a digit right after "cpu" (not the "cpu " total line).
    if (std::strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9') continue;
    char* end = nullptr;
    const long cpu = std::strtol(line + 3, &end, 10);
    unsigned long long user = 0, nice = 0, system = 0;
    if (std::sscanf(end, "%llu %llu %llu", &user, &nice, &system) != 3 ||
        !std::binary_search(cpus.begin(), cpus.end(), static_cast<int>(cpu)))
      continue;
    busy += static_cast<double>(user + nice + system) / hz;
    ++found;
  }
  std::fclose(f);
  if (found != cpus.size()) return std::nullopt;
  return busy;
}

// Whether other programs take CPU time this rank's job needs, from the per-CPU times of
// /proc/stat against the job's own CPU time on this host, over 0.1 s at least (/proc/stat
// counts in 10 ms units); nothing is known before the first 0.1 s.
//
// A rank bound to one core (dsmrun --bind) gets a share: how much of its core it could keep
// if it wanted all of it, against the share of the core other programs took while the job
// left it. A rank given little work gets its core at once after each barrier (Linux favours
// a thread that slept), so its own waiting shows no load; the core's occupancy does. The
// job's other ranks on the same core (more ranks than cores) are not other programs: they
// wait for each other at every barrier, and the balancer weighs them by their CPU time.
//
// Ranks not bound move between the CPUs they may use, and no core is theirs: they are
// crowded when their application threads and the others' demand (in CPUs) exceed those
// CPUs, and then each one's polling takes CPU time that another rank's work needs.
class CoreMeter {
 public:
  struct Reading {
    std::optional<double> share;  // bound ranks
    bool crowded = false;
    bool with_peers = false;  // bound ranks: other ranks of the job run on this core
    bool known = false;       // measured at all
  };
  Reading update() {
    const double now = wtime();
    // Long enough, for ranks not bound, that the counters' rounding (a tick for each one
    // read: each CPU's, this process's and each peer's) stays below 15 % of one CPU.
    const double window = since_.bound() ? 0.1 : std::max(0.1, rounding(since_) / 0.15);
    if (since_.wall >= 0 && now - since_.wall < window) return reading_;
    const Sample s = sample(now);
    if (s.valid && since_.valid && s.cpu == since_.cpu) {
      const double wall = s.wall - since_.wall, job = s.job - since_.job, cpus = measured_cpus(s);
      const double others = std::max(0.0, s.busy - since_.busy - job), spare = cpus * wall - job;
      // Below 15 % of a CPU, others are system daemons; below the rounding, nothing.
      const double noise = std::max(0.15 * wall, rounding(s));
      const double threads = 1.0 + s.peers;
      if (s.bound()) {
        // The others' demand in cores (1: a thread always runnable) against the job's
        // threads on this core, which the kernel serves alike.
        const double demand = std::min(1.0, others / std::max(spare, others));
        reading_.share = others < noise ? 1.0 : threads / (threads + demand);
        reading_.crowded = *reading_.share < 1.0;
      } else {
        // What the others used is their demand while the ranks sleep, less while they poll;
        // a program on a CPU no rank needs crowds nobody.
        reading_.crowded = others >= noise && threads + others / wall > cpus + 0.15;
      }
      reading_.with_peers = s.bound() && s.peers > 0;
      reading_.known = true;
    }
    since_ = s;
    return reading_;
  }

 private:
  struct Sample {
    int cpu = -1;  // the core of a bound rank, -1 for one not bound
    double wall = -1, job = 0, busy = 0, hz = 100;
    int peers = 0;
    bool valid = false;
    bool bound() const { return cpu >= 0; }
  };
  // A rank not bound moves between its CPUs, as many as its job may use here at most.
  double measured_cpus(const Sample& s) const {
    return s.bound() ? 1.0 : double(std::min<std::size_t>(cpus_.count, cpus_.mine.size()));
  }
  double rounding(const Sample& s) const { return (measured_cpus(s) + 1.0 + s.peers) / s.hz; }
  Sample sample(double now) const {
    Sample s;
    s.wall = now;
    if (cpus_.mine.empty()) return s;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const double hz = s.hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    if (cpus_.mine.size() == 1) s.cpu = sched_getcpu();
    const std::vector<int> cpus = s.bound() ? std::vector<int>{s.cpu} : cpus_.mine;
    // Without the board a bound rank counts peers on its core as other programs, as the
    // balancer then does; ranks not bound would count all of them, so they know nothing.
    const std::optional<Peers> peers = peers_on(cpus, hz);
    if (!peers && !s.bound()) return s;
    s.job = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6 + peers.value_or(Peers{}).seconds;
    s.peers = peers.value_or(Peers{}).count;
    const std::optional<double> busy = busy_seconds(cpus, hz);
    s.busy = busy.value_or(0);
    s.valid = busy.has_value();
    return s;
  }
  const sys::HostCpus cpus_ = sys::host_cpus();
  Sample since_;
  Reading reading_;
};

}  // namespace

CoreShare watch_core() {
  // The application thread's alone: dsm::init, barriers, lock requests and the balancer's
  // figures call it.
  static CoreMeter meter;
  const CoreMeter::Reading r = meter.update();
  if (r.known) set_core_shared(r.crowded);
  return {r.share, r.with_peers};
}

}  // namespace dsm::detail
