#include "report.hpp"

#include <algorithm>

namespace dsmpass {

size_t Reporter::error_count() const {
  return std::count_if(list_.begin(), list_.end(), [](const Diagnostic& d) { return d.error; });
}

void Reporter::report(clang::SourceLocation loc, bool error, const std::string& message) {
  // A template's loop is checked in its pattern and in each instantiation.
  if (!reported_.insert({loc.getRawEncoding(), message}).second) return;
  const auto level = error ? clang::DiagnosticsEngine::Error : clang::DiagnosticsEngine::Warning;
  engine_.Report(loc, engine_.getCustomDiagID(level, "%0")) << message;
  const clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getExpansionLoc(loc));
  list_.push_back({p.isValid() ? p.getLine() : 0, p.isValid() ? p.getColumn() : 0, error, message});
}

}  // namespace dsmpass
