// dsm-lbsim: compares the balancing policies on modelled ranks (see balancer/sim.hpp).
//   dsm-lbsim --ranks 8,64,1024 --load constant,onoff [--take]
// prints, per rank count and load, each policy's efficiency against the ideal (with --take,
// each policy also with work taken inside executions, as POLICY+take).
#include "sim.hpp"

#include "cli.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

int main(int argc, char** argv) {
  using namespace dsm::lb;
  CLI::App app{"Load-balancer simulator: efficiency of each policy against the ideal"};
  std::vector<int> ranks{8, 64, 1024};
  std::vector<std::string> loads{"constant", "onoff"};
  std::vector<std::string> policies{"static", "shift", "multi", "locality", "fgdls", "auto"};
  SimConfig c;
  app.add_option("--ranks", ranks, "rank counts")->delimiter(',')->check(CLI::Range(1, 1 << 16));
  app.add_option("--load", loads, "none|constant|onoff|random")->delimiter(',');
  app.add_option("--policy", policies, "policies to compare")->delimiter(',');
  app.add_option("--iterations", c.iterations, "loop iterations")->check(CLI::Range(1L, 1L << 26));
  app.add_option("--executions", c.executions, "executions of the loop")->check(CLI::Range(1, 1 << 20));
  app.add_option("--loaded", c.loaded_fraction, "fraction of ranks with a competing load")->check(CLI::Range(0.0, 1.0));
  app.add_option("--share", c.load_share, "CPU share a loaded rank keeps")->check(CLI::Range(0.01, 1.0));
  app.add_option("--period", c.period, "executions per on/off cycle")->check(CLI::Range(2, 1 << 20));
  app.add_option("--noise", c.noise, "relative timing noise")->check(CLI::Range(0.0, 0.9));
  app.add_option("--iteration-seconds", c.iteration_seconds, "cost of one iteration")->check(dsm::cli::above(0));
  app.add_flag("--triangular", c.triangular, "iteration k costs 2k/n times the mean");
  app.add_option("--row-bytes", c.row_bytes, "bytes written per iteration")->check(CLI::Range(1L, 1L << 24));
  app.add_option("--page-seconds", c.page_seconds, "cost of moving one page")->check(dsm::cli::at_least(0));
  app.add_option("--warmup", c.options.warmup, "executions before the first change")->check(CLI::Range(0, 1 << 20));
  app.add_option("--threshold", c.options.threshold, "imbalance tolerated")->check(CLI::Range(0.0, 100.0));
  app.add_option("--seed", c.seed, "random seed");
  bool take = false;
  app.add_flag("--take", take, "also run each policy with work taken inside executions (POLICY+take)");
  app.add_option("--take-seconds", c.take_seconds, "cost of one take besides its pages")
      ->capture_default_str()
      ->check(dsm::cli::at_least(0));
  dsm::cli::parse_or_exit(app, argc, argv);
  try {
    // Every argument is checked before the table starts.
    std::vector<Policy> chosen;
    for (const auto& p : policies) chosen.push_back(parse_policy(p, "--policy"));
    for (const auto& l : loads) parse_load(l);
    if (c.iterations < *std::max_element(ranks.begin(), ranks.end()))
      throw std::invalid_argument("--iterations must be at least the largest rank count");
    std::printf("%-6s %-9s %-14s %10s %8s %12s %10s %8s %12s\n", "ranks", "load", "policy", "efficiency", "changes",
                "iters_moved", "pages_moved", "takes", "iters_taken");
    for (const auto& l : loads)
      for (int r : ranks) {
        c.load = parse_load(l);
        c.ranks = r;
        for (Policy p : chosen)
          for (bool taking : {false, true}) {
            if (taking && !take) continue;
            c.take = taking;
            const SimResult res = simulate(c, p);
            const std::string name = std::string(policy_name(p)) + (taking ? "+take" : "");
            std::printf("%-6d %-9s %-14s %10.3f %8ld %12ld %10ld %8ld %12ld\n", r, l.c_str(), name.c_str(),
                        res.efficiency, res.redistributions, res.iterations_moved, res.pages_moved, res.takes,
                        res.iterations_taken);
            std::fflush(stdout);
          }
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsm-lbsim: %s\n", e.what());
    return 2;
  }
}
