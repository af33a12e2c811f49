// The Clang frontend action of dsm-pass: finds marked loops in the main file, analyzes
// them, and produces the rewritten source and the descriptor JSON.
#pragma once

#include <clang/Tooling/Tooling.h>

#include <memory>
#include <string>

namespace dsmpass {

struct Result {
  bool ran = false;           // the file parsed and the pass looked at it
  bool failed = false;        // a marked loop could not be handled
  bool has_marks = false;
  std::string rewritten;      // whole rewritten file
  std::string rsd_json;       // descriptors and diagnostics
};

// `display_name` is the source path as the user gave it, used in #line directives.
std::unique_ptr<clang::tooling::FrontendActionFactory> make_action_factory(Result& result, std::string display_name);

}  // namespace dsmpass
