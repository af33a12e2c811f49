// Command-line parsing shared by every tool and application: bad use exits with status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dsm::cli {

// Checks for numbers bounded on one side only: CLI11's NonNegativeNumber and PositiveNumber
// refuse a value by naming the largest double, three hundred digits of it.
inline CLI::Validator bounded_below(double low, bool strict) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", low);
  const std::string what = std::string(strict ? "above " : "at least ") + bound;
  return CLI::Validator(
      [low, strict, what](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "Value " + text + " is not a number";
        return (strict ? v > low : v >= low) ? std::string() : "Value " + text + " is not " + what;
      },
      "NUMBER " + what);
}
inline CLI::Validator at_least(double low) { return bounded_below(low, false); }
inline CLI::Validator above(double low) { return bounded_below(low, true); }

// Parses argv into `app`. --help prints and exits 0; a parse error prints CLI11's message and
// exits 2, the Unix status for bad usage (CLI11's own codes, 100 and up, would read as a
// program's failure in scripts and under dsmrun).
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
}

}  // namespace dsm::cli
