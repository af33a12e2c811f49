#include "source.hpp"

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

bool is_shared_name(const clang::NamedDecl* d) { return d && d->getIdentifier() && d->getName().startswith("sh_"); }

}  // namespace dsmpass
