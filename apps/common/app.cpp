// The command line of every application version, compiled once: CLI11 is header-only and
// costs seconds of compile time in every file that includes it (and dsm-pass parses what
// the application sources include).
#include "app.hpp"

#include "cli.hpp"

namespace app {

Options parse(int argc, char** argv, const char* what, Options defaults) {
  Options o = defaults;
  CLI::App cli{what};
  cli.add_option("--n", o.n, "problem size")->capture_default_str()->check(CLI::Range(3L, 1L << 20));
  cli.add_option("--iters", o.iters, "iterations")->capture_default_str()->check(CLI::Range(1L, 1L << 30));
  cli.add_flag("--check", o.check, "also compute sequentially on rank 0 and compare (exit 1 if different)");
  cli.add_flag("--trace", o.trace, "print the duration of every iteration");
  dsm::cli::parse_or_exit(cli, argc, argv);
  return o;
}

}  // namespace app
