// Integration check of redistribute() through dsmrun: a loop whose rows move at every step
// (a sliding window) runs for many steps; each rank checks the result, and rank 0 fails if
// its resident memory grew by more than 2 MiB over the last 80 % of the steps (the protocol's
// own memory is bounded by a small DSM_GC_BOUND in the test). Each step's first row was a new
// key in the table of loops that others may follow, kept for ever: 8 MiB over 80,000 steps.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

long rss_kib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, "VmRSS:", 6)) kib = std::atol(line + 6);
  std::fclose(f);
  return kib;
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long w = 64, steps = argc > 1 ? std::atol(argv[1]) : 100000;
  long* sh = dsm::alloc<long>(steps + w);
  static dsm::lb::Site site("sliding_window.cpp:window");
  long before = 0;
  for (long t = 0; t < steps; ++t) {
    if (t == steps / 5) before = rss_kib();
    const dsm::lb::Section acc[] = {dsm::lb::section(sh, dsm::lb::Access::write, 1, 0, 0)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(site, t, t + w, 1, acc))
      for (long i = r.lb; i < r.ub; i += r.step) sh[i] = t;
    dsm::barrier();
  }
  const long grew = rss_kib() - before;
  long wrong = 0;
  for (long i = 0; i < steps + w - 1; ++i) wrong += sh[i] != std::min(i, steps - 1);
  std::printf("sliding_window: rank %d: %ld wrong elements; resident memory grew %ld KiB over the last %ld steps\n",
              dsm::rank(), wrong, grew, steps - steps / 5);
  const int status = wrong != 0 || (dsm::rank() == 0 && grew > 2048) ? 1 : 0;
  dsm::finalize();
  return status;
}
