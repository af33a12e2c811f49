#include "loop_form.hpp"

#include "source.hpp"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <string>

namespace dsmpass {

using namespace clang;

namespace {

// The loop's counter and its first value: declared in the header, or (C89 style) an integer
// local declared before the loop and assigned there.
std::pair<const VarDecl*, const Expr*> counter(const ForStmt* f) {
  if (const auto* ds = dyn_cast_or_null<DeclStmt>(f->getInit())) {
    if (!ds->isSingleDecl()) return {};
    const auto* v = dyn_cast<VarDecl>(ds->getSingleDecl());
    if (!v || !v->getInit() || !v->getType()->isIntegerType()) return {};
    return {v, v->getInit()};
  }
  const auto* a = dyn_cast_or_null<BinaryOperator>(f->getInit() ? dyn_cast<Expr>(f->getInit())->IgnoreParens() : nullptr);
  if (!a || a->getOpcode() != BO_Assign) return {};
  const auto* d = dyn_cast<DeclRefExpr>(a->getLHS()->IgnoreParens());
  const auto* v = d ? dyn_cast<VarDecl>(d->getDecl()) : nullptr;
  if (!v || !v->hasLocalStorage() || isa<ParmVarDecl>(v) || !v->getType()->isIntegerType()) return {};
  return {v, a->getRHS()};
}

bool refers_to(const Expr* e, const VarDecl* v) {
  const auto* d = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  return d && d->getDecl() == v;
}

// A throw inside a try of the body may be caught there; one that is not leaves the loop on
// one rank only.
void check_exits(const Stmt* s, int breakable, bool in_try, const ASTContext& ctx, Reporter& report) {
  if (!s) return;
  if (isa<LambdaExpr>(s)) return;
  if (isa<CXXThrowExpr>(s) && !in_try)
    report.error(s->getBeginLoc(), "'throw' leaves a '#pragma dsm parallel for' loop; catch the exception inside the loop body");
  if (isa<BreakStmt>(s) && breakable == 0)
    report.error(s->getBeginLoc(), "'break' leaves a '#pragma dsm parallel for' loop; every iteration must run");
  if (isa<ReturnStmt>(s) || isa<CoreturnStmt>(s))
    report.error(s->getBeginLoc(), "'return' inside a '#pragma dsm parallel for' loop; iterations cannot leave the function");
  if (isa<GotoStmt>(s) || isa<IndirectGotoStmt>(s))
    report.error(s->getBeginLoc(), "'goto' inside a '#pragma dsm parallel for' loop is not supported");
  const bool nested = isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<SwitchStmt>(s) ||
                      isa<CXXForRangeStmt>(s);
  if (const auto* t = dyn_cast<CXXTryStmt>(s)) {
    check_exits(t->getTryBlock(), breakable, true, ctx, report);
    for (unsigned k = 0; k < t->getNumHandlers(); ++k) check_exits(t->getHandler(k), breakable, in_try, ctx, report);
    return;
  }
  for (const Stmt* c : s->children()) check_exits(c, breakable + (nested ? 1 : 0), in_try, ctx, report);
}

}  // namespace

Header parse_header(const ForStmt* f) {
  Header h;
  const auto [v, first] = counter(f);
  if (!v) return h;
  const auto* cond = dyn_cast_or_null<BinaryOperator>(f->getCond() ? f->getCond()->IgnoreParens() : nullptr);
  if (!cond || (cond->getOpcode() != BO_LT && cond->getOpcode() != BO_LE) || !refers_to(cond->getLHS(), v))
    return h;
  const Expr* inc = f->getInc() ? f->getInc()->IgnoreParens() : nullptr;
  if (const auto* u = dyn_cast_or_null<UnaryOperator>(inc)) {
    if (!u->isIncrementOp() || !refers_to(u->getSubExpr(), v)) return h;
  } else if (const auto* c = dyn_cast_or_null<CompoundAssignOperator>(inc)) {
    if (c->getOpcode() != BO_AddAssign || !refers_to(c->getLHS(), v)) return h;
    h.step = c->getRHS();
  } else {
    return h;
  }
  h.var = v;
  h.lower = first;
  if (!isa<DeclStmt>(f->getInit())) h.init = f->getInit();
  if (const auto* list = dyn_cast<InitListExpr>(h.lower); list && list->getNumInits() == 1) h.lower = list->getInit(0);  // i{0}
  h.upper = cond->getRHS();
  h.inclusive = cond->getOpcode() == BO_LE;
  h.inc = f->getInc();
  return h;
}

Header parse_inner_header(const ForStmt* f) {
  if (Header h = parse_header(f); h.var) return h;
  Header h;
  const auto [v, first] = counter(f);
  if (!v) return h;
  const auto* cond = dyn_cast_or_null<BinaryOperator>(f->getCond() ? f->getCond()->IgnoreParens() : nullptr);
  if (!cond || (cond->getOpcode() != BO_GT && cond->getOpcode() != BO_GE) || !refers_to(cond->getLHS(), v)) return h;
  const Expr* inc = f->getInc() ? f->getInc()->IgnoreParens() : nullptr;
  if (const auto* u = dyn_cast_or_null<UnaryOperator>(inc)) {
    if (!u->isDecrementOp() || !refers_to(u->getSubExpr(), v)) return h;
  } else if (const auto* c = dyn_cast_or_null<CompoundAssignOperator>(inc)) {
    if (c->getOpcode() != BO_SubAssign || !refers_to(c->getLHS(), v)) return h;
    h.step = c->getRHS();
  } else {
    return h;
  }
  h.var = v;
  h.upper = first;
  if (const auto* list = dyn_cast<InitListExpr>(h.upper); list && list->getNumInits() == 1) h.upper = list->getInit(0);
  if (!isa<DeclStmt>(f->getInit())) h.init = f->getInit();
  h.lower = cond->getRHS();
  h.lower_exclusive = cond->getOpcode() == BO_GT;
  h.inclusive = true;
  h.inc = f->getInc();
  return h;
}

void check_control(const Stmt* body, const ASTContext& ctx, Reporter& report) { check_exits(body, 0, false, ctx, report); }

void report_not_canonical(const ForStmt* loop, Reporter& report) {
  const SourceLocation at = loop->getBeginLoc();
  const auto* inc = dyn_cast_or_null<UnaryOperator>(loop->getInc() ? loop->getInc()->IgnoreParens() : nullptr);
  const auto* cinc = dyn_cast_or_null<CompoundAssignOperator>(loop->getInc() ? loop->getInc()->IgnoreParens() : nullptr);
  if ((inc && inc->isDecrementOp()) || (cinc && cinc->getOpcode() == BO_SubAssign))
    report.error(at, "decreasing '#pragma dsm parallel for' loops are not supported; count upwards: for (long i = lb; i < ub; ++i)");
  else
    report.error(at, "'#pragma dsm parallel for' needs a canonical loop: for (T i = lb; i < ub | i <= ub; ++i | i++ | i += step) "
                     "with an integer T (or an integer local i declared before: for (i = lb; ...))");
}

// The ranks count iterations in long from the bounds' values; the loop's own comparison must
// mean the same: an integer one, and not one that turns a negative signed variable into a
// huge unsigned value (fine when the loop starts at a constant >= 0: i < v.size()).
void check_comparison(const ForStmt* loop, const Header& header, const ASTContext& ctx, Reporter& report) {
  const auto* cond = cast<BinaryOperator>(loop->getCond()->IgnoreParens());
  const QualType compared = cond->getLHS()->getType();
  const std::string var = header.var->getNameAsString();
  if (!compared->isIntegralOrEnumerationType()) {
    report.error(header.upper->getBeginLoc(), "loop bound '" + text_of(header.upper, ctx) + "' is not an integer, so '" + var +
                                                   "' is compared as " + compared.getAsString() +
                                                   "; convert the bound to an integer type before the loop");
    return;
  }
  Expr::EvalResult r;
  const bool nonnegative_start = header.lower->EvaluateAsInt(r, ctx) && !r.Val.getInt().isNegative();
  if (compared->isUnsignedIntegerType() && header.var->getType()->isSignedIntegerType() && !nonnegative_start)
    report.error(header.upper->getBeginLoc(), "signed '" + var + "' is compared with unsigned '" + text_of(header.upper, ctx) +
                                                   "', where a negative '" + var +
                                                   "' counts as a huge value; convert the bound to a signed type, e.g. (long)(" +
                                                   text_of(header.upper, ctx) + ")");
}

}  // namespace dsmpass
