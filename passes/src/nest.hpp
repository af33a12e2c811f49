// `#pragma dsm parallel for ordered(2)`: a doacross nest of two loops (rows, columns) with
// `#pragma dsm ordered depend(...)` in its body, rewritten into a dsm::lb::Pipeline
// (<dsm/pipeline.hpp>) whose tiles run in the sequential order of every dependence.
#pragma once

#include "loop.hpp"
#include "pragma.hpp"
#include "report.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <optional>
#include <string>
#include <vector>

namespace dsmpass {

struct Nest {
  const clang::ForStmt* inner = nullptr;
  std::string var, var_type;  // the inner loop's
  bool var_unsigned = false, var_before = false;
  std::string lb, ub;  // its bounds' texts; ub exclusive
  clang::SourceRange header;
  const Section* carried = nullptr;  // the array the rows carry (its write section)
  long lookahead = 0;                // the largest d of a depend(sink: i - 1, j + d)
  std::vector<const Mark*> ordered;  // the `#pragma dsm ordered` lines of its body
};

// Checks the nest under `mark` (its outer loop analyzed as `outer`): two perfectly nested
// canonical loops, one written shared array, depend(sink) vectors the pipeline keeps.
// `ordered`: every `#pragma dsm ordered` of the file; those inside the nest are its own.
// Errors go to `report`; returns nothing when the nest cannot be rewritten.
std::optional<Nest> analyze_nest(const Mark& mark, const Loop& outer, const std::vector<const Mark*>& ordered,
                                 clang::ASTContext& ctx, Reporter& report);

// Rewrites the nest; `index` makes the generated names unique in the file.
void rewrite_nest(clang::Rewriter& rw, const Mark& mark, const Loop& outer, const Nest& nest, int index,
                  const std::string& file);

}  // namespace dsmpass
