// The command line of every application version, compiled once: CLI11 is header-only and
// costs seconds of compile time in every file that includes it (and dsm-pass parses what
// the application sources include).
#include "app.hpp"

#include "cli.hpp"

#include <cstdio>
#include <cstdlib>

namespace app {

Options parse(int argc, char** argv, const char* what, Options defaults, const std::vector<std::string>& problems) {
  Options o = defaults;
  CLI::App cli{what};
  cli.add_option("--n", o.n, "problem size")->capture_default_str()->check(CLI::Range(3L, 1L << 20));
  cli.add_option("--iters", o.iters, "iterations")->capture_default_str()->check(CLI::Range(1L, 1L << 30));
  cli.add_flag("--check", o.check, "also compute sequentially on rank 0 and compare (exit 1 if different)");
  cli.add_flag("--trace", o.trace, "print the duration of every iteration");
  cli.add_option("--shares", o.shares, "hand versions: rank r's rows in proportion to the r-th weight (a fixed split)")
      ->delimiter(',')
      ->check(dsm::cli::above(0));
  std::string problem = problems.empty() ? "" : problems.front();
  if (!problems.empty()) cli.add_option("--problem", problem, "the problem to solve")->capture_default_str()->check(CLI::IsMember(problems));
  dsm::cli::parse_or_exit(cli, argc, argv);
  for (std::size_t k = 0; k < problems.size(); ++k)
    if (problems[k] == problem) o.problem = static_cast<int>(k);
  return o;
}

std::vector<double> shares_for(const Options& o, int nprocs) {
  if (!o.shares.empty() && o.shares.size() != static_cast<std::size_t>(nprocs)) {
    std::fprintf(stderr, "--shares: %zu weights for %d ranks\n", o.shares.size(), nprocs);
    std::exit(2);
  }
  return o.shares;
}

}  // namespace app
