// The CPUs this process may run on, and those its job may use on this host.
#pragma once

#include <vector>

namespace dsm::sys {

// The CPUs of this process's affinity mask, which a cpuset (Slurm, a container) or taskset
// restricts; every online CPU if the mask cannot be read.
std::vector<int> allowed_cpus();

// The CPUs this rank's job may use on this host, which its ranks here share: the one answer
// to whether they outnumber them (then a waiting rank sleeps at once) and to whether other
// programs crowd them (core_share.cpp).
struct HostCpus {
  std::vector<int> mine;  // allowed_cpus(): one, for a rank bound to a core
  // How many the job's ranks on this host share: DSM_HOST_CPUS, which dsmrun sets on its own
  // host to the CPUs it may use itself (a rank it binds has one of them), else mine's. Not
  // SLURM_CPUS_ON_NODE: in an srun step that counts the step's CPUs, which the mask already
  // shows where a task plugin binds them, and which nothing enforces where none does.
  int count = 0;
};
// Stops the program (exit status 2) when DSM_HOST_CPUS is not a count of CPUs.
HostCpus host_cpus();

}  // namespace dsm::sys
