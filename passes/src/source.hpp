// Small questions about the AST that the loop analysis and the write check both ask.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Stmt.h>

#include <string>

namespace dsmpass {

// The statement's text as written in the file (macro uses as written, not expanded).
std::string text_of(const clang::Stmt* s, const clang::ASTContext& ctx);

// The sh_ prefix marks a shared array (a pointer from dsm::alloc, or an array).
bool is_shared_name(const clang::NamedDecl* d);

}  // namespace dsmpass
