// dsmrun's command line: the options, checked one by one by CLI11 and together afterwards.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dsm::launcher {

// Bad use found only once the options are read together (or the hostfile, or the
// environment): exit status 2, as for the errors CLI11 finds.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  int n = 1;
  std::vector<std::string> hosts;
  std::string hostfile;
  std::string launch = "ssh {host}";
  bool launch_given = false;
  std::string launcher = "auto";
  std::string provider = "auto";
  std::string rendezvous_addr;  // IPv4 address the rendezvous listens on and tells the ranks
  bool bind = false;
  double timeout = 0;
  double join_timeout = 60;
  std::optional<unsigned> liveness;  // seconds a rank waits for a silent peer (DSM_LIVENESS)
  bool stats = false;
  std::string stats_json;
  double watch = 0;  // seconds between two tables of the local ranks (0: no live view)
  std::string lb;
  std::string lb_trace;  // absolute path of the balancer's CSV trace (DSM_LB_TRACE_CSV), or empty
  bool stdin_to_rank0 = true;  // --stdin 0 (else none: every rank reads /dev/null)
  std::vector<std::string> env;
  std::vector<std::string> command;
};

// The options of argv. --help and the errors CLI11 finds end the process here (status 0 and
// 2); bad use found afterwards is printed, and gives none (status 2).
std::optional<Options> parse_options(int argc, char** argv);

}  // namespace dsm::launcher
