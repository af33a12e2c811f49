// Writes to sh_ arrays outside marked loops: code that every rank runs.
//
// A rank that writes its block in every execution of a loop holds those pages across
// barriers and writes them without a fault. When code outside the loops writes such a page
// (the same update on every rank, as an OpenMP program's sequential part would), the others
// must still read it as the last barrier left it, so each such write is wrapped as
// dsm::lb::written(sh_a[i]) = ..., which lets the runtime keep those bytes first (see
// balancer.hpp). Writes inside marked loops, and in the functions those loops call, are
// covered by the loops' own claims and stay as they are.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <string>
#include <vector>

namespace dsmpass {

struct OutsideWrite {
  unsigned line;
  std::string array;  // the sh_ array written
};

// Wraps the writes of the main file outside the `marked` loops and the functions they call
// (where the file has their bodies); returns them in source order. Writes spelled inside a
// macro's expansion are left alone: their text is the macro's.
std::vector<OutsideWrite> wrap_outside_writes(clang::ASTContext& ctx, clang::Rewriter& rw,
                                              const std::vector<const clang::ForStmt*>& marked);

}  // namespace dsmpass
