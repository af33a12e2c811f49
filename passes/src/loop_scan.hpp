// One walk over a loop body (or a callee's body) that gathers what the analysis asks about
// it: which variables it changes, declares and uses, its canonical inner loops, and its uses
// of shared arrays.
#pragma once

#include "loop_form.hpp"

#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace dsmpass {

struct BodyScan {
  std::map<const clang::VarDecl*, std::vector<const clang::Stmt*>> modified;  // variable -> statements changing it
  std::set<const clang::VarDecl*> declared;
  std::vector<std::pair<const clang::ForStmt*, Header>> inner;  // pre-order
  std::vector<const clang::Expr*> shared_refs;                  // every sh_ name in the body
  std::vector<const clang::DeclRefExpr*> param_refs;            // every use of a parameter
};

BodyScan scan_body(const clang::Stmt* body);

// A reference through which a callee or a local may change what it refers to.
bool writable_reference(clang::QualType t);

// The argument that the callee's first parameter receives: a member operator (v[i] on a
// std::vector, a lambda's call) takes the object as argument 0.
unsigned first_param_arg(const clang::CallExpr* c, const clang::FunctionDecl* fn);

}  // namespace dsmpass
