#include "source.hpp"

#include "traced_params.hpp"

#include <clang/Lex/Lexer.h>

namespace dsmpass {

std::string text_of(const clang::Stmt* s, const clang::ASTContext& ctx) {
  const clang::SourceManager& sm = ctx.getSourceManager();
  const clang::CharSourceRange r = sm.getExpansionRange(s->getSourceRange());
  return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(r.getBegin(), r.getEnd()), sm,
                                     ctx.getLangOpts())
      .str();
}

std::string exact_text(const clang::Stmt* s, const clang::ASTContext& ctx) {
  const clang::SourceManager& sm = ctx.getSourceManager();
  const clang::CharSourceRange r = clang::Lexer::makeFileCharRange(
      clang::CharSourceRange::getTokenRange(s->getSourceRange()), sm, ctx.getLangOpts());
  if (r.isInvalid()) return "";
  return clang::Lexer::getSourceText(r, sm, ctx.getLangOpts()).str();
}

bool is_shared_name(const clang::NamedDecl* d) {
  if (const auto* p = llvm::dyn_cast_or_null<clang::ParmVarDecl>(d); p && is_traced_parameter(p)) return true;
  return d && d->getIdentifier() && d->getName().startswith("sh_");
}

clang::SourceLocation token_after(clang::SourceLocation end, const clang::SourceManager& sm, const clang::LangOptions& lo) {
  // Raw lexing skips comments, so a comment between a directive and its statement is fine.
  const auto [fid, offset] = sm.getDecomposedLoc(end);
  const llvm::StringRef buf = sm.getBufferData(fid);
  clang::Lexer lex(sm.getLocForStartOfFile(fid), lo, buf.begin(), buf.begin() + offset, buf.end());
  clang::Token next;
  lex.LexFromRawLexer(next);
  return next.getLocation();
}

const clang::ForStmt* loop_alone_in(const clang::ForStmt* loop) {
  const clang::Stmt* body = loop->getBody();
  while (const auto* block = clang::dyn_cast_or_null<clang::CompoundStmt>(body)) {
    if (block->size() != 1) return nullptr;
    body = block->body_front();
  }
  return clang::dyn_cast_or_null<clang::ForStmt>(body);
}

clang::SourceLocation after_statement(const clang::Stmt* s, const clang::SourceManager& sm, const clang::LangOptions& lo) {
  clang::SourceLocation end = clang::Lexer::getLocForEndOfToken(s->getEndLoc(), 0, sm, lo);
  if (auto next = clang::Lexer::findNextToken(s->getEndLoc(), sm, lo); next && next->is(clang::tok::semi))
    end = next->getEndLoc();
  return end;
}

}  // namespace dsmpass
