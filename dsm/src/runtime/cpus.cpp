#include "runtime/cpus.hpp"

#include <sched.h>
#include <unistd.h>

#include "runtime/env_setting.hpp"

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
  cpus.count = static_cast<int>(env_int("DSM_HOST_CPUS", cpus.mine.size(), 1, CPU_SETSIZE));
  return cpus;
}

}  // namespace dsm::sys
