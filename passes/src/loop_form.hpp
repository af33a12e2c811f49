// The canonical form a `#pragma dsm parallel for` loop must have: a header the ranks can
// split by bounds alone, and a body every iteration of which runs to its end.
#pragma once

#include "report.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

namespace dsmpass {

// A `for (T v = L; v < U | v <= U; ++v | v++ | v += s)` header, or null fields when the
// header has another shape. `v = L` in place of the declaration is the same loop (C89 style,
// v an integer local declared before it): as in OpenMP, the loop's v is its own, so the
// rewritten loop declares it afresh.
struct Header {
  const clang::VarDecl* var = nullptr;
  const clang::Stmt* init = nullptr;  // the assignment `v = L`; null when the loop declares v
  const clang::Expr* lower = nullptr;
  const clang::Expr* upper = nullptr;
  bool inclusive = false;
  const clang::Expr* step = nullptr;  // null for ++
  const clang::Stmt* inc = nullptr;
  bool lower_exclusive = false;  // a descending loop's `v > L`: its last value is L + 1
};

Header parse_header(const clang::ForStmt* f);

// The header of a loop inside a marked one: as parse_header, or a descending loop
// `for (v = U; v >= L | v > L; --v | v-- | v -= s)`, given as the range it visits: `lower`
// is L (lower_exclusive for >), `upper` is U (inclusive).
Header parse_inner_header(const clang::ForStmt* f);

// Reports why `loop`, whose header parse_header rejects, is not canonical.
void report_not_canonical(const clang::ForStmt* loop, Reporter& report);

// Reports a comparison in the header of `loop` that does not mean what the ranks' split
// computes.
void check_comparison(const clang::ForStmt* loop, const Header& header, const clang::ASTContext& ctx, Reporter& report);

// Reports the statements of `body` that leave the loop other than by finishing an iteration.
void check_control(const clang::Stmt* body, const clang::ASTContext& ctx, Reporter& report);

}  // namespace dsmpass
