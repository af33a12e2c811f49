// The geometry the sections of shared arrays are built from: the shape of what a pointer or
// array points to, and where a climb from a use of one through subscripts, dereferences and
// pointer arithmetic ends. The Analyzer's members that build the sections (and warn of
// writes every iteration makes, on which the ranks race) are in loop_sections.cpp.
#pragma once

#include "symbolic.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Type.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace dsmpass {

// The dimensions below the first of what a pointer or array points to, and its element.
struct Shape {
  std::vector<long> extent;  // elements of each dimension below the first
  bool known = true;         // false when a dimension has no constant size
  clang::QualType elem;

  long unit(size_t depth) const {  // elements one step of a pointer at `depth` covers
    long u = 1;
    for (size_t d = depth; d < extent.size(); ++d) u *= extent[d];
    return u;
  }
};

Shape shape_of(clang::QualType t, const clang::ASTContext& ctx);

// Where a climb from a use of a pointer into a shared array ends.
struct Reach {
  const clang::Expr* cur = nullptr;
  std::optional<Affine> at;  // flat index of what `cur` designates
  size_t depth = 0;          // steps of the pointer `cur` (or the one it was taken from) are unit(depth)
  bool lvalue = false;       // `cur` is the object a pointer designates, not the pointer
  // The subscript that did not fold, when it is the only step taken (sh_x[sh_col[k]]).
  const clang::Expr* opaque = nullptr;
  int steps = 0;
};

}  // namespace dsmpass
