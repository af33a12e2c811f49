#include "single.hpp"

#include "source.hpp"

#include <clang/AST/RecursiveASTVisitor.h>

#include <algorithm>

namespace dsmpass {
namespace {

using namespace clang;

// The statements of the main file's blocks: what a directive on its own line can precede.
class BlockStatements : public RecursiveASTVisitor<BlockStatements> {
 public:
  explicit BlockStatements(const SourceManager& sm) : sm_(sm) {}
  bool VisitCompoundStmt(CompoundStmt* c) {
    for (const Stmt* s : c->body())
      if (sm_.isWrittenInMainFile(sm_.getExpansionLoc(s->getBeginLoc()))) found.push_back(s);
    return true;
  }
  std::vector<const Stmt*> found;

 private:
  const SourceManager& sm_;
};

}  // namespace

void rewrite_singles(ASTContext& ctx, Rewriter& rw, const std::vector<Mark>& marks, const std::vector<const ForStmt*>& marked,
                     Reporter& report) {
  const SourceManager& sm = ctx.getSourceManager();
  BlockStatements blocks(sm);
  bool traversed = false;
  for (const Mark& m : marks) {
    if (m.kind != Mark::single || !m.problem.empty()) continue;
    if (!traversed) blocks.TraverseDecl(ctx.getTranslationUnitDecl());
    traversed = true;
    const SourceLocation at = token_after(m.end, sm, ctx.getLangOpts());
    const Stmt* target = nullptr;
    for (const Stmt* s : blocks.found)
      if (sm.getExpansionLoc(s->getBeginLoc()) == at) target = s;
    if (!target) {
      report.error(m.hash, "'#pragma dsm single' must be followed directly by a statement in a block");
      continue;
    }
    if (isa<DeclStmt>(target)) {
      report.error(m.hash, "'#pragma dsm single' before a declaration: the variable would exist on rank 0 alone; "
                           "declare it before, and put its assignment in the single statement");
      continue;
    }
    if (target->getBeginLoc().isMacroID() || target->getEndLoc().isMacroID()) {
      report.error(m.hash, "the statement after '#pragma dsm single' comes from a macro; write it out there");
      continue;
    }
    const bool in_loop = std::any_of(marked.begin(), marked.end(), [&](const ForStmt* f) {
      return sm.isBeforeInTranslationUnit(f->getBeginLoc(), target->getBeginLoc()) &&
             sm.isBeforeInTranslationUnit(target->getEndLoc(), f->getEndLoc());
    });
    if (in_loop) {
      report.error(m.hash, "'#pragma dsm single' inside a '#pragma dsm parallel for' loop: the ranks share that "
                           "loop's iterations out, and rank 0 may run none of them");
      continue;
    }
    // The directive's line keeps its line break, so every line keeps its number.
    rw.ReplaceText(CharSourceRange::getCharRange(m.hash, m.end), "{ if (dsm::rank() == 0)");
    rw.InsertTextAfter(after_statement(target, sm, ctx.getLangOpts()), " dsm::barrier(); }");
  }
}

}  // namespace dsmpass
