// Diagnostics of the pass: printed through Clang (file:line:col with the source line) and
// kept in a list for the --emit-rsd JSON.
#pragma once

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dsmpass {

struct Diagnostic {
  unsigned line = 0;
  unsigned column = 0;
  bool error = false;
  std::string message;
};

class Reporter {
 public:
  Reporter(clang::DiagnosticsEngine& engine, const clang::SourceManager& sm)
      : engine_(engine), sm_(sm) {}
  void error(clang::SourceLocation loc, const std::string& message) { report(loc, true, message); }
  void warning(clang::SourceLocation loc, const std::string& message) { report(loc, false, message); }
  const std::vector<Diagnostic>& list() const { return list_; }
  size_t error_count() const;

 private:
  void report(clang::SourceLocation loc, bool error, const std::string& message);
  clang::DiagnosticsEngine& engine_;
  const clang::SourceManager& sm_;
  std::vector<Diagnostic> list_;
  std::set<std::pair<unsigned, std::string>> reported_;
};

}  // namespace dsmpass
