// Which host each rank runs on and how it starts there: from --hosts, a hostfile (with Open
// MPI's slots=N), or the Slurm allocation; and the libfabric provider that placement allows.
#pragma once

#include <cstdint>
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

// Why `ranks` ranks over `provider` cannot start on a host with `available` bytes of memory
// available, or empty. Each rank takes memory before the program allocates any (libfabric
// 1.17, resident memory of an idle rank, measured): tcp's buffer pools about 128 MiB, the
// private part of an shm rank about 24 MiB. A job past it is killed part way by the
// kernel's out-of-memory killer, which may take other users' programs with it.
std::string memory_refusal(int ranks, const std::string& provider, std::uint64_t available);
// This host's available memory in bytes (MemAvailable of /proc/meminfo); 0 if unknown.
std::uint64_t memory_available();

// The words of `s`, split at white space.
std::vector<std::string> split_words(const std::string& s);

}  // namespace dsm::launcher
