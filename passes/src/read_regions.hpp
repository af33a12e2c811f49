// Regions whose shared reads are all inside marked loops.
//
// A halo row rarely starts and ends at page boundaries, and a page pushed whole moves the
// rows around it too. A rank may take only the bytes it reads of such a page when it
// promises to read nothing else of it (dsm::ReadsWithin), and the marked loops' descriptors
// say what they read; code outside them says nothing, and every rank runs it. So the
// outermost loop (a time loop) around marked loops whose code outside them reads no shared
// array gets a dsm::lb::ReadsInLoops for its whole run, under which the runtime promises
// what each marked loop reads.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Stmt.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <vector>

namespace dsmpass {

// Wraps each such loop around the `marked` loops in a block holding a dsm::lb::ReadsInLoops;
// returns the lines of the loops wrapped. A loop qualifies when, outside the marked loops
// (its condition included, and the bodies in the file of the functions it calls), it names
// no sh_ array, and it calls no function out of sight (no body here, outside namespace dsm
// and system headers) where some sh_ array it names is not a local variable or parameter;
// and when its marked loops reach memory through pointers only by sh_ names (or array
// variables). A loop in a macro, or right after a preprocessor line (another pragma's
// loop), is left alone.
std::vector<unsigned> wrap_read_regions(clang::ASTContext& ctx, clang::Rewriter& rw,
                                        const std::vector<const clang::ForStmt*>& marked);

}  // namespace dsmpass
