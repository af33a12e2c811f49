// `#pragma dsm parallel for`: a PragmaHandler records where each one is (unknown pragmas
// never reach the AST, so the loops are matched to these marks afterwards).
#pragma once

#include <clang/Lex/Preprocessor.h>

#include <string>
#include <vector>

namespace dsmpass {

struct Mark {
  clang::SourceLocation hash;  // the '#' (or _Pragma)
  clang::SourceLocation end;   // end of the directive's line
  std::string problem;         // non-empty for a malformed `#pragma dsm ...`
};

// Registers the handler for every `#pragma dsm ...`; marks are appended to `marks`, which
// must outlive the preprocessor.
void add_pragma_handler(clang::Preprocessor& pp, std::vector<Mark>& marks);

}  // namespace dsmpass
