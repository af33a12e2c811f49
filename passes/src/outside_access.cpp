#include "outside_access.hpp"

#include "source.hpp"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <map>
#include <set>

namespace dsmpass {
namespace {

using namespace clang;

// The sh_ array an lvalue is an element (or a member of an element) of; nullptr when it is
// not reached through one, or names the array variable itself.
const NamedDecl* shared_root(const Expr* e) {
  bool through = false;  // an element, not the pointer variable
  while (true) {
    e = e->IgnoreParenImpCasts();
    if (const auto* a = dyn_cast<ArraySubscriptExpr>(e)) {
      e = a->getBase();
      through = true;
    } else if (const auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_Deref) {
      e = u->getSubExpr();
      through = true;
    } else if (const auto* m = dyn_cast<MemberExpr>(e)) {
      e = m->getBase();
      through |= m->isArrow();
    } else if (const auto* b = dyn_cast<BinaryOperator>(e); b && b->isAdditiveOp() && b->getType()->isPointerType()) {
      e = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
    } else if (const auto* d = dyn_cast<DeclRefExpr>(e)) {
      const ValueDecl* v = d->getDecl();
      const bool array = v->getType()->isPointerType() || v->getType()->isArrayType();
      return through && array && is_shared_name(v) ? v : nullptr;
    } else {
      return nullptr;
    }
  }
}

// The functions with a body in this file that `roots` call, directly or through others.
class Callees : public RecursiveASTVisitor<Callees> {
 public:
  void from(const Stmt* s) { TraverseStmt(const_cast<Stmt*>(s)); }
  bool VisitCallExpr(CallExpr* c) {
    add(c->getDirectCallee());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* c) {
    add(c->getConstructor());
    return true;
  }
  std::set<const FunctionDecl*> found;

 private:
  void add(const FunctionDecl* f) {
    const FunctionDecl* def = nullptr;
    if (!f || !f->hasBody(def) || !found.insert(def->getCanonicalDecl()).second) return;
    from(def->getBody());
  }
};

class Finder : public RecursiveASTVisitor<Finder> {
 public:
  Finder(const SourceManager& sm, std::set<const ForStmt*> marked, std::set<const FunctionDecl*> called)
      : sm_(sm), marked_(std::move(marked)), called_(std::move(called)) {}

  bool TraverseDecl(Decl* d) {
    if (const auto* f = dyn_cast_or_null<FunctionDecl>(d); f && called_.count(f->getCanonicalDecl())) return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }
  bool TraverseForStmt(ForStmt* f) { return marked_.count(f) || RecursiveASTVisitor::TraverseForStmt(f); }

  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->isAssignmentOp()) found(b->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->isIncrementDecrementOp()) found(u->getSubExpr());
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* c) {
    if (c->getNumArgs() > 0 && (c->isAssignmentOp() || c->getOperator() == OO_PlusPlus || c->getOperator() == OO_MinusMinus))
      found(c->getArg(0));
    return true;
  }
  // A value loaded from an element; a compound assignment's or an increment's own load is
  // the write's.
  bool VisitImplicitCastExpr(ImplicitCastExpr* c) {
    if (c->getCastKind() == CK_LValueToRValue) found(c->getSubExpr(), false);
    return true;
  }
  // An element passed by const reference is read by the callee (std::max(sh_a[i], x), a
  // copy constructor), out of sight.
  bool VisitCallExpr(CallExpr* c) {
    if (const FunctionDecl* f = c->getDirectCallee(); f && !isa<CXXOperatorCallExpr>(c))
      const_reference_args(f, c->getArgs(), c->getNumArgs());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* c) {
    const_reference_args(c->getConstructor(), c->getArgs(), c->getNumArgs());
    return true;
  }

  struct Hit {
    SourceLocation begin, end;  // where the access is spelled in the main file
    const NamedDecl* array;
    bool write;
  };
  std::vector<Hit> hits;

 private:
  void found(const Expr* lvalue, bool write = true) {
    lvalue = lvalue->IgnoreParens();  // a macro's parentheses around its argument are its own
    // A bit-field has no reference: the object holding it is noted instead.
    while (lvalue->refersToBitField()) {
      const auto* m = dyn_cast<MemberExpr>(lvalue->IgnoreParens());
      if (!m || m->isArrow()) return;
      lvalue = m->getBase();
    }
    const NamedDecl* array = shared_root(lvalue);
    if (!array) return;
    SourceLocation b = lvalue->getBeginLoc(), e = lvalue->getEndLoc();
    if (b.isMacroID() || e.isMacroID()) {
      if (!sm_.isMacroArgExpansion(b) || !sm_.isMacroArgExpansion(e)) return;
      b = sm_.getSpellingLoc(b);
      e = sm_.getSpellingLoc(e);
      if (sm_.getFileID(b) != sm_.getFileID(e) || sm_.isBeforeInTranslationUnit(e, b)) return;
    }
    if (!sm_.isWrittenInMainFile(b)) return;
    // A macro that uses its argument twice has it wrapped once, as a write if either use
    // writes (written() serves a read too).
    const auto [at, fresh] = spelled_.try_emplace(b.getRawEncoding(), hits.size());
    if (fresh) hits.push_back({b, e, array, write});
    else hits[at->second].write |= write;
  }

  void const_reference_args(const FunctionDecl* f, const Expr* const* args, unsigned count) {
    for (unsigned k = 0; k < count && k < f->getNumParams(); ++k) {
      const QualType t = f->getParamDecl(k)->getType();
      if (t->isLValueReferenceType() && t->getPointeeType().isConstQualified()) found(args[k], false);
    }
  }

  const SourceManager& sm_;
  std::set<const ForStmt*> marked_;
  std::set<const FunctionDecl*> called_;
  std::map<unsigned, std::size_t> spelled_;  // an access's spelling -> its hit
};

}  // namespace

std::vector<OutsideAccess> wrap_outside_accesses(ASTContext& ctx, Rewriter& rw, const std::vector<const ForStmt*>& marked) {
  Callees callees;
  for (const ForStmt* loop : marked) callees.from(loop->getBody());
  Finder finder(ctx.getSourceManager(), {marked.begin(), marked.end()}, std::move(callees.found));
  finder.TraverseDecl(ctx.getTranslationUnitDecl());
  const SourceManager& sm = ctx.getSourceManager();
  std::sort(finder.hits.begin(), finder.hits.end(), [&](const Finder::Hit& a, const Finder::Hit& b) {
    return sm.isBeforeInTranslationUnit(a.begin, b.begin);
  });
  std::vector<OutsideAccess> out;
  for (const Finder::Hit& h : finder.hits) {
    rw.InsertTextBefore(h.begin, h.write ? "dsm::lb::written(" : "dsm::lb::read(");
    rw.InsertTextAfter(Lexer::getLocForEndOfToken(h.end, 0, sm, ctx.getLangOpts()), ")");
    out.push_back({sm.getPresumedLineNumber(h.begin), h.array->getNameAsString(), h.write});
  }
  return out;
}

}  // namespace dsmpass
