// The CPUs this process may run on.
#pragma once

#include <vector>

namespace dsm::sys {

// The CPUs of this process's affinity mask, which a cpuset (Slurm, a container) or taskset
// restricts; every online CPU if the mask cannot be read.
std::vector<int> allowed_cpus();

}  // namespace dsm::sys
