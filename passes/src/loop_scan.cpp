#include "loop_scan.hpp"

#include "source.hpp"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>

namespace dsmpass {

using namespace clang;

namespace {

// The variable whose storage an lvalue expression designates (s in s.x, a in a[3] for a
// local array), or null when it goes through a pointer.
const VarDecl* root_var(const Expr* e) {
  while (true) {
    e = e->IgnoreParenImpCasts();
    if (const auto* d = dyn_cast<DeclRefExpr>(e)) return dyn_cast<VarDecl>(d->getDecl());
    if (const auto* m = dyn_cast<MemberExpr>(e)) {
      if (m->isArrow()) return nullptr;
      e = m->getBase();
    } else if (const auto* a = dyn_cast<ArraySubscriptExpr>(e)) {
      if (!a->getBase()->IgnoreParenImpCasts()->getType()->isArrayType()) return nullptr;
      e = a->getBase();
    } else {
      return nullptr;
    }
  }
}

class Scanner : public RecursiveASTVisitor<Scanner> {
 public:
  explicit Scanner(BodyScan& out) : out_(out) {}

  bool VisitVarDecl(VarDecl* v) {
    out_.declared.insert(v);
    if (v->getInit() && writable_reference(v->getType())) mark(v->getInit(), v->getInit());
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->isAssignmentOp()) mark(b->getLHS(), b);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->isIncrementDecrementOp() || u->getOpcode() == UO_AddrOf) mark(u->getSubExpr(), u);
    return true;
  }
  bool VisitCallExpr(CallExpr* c) {
    const FunctionDecl* fn = c->getDirectCallee();
    const unsigned first = first_param_arg(c, fn);
    const auto* member_op = first ? cast<CXXMethodDecl>(fn) : nullptr;
    for (unsigned k = first; k < c->getNumArgs(); ++k) {
      // Unknown callee or parameter: assume the worst for reference-capable arguments.
      // Arguments matching a C ellipsis (printf's) are passed by value.
      const unsigned param = k - first;
      if (fn && fn->isVariadic() && param >= fn->getNumParams()) continue;
      const bool known = fn && param < fn->getNumParams();
      if (!known || writable_reference(fn->getParamDecl(param)->getType())) mark(c->getArg(k), c);
    }
    if (member_op && !member_op->isConst() && c->getNumArgs() > 0) mark(c->getArg(0), c);
    if (const auto* m = dyn_cast<CXXMemberCallExpr>(c))
      if (const auto* md = m->getMethodDecl(); md && !md->isConst()) mark(m->getImplicitObjectArgument(), c);
    return true;
  }
  bool VisitForStmt(ForStmt* f) {
    Header h = parse_inner_header(f);
    if (h.var) out_.inner.emplace_back(f, h);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr* d) {
    if (isa<VarDecl>(d->getDecl()) && is_shared_name(d->getDecl())) out_.shared_refs.push_back(d);
    if (isa<ParmVarDecl>(d->getDecl())) out_.param_refs.push_back(d);
    return true;
  }
  bool VisitMemberExpr(MemberExpr* m) {
    if (is_shared_name(m->getMemberDecl()) && isa<FieldDecl>(m->getMemberDecl())) out_.shared_refs.push_back(m);
    return true;
  }

 private:
  void mark(const Expr* lvalue, const Stmt* by) {
    if (const VarDecl* v = root_var(lvalue)) out_.modified[v].push_back(by);
  }

  BodyScan& out_;
};

}  // namespace

BodyScan scan_body(const Stmt* body) {
  BodyScan out;
  Scanner(out).TraverseStmt(const_cast<Stmt*>(body));
  return out;
}

bool writable_reference(QualType t) {
  return t->isReferenceType() && !t.getNonReferenceType().isConstQualified();
}

unsigned first_param_arg(const CallExpr* c, const FunctionDecl* fn) {
  return isa<CXXOperatorCallExpr>(c) && isa_and_nonnull<CXXMethodDecl>(fn) ? 1 : 0;
}

}  // namespace dsmpass
