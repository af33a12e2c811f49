#include "read_regions.hpp"

#include "source.hpp"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include <algorithm>
#include <set>

namespace dsmpass {
namespace {

using namespace clang;

// The variable (or member) a pointer expression is taken from: sh_a in sh_a + k, &sh_a[i],
// sh_a[i] (a row of a 2-D array); null when it is computed otherwise (a call's result).
const ValueDecl* pointer_root(const Expr* e) {
  while (true) {
    e = e->IgnoreParenCasts();
    if (const auto* d = dyn_cast<DeclRefExpr>(e)) return d->getDecl();
    if (const auto* m = dyn_cast<MemberExpr>(e)) return m->getMemberDecl();
    if (const auto* a = dyn_cast<ArraySubscriptExpr>(e)) {
      e = a->getBase();
    } else if (const auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_AddrOf) {
      e = u->getSubExpr();
    } else if (const auto* b = dyn_cast<BinaryOperator>(e); b && b->isAdditiveOp() && b->getType()->isPointerType()) {
      e = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
    } else {
      return nullptr;
    }
  }
}

// What a candidate region does outside its marked loops, and how its marked loops reach
// memory: their descriptors describe what they read through sh_ names alone, so a read
// through another pointer (a row pointer taken inside the loop, a copy of an sh_ pointer)
// could fall outside what the region promises.
class Outside : public RecursiveASTVisitor<Outside> {
 public:
  Outside(const SourceManager& sm, const std::set<const ForStmt*>& marked) : sm_(sm), marked_(marked) {}

  // A marked loop's header runs on every rank, before the runtime knows its ranges.
  bool TraverseForStmt(ForStmt* f) {
    if (!marked_.count(f)) return RecursiveASTVisitor::TraverseForStmt(f);
    for (Stmt* part : {f->getInit(), static_cast<Stmt*>(f->getCond()), static_cast<Stmt*>(f->getInc())}) TraverseStmt(part);
    ++inside_;
    TraverseStmt(f->getBody());
    --inside_;
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr* e) {
    named(e->getDecl());
    return true;
  }
  bool VisitMemberExpr(MemberExpr* e) {
    named(e->getMemberDecl());
    return true;
  }
  bool VisitCallExpr(CallExpr* c) {
    if (!inside_) called(c->getDirectCallee());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* c) {
    if (!inside_) called(c->getConstructor());
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr* a) {
    through(a->getBase());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->getOpcode() == UO_Deref) through(u->getSubExpr());
    return true;
  }

  bool reads_shared = false;  // names an sh_ array outside the marked loops
  bool undescribed = false;   // a marked loop reaches memory through a pointer of no sh_ name
  bool unseen_call = false;   // calls what it cannot see
  bool global_shared = false; // names an sh_ array that is not a local variable or parameter

 private:
  void named(const ValueDecl* d) {
    if (!is_shared_name(d)) return;
    if (!inside_) reads_shared = true;
    const auto* v = dyn_cast<VarDecl>(d);
    if (!v || !v->hasLocalStorage()) global_shared = true;
  }
  // Memory reached in a marked loop through `pointer`: fine through an sh_ name or an array
  // variable (a local table is no shared memory).
  void through(const Expr* pointer) {
    if (!inside_) return;
    const ValueDecl* root = pointer_root(pointer);
    if (root && (is_shared_name(root) || root->getType()->isArrayType())) return;
    undescribed = true;
  }
  // A callee with a body is looked into as if written here; dsm's own functions and the
  // system's read no array of the program's but through their arguments.
  void called(const FunctionDecl* f) {
    const FunctionDecl* def = nullptr;
    const auto* m = dyn_cast_or_null<CXXMethodDecl>(f);
    if (f && !(m && m->isVirtual()) && f->hasBody(def)) {
      if (seen_.insert(def->getCanonicalDecl()).second) TraverseStmt(def->getBody());
      return;
    }
    if (f && (sm_.isInSystemHeader(f->getLocation()) || in_dsm(f))) return;
    unseen_call = true;
  }
  static bool in_dsm(const FunctionDecl* f) {
    for (const DeclContext* c = f->getDeclContext(); c; c = c->getParent())
      if (const auto* ns = dyn_cast<NamespaceDecl>(c); ns && ns->getName() == "dsm" && ns->getParent()->isTranslationUnit())
        return true;
    return false;
  }

