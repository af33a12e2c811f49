#include "runtime/cpus.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace dsm::sys {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  for (long c = 0; cpus.empty() && c < sysconf(_SC_NPROCESSORS_ONLN); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

HostCpus host_cpus() {
  HostCpus cpus;
  cpus.mine = allowed_cpus();
  cpus.count = static_cast<int>(cpus.mine.size());
  const char* given = std::getenv("DSM_HOST_CPUS");
  if (!given || !*given) return cpus;
  char* end = nullptr;
  errno = 0;
  const long count = std::strtol(given, &end, 10);
  if (*end || errno == ERANGE || count < 1 || count > CPU_SETSIZE) {
    std::fprintf(stderr, "dsm: DSM_HOST_CPUS=%s: expected an integer from 1 to %d\n", given, CPU_SETSIZE);
    std::exit(2);
  }
  cpus.count = static_cast<int>(count);
  return cpus;
}

}  // namespace dsm::sys
