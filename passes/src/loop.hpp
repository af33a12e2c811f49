// What the pass learns about one `#pragma dsm parallel for` loop: its canonical form, the
// ranges of inner loop variables, and one regular section per distinct `sh_` reference.
#pragma once

#include "report.hpp"
#include "symbolic.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>

#include <optional>
#include <string>
#include <vector>

namespace dsmpass {

enum class Access { read = 1, write = 2, read_write = 3 };
const char* name(Access a);

struct Section {
  std::string array;      // the shared array as written, e.g. sh_g
  std::string base;       // pointer to its first element, e.g. &sh_g[0][0]
  std::string elem_type;  // innermost element type
  long row_length = 0;    // elements per row for multi-dimensional arrays, else 0
  Access access = Access::read;
  bool whole = false;     // the subscript could not be proven affine
  Poly coef;              // elements per iteration of the loop variable
  Bound lo, hi;           // touched elements relative to coef*i, inclusive
  // Whether an iteration may touch every element of [lo, hi]: not when an inner loop
  // advances by more than one element (a column, corr[j][i]), whose hull has gaps.
  bool dense = true;
  // Where an inner loop steps by more than the rest of the subscript spans (a column,
  // A[k][j] over k): iteration i touches only the blocks coef*i + [lo, first_hi] +
  // b*stride, b < blocks, of its hull [lo, hi].
  struct Strided {
    long stride = 0;
    Bound first_hi, blocks;
  };
  std::optional<Strided> strided;
  // A read of a sparse loop, whole for every purpose but fetching: coef, lo and hi give
  // positions, and the elements are those positions (+ offset) or, through `index`, the
  // elements index[position]. Over a CSR row (`bounds`), the positions run from
  // bounds[coef*i + lo] to bounds[coef*i + hi], excluded; otherwise over coef*i + [lo, hi].
  struct Sparse {
    std::string bounds, index;  // the arrays' bases as written; empty when not used
    Poly offset;
  };
  std::optional<Sparse> sparse;
};

// One use of a shared array, before the sections merge: what a doacross nest derives its
// dependence distances from.
struct Use {
  std::string array, base;  // as in Section
  Access access = Access::read;
  std::optional<Affine> index;  // the element's flat index; none when not affine
  clang::SourceLocation at;
};

struct InnerVar {
  std::string name;
  Bound lo, hi;  // inclusive, widened over the marked loop's whole iteration space
};

struct Loop {
  const clang::ForStmt* stmt = nullptr;
  unsigned line = 0;
  std::string var;
  std::string var_type;
  bool var_unsigned = false;
  bool var_before = false;  // declared before the loop (for (i = lb; ...)): assigned, not declared
  std::string lb, ub, step;  // texts; ub is exclusive
  std::vector<InnerVar> inner;
  std::vector<Section> sections;
  std::vector<Use> uses;
  // The parentheses of the loop header, which the rewriter replaces.
  clang::SourceRange header;
};

// Checks that the loop is canonical and extracts its descriptors. Errors and warnings go to
// `report`; returns nothing when the loop cannot be rewritten. `instances` are the loop's
// copies in the instantiations of the template it is in, whose writes are checked too.
// `privates`: the variables of the directive's private(...) and firstprivate(...) clauses.
// `carried_ok`: a doacross nest (ordered(2)), whose dependences between iterations are
// kept by its pipeline, not warned of.
std::optional<Loop> analyze_loop(const clang::ForStmt* loop, const std::vector<const clang::ForStmt*>& instances,
                                 clang::ASTContext& ctx, Reporter& report, const std::vector<std::string>& privates,
                                 bool carried_ok = false);

}  // namespace dsmpass
