// Command-line parsing shared by every tool and application: bad use exits with status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace dsm::cli {

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
