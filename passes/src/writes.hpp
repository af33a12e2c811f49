// Writes of a marked loop that only sh_ arrays can take.
//
// Each rank runs only some of the iterations. A variable declared outside the loop (a sum,
// a counter, an ordinary array, a std::vector) then ends with this rank's part of the work
// instead of the sequential value, and memory reached through a pointer that is not an sh_
// array is either not shared at all or written without a descriptor the balancer needs.
// Variables declared inside the body belong to one iteration and are free to write. The
// functions the loop calls, where this translation unit has their bodies, write for it.
#pragma once

#include "report.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>

#include <string>
#include <vector>

namespace dsmpass {

// Reports an error for each such write in the body of `loop`, once per variable. Writes to
// `var` (the loop variable) are left to the caller's own check.
// `privates` names the variables of private(...) and firstprivate(...) clauses, which the loop
// may write (each rank has its own).
void check_writes(const clang::ForStmt* loop, const clang::VarDecl* var, clang::ASTContext& ctx, Reporter& report,
                  const std::vector<std::string>& privates = {});

}  // namespace dsmpass