  const SourceManager& sm_;
  const std::set<const ForStmt*>& marked_;
  std::set<const Decl*> seen_;
  int inside_ = 0;
};

bool is_loop(const Stmt* s) { return isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<CXXForRangeStmt>(s); }

// The loops around `s` in its function, innermost first.
std::vector<const Stmt*> loops_around(const Stmt* s, ASTContext& ctx) {
  std::vector<const Stmt*> out;
  DynTypedNode node = DynTypedNode::create(*s);
  while (true) {
    const auto parents = ctx.getParents(node);
    if (parents.empty()) break;
    node = parents[0];
    const auto* p = node.get<Stmt>();
    if (!p) break;  // a declaration: the function, a lambda's class, a variable's initializer
    if (isa<LambdaExpr>(p)) break;
    if (is_loop(p)) out.push_back(p);
  }
  return out;
}

// Whether the line before `at` is a preprocessor line (a pragma applies to the statement
// after it, and an #if pairs with an #endif the block's brace must not cross).
bool after_directive(SourceLocation at, const SourceManager& sm) {
  const auto [fid, offset] = sm.getDecomposedLoc(at);
  const StringRef buf = sm.getBufferData(fid);
  std::size_t line_start = buf.rfind('\n', offset == 0 ? 0 : offset - 1);
  if (StringRef(buf.data() + (line_start == StringRef::npos ? 0 : line_start + 1), offset - (line_start == StringRef::npos ? 0 : line_start + 1)).trim().size())
    return false;  // the loop does not begin its line
  while (line_start != StringRef::npos && line_start > 0) {
    const std::size_t prev = buf.rfind('\n', line_start - 1);
    const std::size_t from = prev == StringRef::npos ? 0 : prev + 1;
    const StringRef line = buf.substr(from, line_start - from).trim();
    if (!line.empty()) return line.startswith("#");
    line_start = prev;
  }
  return false;
}

bool qualifies(const Stmt* loop, ASTContext& ctx, const std::set<const ForStmt*>& marked) {
  const SourceManager& sm = ctx.getSourceManager();
  if (loop->getBeginLoc().isMacroID() || loop->getEndLoc().isMacroID() || !sm.isWrittenInMainFile(loop->getBeginLoc()))
    return false;
  Outside o(sm, marked);
  o.TraverseStmt(const_cast<Stmt*>(loop));
  return !o.reads_shared && !o.undescribed && !(o.unseen_call && o.global_shared) && !after_directive(loop->getBeginLoc(), sm);
}

}  // namespace

std::vector<unsigned> wrap_read_regions(ASTContext& ctx, Rewriter& rw, const std::vector<const ForStmt*>& marked) {
  const std::set<const ForStmt*> all(marked.begin(), marked.end());
  const SourceManager& sm = ctx.getSourceManager();
  std::vector<const Stmt*> regions;
  for (const ForStmt* m : marked) {
    const std::vector<const Stmt*> around = loops_around(m, ctx);
    // The outermost: one region for the whole time loop, not one per step.
    for (auto it = around.rbegin(); it != around.rend(); ++it)
      if (qualifies(*it, ctx, all)) {
        if (std::find(regions.begin(), regions.end(), *it) == regions.end()) regions.push_back(*it);
        break;
      }
  }
  std::vector<unsigned> lines;
  int index = 0;
  for (const Stmt* r : regions) {
    rw.InsertTextBefore(r->getBeginLoc(), "{ dsm::lb::ReadsInLoops dsm_reads_" + std::to_string(++index) + "; ");
    rw.InsertTextAfter(after_statement(r, sm, ctx.getLangOpts()), " }");
    lines.push_back(sm.getPresumedLineNumber(r->getBeginLoc()));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace dsmpass
