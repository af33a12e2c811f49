// One run of dsmrun: places and starts the ranks, serves their rendezvous, forwards standard
// input to rank 0, watches them until every one has ended, and reports.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "job/board.hpp"
#include "options.hpp"
#include "rank.hpp"
#include "rendezvous.hpp"
#include "runtime/cpus.hpp"
#include "settings.hpp"
#include "spawn.hpp"
#include "stdin_forward.hpp"

namespace dsm::launcher {

class Job {
 public:
  explicit Job(Options o) : opt_(std::move(o)), token_(random_token()) {}
  // Ranks that died leave their shm endpoints' segments behind: remove this job's (the
  // statistics board among them).
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  // The job's exit status: 0, the first failure's, 1 when --stats-json cannot be written, or
  // 127 when the program cannot start here. Throws UsageError for bad use found in the hosts,
  // the hostfile or --rendezvous-addr, std::runtime_error when the job cannot start.
  int run();

 private:
  Environment environment(int r) const;
  void take_signals();
  void watch(const std::string& label);  // the local ranks' line each, from the board

  const Options opt_;
  const std::string token_;
  // The CPUs dsmrun may use: --bind spreads the ranks over these, in turn, not over the machine's.
  const std::vector<int> cpus_ = sys::allowed_cpus();
  std::vector<Rank> ranks_;
  std::string provider_;
  Processes processes_{opt_, ranks_, cpus_};
  Rendezvous rendezvous_{ranks_, token_};
  StdinForward stdin_{opt_.stdin_to_rank0};
  std::unique_ptr<board::Board> board_;  // this host's statistics board
  std::chrono::steady_clock::time_point watched_;
};

}  // namespace dsm::launcher
