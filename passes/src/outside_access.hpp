// Accesses to sh_ arrays outside marked loops: code that every rank runs.
//
// A rank that writes its block in every execution of a loop holds those pages across
// barriers and writes them without a fault. When code outside the loops writes such a page
// (the same update on every rank, as an OpenMP program's sequential part would), or reads
// one that the loop after it overwrites (a pivot), the other ranks must still read it as
// the last barrier left it. So each such access is wrapped, dsm::lb::written(sh_a[i]) = ...
// for a write and dsm::lb::read(sh_a[i]) for a read, which lets the runtime keep those
// bytes first (see balancer.hpp). Accesses inside marked loops, and in the functions those
// loops call, are covered by the loops' own claims and stay as they are.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <string>
#include <vector>

namespace dsmpass {

struct OutsideAccess {
  unsigned line;
  std::string array;  // the sh_ array accessed
  bool write;
};

// Wraps the accesses of the main file outside the `marked` loops and the functions they call
// (where the file has their bodies); returns them in source order. An access written as a
// macro's argument is wrapped where it is spelled, once however often the macro uses it (as
// a write if one use writes); one spelled in a macro's body is left alone: its text is the
// macro's.
std::vector<OutsideAccess> wrap_outside_accesses(clang::ASTContext& ctx, clang::Rewriter& rw,
                                                 const std::vector<const clang::ForStmt*>& marked);

}  // namespace dsmpass
