// Array parameters that stand for sh_ arrays: OpenMP code passes its arrays to the function
// that holds the parallel loop (`void kernel(double* a, int n)`), and renaming every
// parameter sh_... is friction. A pointer or array parameter is shared when every call of its
// function in the file passes an sh_ array there (or a pointer into one, or another such
// parameter), and the function's address is never taken (calls from elsewhere would be
// unknown).
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

namespace dsmpass {

// Finds the parameters of the main file's functions that stand for sh_ arrays;
// is_shared_name (source.hpp) answers true for them from then on, for this file.
void trace_shared_parameters(clang::ASTContext& ctx);

// Whether `p` is one of those parameters.
bool is_traced_parameter(const clang::ParmVarDecl* p);

}  // namespace dsmpass
