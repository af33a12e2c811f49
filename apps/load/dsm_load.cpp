// dsm-load: the paper's artificial load. A tight loop writing an array of 10240 longs,
// bound to one core, where it takes half the core from whatever else runs there. Either
// constant, or on/off with a period (on for duty * period, then idle for the rest).
// Stops after --seconds, or on SIGTERM/SIGINT (exit code 0 either way).
#include <sched.h>
#include <unistd.h>

#include "cli.hpp"
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {
std::atomic<bool> g_stop{false};
// volatile keeps the writes: nothing ever reads the array.
volatile long g_array[10240];
extern "C" void on_signal(int) { g_stop = true; }

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The load proper.
void spin_until(double end_s, Clock::time_point t0) {
  long v = 0;
  while (!g_stop && since(t0) < end_s)
    for (int rep = 0; rep < 16; ++rep)
      for (long i = 0; i < 10240; ++i) g_array[i] = v++;
}

void idle_until(double end_s, Clock::time_point t0) {
  while (!g_stop && since(t0) < end_s) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}
}  // namespace

int main(int argc, char** argv) {
  int core = 1;
  double period = 0, duty = 0.5, seconds = 0;
  CLI::App cli{"dsm-load: artificial CPU load bound to one core (a loop writing 10240 longs)"};
  cli.add_option("--core", core, "core to run on")->capture_default_str()->check(dsm::cli::at_least(0));
  cli.add_option("--period", period, "on/off period in seconds (0: constant load)")->capture_default_str()->check(dsm::cli::at_least(0));
  cli.add_option("--duty", duty, "fraction of each period the load is on")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cli.add_option("--seconds", seconds, "stop after this long (0: until killed)")->capture_default_str()->check(dsm::cli::at_least(0));
  dsm::cli::parse_or_exit(cli, argc, argv);

  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (core >= cores) {
    std::fprintf(stderr, "dsm-load: --core %d does not exist (this machine has cores 0..%ld)\n", core, cores - 1);
    return 2;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "dsm-load: cannot bind to core %d: %s\n", core, std::strerror(errno));
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  const auto t0 = Clock::now();
  const double end = seconds > 0 ? seconds : 1e300;
  if (period == 0) {
    spin_until(end, t0);
    return 0;
  }
  for (double start = 0; !g_stop && start < end; start += period) {
    spin_until(std::min(end, start + duty * period), t0);
    idle_until(std::min(end, start + period), t0);
  }
  return 0;
}
