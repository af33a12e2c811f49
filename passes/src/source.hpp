// Small questions about the AST that the loop analysis and the write check both ask.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Stmt.h>

#include <string>

namespace dsmpass {

// The statement's text as written in the file (macro uses as written, not expanded), for
// messages: a part of a macro's body shows as the whole macro use.
std::string text_of(const clang::Stmt* s, const clang::ASTContext& ctx);

// The statement's text where it can be copied into the generated code: empty when the
// statement is only a part of a macro expansion (`n` inside `#define NX (n - 2)`), whose
// text in the file stands for something else.
std::string exact_text(const clang::Stmt* s, const clang::ASTContext& ctx);

// The sh_ prefix marks a shared array (a pointer from dsm::alloc, or an array); so does a
// parameter that receives one at every call (traced_params.hpp).
bool is_shared_name(const clang::NamedDecl* d);

// Where the first token after `end` (a directive's end of line) begins: comments skipped.
clang::SourceLocation token_after(clang::SourceLocation end, const clang::SourceManager& sm, const clang::LangOptions& lo);

// The for loop that is the whole body of `loop` (braces around it allowed), or null.
const clang::ForStmt* loop_alone_in(const clang::ForStmt* loop);

// Just past the statement's last token, including a trailing ';' that belongs to it.
clang::SourceLocation after_statement(const clang::Stmt* s, const clang::SourceManager& sm, const clang::LangOptions& lo);

}  // namespace dsmpass
