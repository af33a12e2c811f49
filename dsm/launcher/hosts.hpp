// Which host each rank runs on and how it starts there: from --hosts, a hostfile (with Open
// MPI's slots=N), or the Slurm allocation; and the libfabric provider that placement allows.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"

namespace dsm::launcher {

// How a rank is started: forked here, through the launch command (ssh), or as a one-task
// srun job step on its node.
enum class Start { fork, command, srun };

struct Placement {
  std::string host;
  bool local = true;  // on this host
  Start start = Start::fork;
};

struct Hosts {
  std::vector<Placement> ranks;  // one a rank
  std::string provider;          // "shm" or "tcp"
};

// Places opt.n ranks. Throws UsageError for options that contradict each other or a bad
// hostfile, std::runtime_error when the Slurm allocation cannot hold them.
Hosts assign_hosts(const Options& opt);

// The words of `s`, split at white space.
std::vector<std::string> split_words(const std::string& s);

}  // namespace dsm::launcher
