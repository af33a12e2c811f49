// Whether another program shares this rank's core, measured for the runtime (a waiting rank
// polls only on a core of its own) and the balancer (a loaded rank's power).
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <dsm/dsm.hpp>

#include "runtime_hooks.hpp"

namespace dsm::detail {
namespace {

// CPU seconds of the job's other ranks on this host that run on `cpu` (bound to this rank's
// core when there are more ranks than cores), from /proc/<pid>/stat, and how many they are.
struct Peers {
  double seconds = 0;
  int count = 0;
};
Peers peers_on(int cpu, double hz) {
  Peers out;
  for (const int pid : host_peer_pids()) {
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
    if (field.size() < 37 || static_cast<int>(field[36]) != cpu) continue;
    out.seconds += static_cast<double>(field[11] + field[12]) / hz;
    ++out.count;
  }
  return out;
}

// How much of its core this rank could keep if it wanted all of it, against the share of the
// core other programs took while the job left it, from the per-core times of
// /proc/stat. A rank given little work gets its core at once after each barrier (Linux
// favours a thread that slept), so its own waiting shows no load; the core's occupancy does.
// The job's other ranks on the same core (more ranks than cores) are not other programs:
// they wait for each other at every barrier, and the balancer weighs them by their CPU time.
// Measured over 0.1 s at least (/proc/stat counts in 10 ms units), and only for a rank bound
// to one core (dsmrun --bind); none before the first 0.1 s, none for a rank not bound.
class CoreMeter {
 public:
  std::optional<double> update() {
    const double now = wtime();
    if (since_.wall >= 0 && now - since_.wall < 0.1) return share_;
    const Sample s = sample(now);
    if (s.cpu >= 0 && s.cpu == since_.cpu) {
      const double wall = s.wall - since_.wall, job = s.job - since_.job;
      const double others = std::max(0.0, s.busy - since_.busy - job), spare = wall - job;
      // Below 15 % of the core, others are system daemons; below a tick for each counter
      // read (the core's, this process's and each peer's), they are the counters' rounding.
      const double noise = std::max(0.15 * wall, (2.0 + s.peers) / s.hz);
      // The others' demand in cores (1: a thread always runnable) against the job's threads
      // on this core, which the kernel serves alike.
      const double demand = std::min(1.0, others / std::max(spare, others)), threads = 1.0 + s.peers;
      share_ = others < noise ? 1.0 : threads / (threads + demand);
    }
    since_ = s;
    return share_;
  }
  // Whether other ranks of the job run on this core (at the last sample).
  bool with_peers() const { return since_.peers > 0; }

 private:
  struct Sample {
    int cpu = -1;
    double wall = -1, job = 0, busy = 0, hz = 100;
    int peers = 0;
  };
  static bool bound() {
    static const bool one = [] {
      cpu_set_t set;
      return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1;
    }();
    return one;
  }
  static Sample sample(double now) {
    Sample s;
    s.wall = now;
    if (!bound()) return s;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const double hz = s.hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    const int cpu = sched_getcpu();
    const Peers peers = peers_on(cpu, hz);
    s.job = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6 + peers.seconds;
    s.peers = peers.count;
    std::FILE* f = std::fopen("/proc/stat", "re");
    if (!f) return s;
    char line[512];
    const std::string tag = "cpu" + std::to_string(cpu) + " ";
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, tag.c_str(), tag.size()) != 0) continue;
      unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
      if (std::sscanf(line + tag.size(), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                      &v[5], &v[6], &v[7]) >= 7) {
        s.busy = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / hz;
        s.cpu = cpu;
      }
      break;
    }
    std::fclose(f);
    return s;
  }
  Sample since_;
  std::optional<double> share_;
};

}  // namespace

CoreShare watch_core() {
  // The application thread's alone: barriers and the balancer's figures call it.
  static CoreMeter meter;
  const std::optional<double> share = meter.update();
  if (share) set_core_shared(*share < 1.0);
  return {share, meter.with_peers()};
}

}  // namespace dsm::detail
