// `#pragma dsm single` before a statement: rank 0 runs it, every rank then waits for it at a
// barrier, after which its writes are everybody's (OpenMP's `single`, with its implied
// barrier). Rewritten as { if (dsm::rank() == 0) STATEMENT dsm::barrier(); }.
#pragma once

#include "pragma.hpp"
#include "report.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <vector>

namespace dsmpass {

// Rewrites the statement after each `single` mark of `marks`, or reports why it cannot: no
// statement follows, it declares a variable (which would then exist on rank 0 alone), or it
// lies inside one of the `marked` loops (whose iterations the ranks share out).
void rewrite_singles(clang::ASTContext& ctx, clang::Rewriter& rw, const std::vector<Mark>& marks,
                     const std::vector<const clang::ForStmt*>& marked, Reporter& report);

}  // namespace dsmpass
