// The ranks' processes: started here by fork, through the launch command (ssh) or by srun,
// each in a process group of its own; reaped, with the reason of a failure told; and all
// stopped when one fails, at a signal, or when the job runs out of time.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"
#include "rank.hpp"
#include "settings.hpp"

namespace dsm::launcher {

// Why execvp would fail to start `program` (not found in PATH, not executable, a directory),
// or "" when it would start.
std::string program_problem(const std::string& program);

// The launch command with {host} replaced, followed by the rank's command line `line`, as
// an argv.
std::vector<std::string> launch_argv(const std::string& launch, const std::string& host, const std::string& line);

class Processes {
 public:
  // `cpus`: those --bind spreads the forked ranks over.
  Processes(const Options& opt, std::vector<Rank>& ranks, const std::vector<int>& cpus)
      : opt_(opt), ranks_(ranks), cpus_(cpus) {}

  // Starts rank r with `env`. `rank_stdin()` gives the descriptor it reads as its standard
  // input (closed here once it started), -1 to inherit dsmrun's; a rank started through the
  // launch command reads the job's token there instead, and is not asked.
  void spawn(int r, const Environment& env, const std::function<int()>& rank_stdin);
  // Kills the ranks started so far and waits for them: the job cannot start.
  void abort();

  // Takes every rank that ended or stopped since the last call. `drain(r)` reads what rank r
  // sent before it ended, so that a rank that finalized and exited 0 is not a failure.
  void reap(const std::function<void(int)>& drain);
  // Stops the job with exit status `code` (the first failure's): SIGTERM now, SIGKILL from
  // enforce_deadlines 2 s later.
  void fail(int code);
  // Fails the job for a rank that did not join within --join-timeout (`elapsed`: seconds since
  // the ranks started), and kills the ranks that outlived their SIGTERM.
  void enforce_deadlines(double elapsed);

  bool any_running() const;
  bool stopping() const { return stopping_; }
  int exit_code() const { return exit_code_; }

 private:
  void kill_all(int sig);
  void report_exit(int r);

  const Options& opt_;
  std::vector<Rank>& ranks_;
  const std::vector<int>& cpus_;
  int exit_code_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_since_;
  bool killed_hard_ = false;
};

}  // namespace dsm::launcher
