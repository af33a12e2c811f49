#include "loop.hpp"

#include "source.hpp"
#include "writes.hpp"

#include <clang/AST/ParentMap.h>
#include <clang/AST/RecursiveASTVisitor.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace dsmpass {

using namespace clang;

const char* name(Access a) {
  switch (a) {
    case Access::read: return "read";
    case Access::write: return "write";
    case Access::read_write: return "read_write";
  }
  return "read_write";
}

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

bool writable_reference(QualType t) {
  return t->isReferenceType() && !t.getNonReferenceType().isConstQualified();
}

// The argument that the callee's first parameter receives: a member operator (v[i] on a
// std::vector, a lambda's call) takes the object as argument 0.
unsigned first_param_arg(const CallExpr* c, const FunctionDecl* fn) {
  return isa<CXXOperatorCallExpr>(c) && isa_and_nonnull<CXXMethodDecl>(fn) ? 1 : 0;
}

// A conversion of an integer that keeps its value wherever the program's indices can be:
// not to bool or to types narrower than int (a value of 300 in an unsigned char is 44).
bool keeps_value(QualType to, QualType from, const ASTContext& ctx) {
  return !to->isBooleanType() && (ctx.getTypeSize(to) >= ctx.getTypeSize(from) || ctx.getTypeSize(to) >= 32);
}

// A `for (T v = L; v < U | v <= U; ++v | v++ | v += s)` header, or null fields when the
// header has another shape.
struct Header {
  const VarDecl* var = nullptr;
  const Expr* lower = nullptr;
  const Expr* upper = nullptr;
  bool inclusive = false;
  const Expr* step = nullptr;  // null for ++
  const Stmt* inc = nullptr;
};

const VarDecl* single_int_var(const ForStmt* f) {
  const auto* ds = dyn_cast_or_null<DeclStmt>(f->getInit());
  if (!ds || !ds->isSingleDecl()) return nullptr;
  const auto* v = dyn_cast<VarDecl>(ds->getSingleDecl());
  if (!v || !v->getInit() || !v->getType()->isIntegerType()) return nullptr;
  return v;
}

bool refers_to(const Expr* e, const VarDecl* v) {
  const auto* d = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  return d && d->getDecl() == v;
}

Header parse_header(const ForStmt* f) {
  Header h;
  const VarDecl* v = single_int_var(f);
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
  h.lower = v->getInit();
  if (const auto* list = dyn_cast<InitListExpr>(h.lower); list && list->getNumInits() == 1) h.lower = list->getInit(0);  // i{0}
  h.upper = cond->getRHS();
  h.inclusive = cond->getOpcode() == BO_LE;
  h.inc = f->getInc();
  return h;
}

// Everything the analysis needs to know about the loop body, gathered in one walk.
class BodyScan : public RecursiveASTVisitor<BodyScan> {
 public:
  std::map<const VarDecl*, std::vector<const Stmt*>> modified;  // variable -> statements changing it
  std::set<const VarDecl*> declared;
  std::vector<std::pair<const ForStmt*, Header>> inner;  // pre-order
  std::vector<const Expr*> shared_refs;                  // every sh_ name in the body
  std::vector<const DeclRefExpr*> param_refs;            // every use of a parameter

  bool VisitVarDecl(VarDecl* v) {
    declared.insert(v);
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
    Header h = parse_header(f);
    if (h.var) inner.emplace_back(f, h);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr* d) {
    if (isa<VarDecl>(d->getDecl()) && is_shared_name(d->getDecl())) shared_refs.push_back(d);
    if (isa<ParmVarDecl>(d->getDecl())) param_refs.push_back(d);
    return true;
  }
  bool VisitMemberExpr(MemberExpr* m) {
    if (is_shared_name(m->getMemberDecl()) && isa<FieldDecl>(m->getMemberDecl())) shared_refs.push_back(m);
    return true;
  }

 private:
  void mark(const Expr* lvalue, const Stmt* by) {
    if (const VarDecl* v = root_var(lvalue)) modified[v].push_back(by);
  }
};

// Statements that leave the loop other than by finishing an iteration. A throw inside a try
// of the body may be caught there; one that is not leaves the loop on one rank only.
void check_control(const Stmt* s, int breakable, bool in_try, const ASTContext& ctx, Reporter& report) {
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
    check_control(t->getTryBlock(), breakable, true, ctx, report);
    for (unsigned k = 0; k < t->getNumHandlers(); ++k) check_control(t->getHandler(k), breakable, in_try, ctx, report);
    return;
  }
  for (const Stmt* c : s->children()) check_control(c, breakable + (nested ? 1 : 0), in_try, ctx, report);
}

// The dimensions below the first of what a pointer or array points to, and its element.
struct Shape {
  std::vector<long> extent;  // elements of each dimension below the first
  bool known = true;         // false when a dimension has no constant size
  QualType elem;

  long unit(size_t depth) const {  // elements one step of a pointer at `depth` covers
    long u = 1;
    for (size_t d = depth; d < extent.size(); ++d) u *= extent[d];
    return u;
  }
};

Shape shape_of(QualType t, const ASTContext& ctx) {
  Shape s;
  s.elem = t->isPointerType() ? t->getPointeeType() : QualType(t->getArrayElementTypeNoTypeQual(), 0);
  while (const ArrayType* at = ctx.getAsArrayType(s.elem)) {
    const auto* cat = dyn_cast<ConstantArrayType>(at);
    if (!cat) s.known = false;
    s.extent.push_back(cat ? static_cast<long>(cat->getSize().getZExtValue()) : 0);
    s.elem = at->getElementType();
  }
  return s;
}

// Where a climb from a use of a pointer into a shared array ends.
struct Reach {
  const Expr* cur = nullptr;
  std::optional<Affine> at;  // flat index of what `cur` designates
  size_t depth = 0;          // steps of the pointer `cur` (or the one it was taken from) are unit(depth)
  bool lvalue = false;       // `cur` is the object a pointer designates, not the pointer
};

// Analyzes a marked loop, or (for the sections of a shared array passed to a function) the
// body of a function it calls, with the parameters bound to the caller's values.
class Analyzer {
 public:
  Analyzer(const ForStmt* loop, ASTContext& ctx, Reporter& report)
      : loop_(loop), ctx_(ctx), report_(report), parents_(const_cast<ForStmt*>(loop)) {}

  std::optional<Loop> run();

 private:
  // A function the loop calls: `fn`'s body, reached from `caller`, integer parameters bound
  // to the caller's affine values.
  Analyzer(const Analyzer& caller, const FunctionDecl* fn, std::map<const VarDecl*, Affine> env);
  std::vector<Section> through_param(const ParmVarDecl* param, const Section& proto, const Shape& shape, const Affine& start);

  bool changes(const VarDecl* v) const;
  bool invariant(const Expr* e) const;
  std::string code_text(const Expr* e) const;
  void check_comparison();
  bool moves_with_loop(const Affine& a) const;
  void check_shared_updates(const Expr* ref, const Section& s, const Affine& at);
  std::optional<Affine> fold(const Expr* e, std::string& why, int depth = 0) const;
  std::optional<std::pair<Bound, Bound>> interval(const Affine& a, const std::string& skip) const;
  void compute_inner_ranges(std::vector<InnerVar>* out);
  void describe(const Expr* name_ref);
  Reach climb(const Expr* ref, const Shape& shape, std::optional<Affine> start, std::string& why) const;
  void describe_from(const Expr* ref, const Section& proto, const Shape& shape, std::optional<Affine> start);
  bool compared_only(const Expr* pointer) const;
  bool through_call(const Reach& r, const Section& proto, const Shape& shape, std::string& why);
  const FunctionDecl* followed_callee(const CallExpr* call, std::string& why) const;
  std::map<const VarDecl*, Affine> bind_integers(const CallExpr* call, const FunctionDecl* def) const;
  void not_affine(const Expr* where, const std::string& array, const std::string& why, bool located = false);
  Access classify(const Expr* e, bool& escapes) const;
  const Stmt* parent(const Stmt* s) const;
  bool in_lambda(const Stmt* s) const;
  std::string key(const VarDecl* v);

  const ForStmt* loop_;                     // null in a callee
  ASTContext& ctx_;
  Reporter& report_;
  ParentMap parents_;
  BodyScan scan_;
  Header header_;
  std::string loop_var_;                             // the marked loop's variable
  std::vector<const FunctionDecl*> chain_;           // callees from the loop to this one
  std::map<const VarDecl*, Affine> env_;             // a callee's bound parameters
  std::string callee_why_;                           // why a callee's access was not affine
  std::map<const VarDecl*, std::string> keys_;      // canonical loop variables -> Affine key
  std::set<const VarDecl*> unknown_bounds_;          // inner loop variables of no known range
  std::set<std::string> moving_;                     // keys of inner variables whose range moves with the loop variable
  std::map<std::string, std::pair<Bound, Bound>> ranges_;  // key -> inclusive range
  std::vector<Section> sections_;
};

Analyzer::Analyzer(const Analyzer& caller, const FunctionDecl* fn, std::map<const VarDecl*, Affine> env)
    : loop_(nullptr), ctx_(caller.ctx_), report_(caller.report_), parents_(fn->getBody()),
      loop_var_(caller.loop_var_), chain_(caller.chain_), env_(std::move(env)), ranges_(caller.ranges_) {
  chain_.push_back(fn);
}

bool Analyzer::changes(const VarDecl* v) const {
  auto it = scan_.modified.find(v);
  if (it == scan_.modified.end()) return false;
  // A canonical inner loop variable is changed only by its own increment.
  if (keys_.count(v))
    for (const Stmt* s : it->second)
      if (std::none_of(scan_.inner.begin(), scan_.inner.end(), [&](const auto& f) { return f.second.inc == s; }))
        return true;
  return !keys_.count(v);
}

bool Analyzer::invariant(const Expr* e) const {
  if (e->HasSideEffects(ctx_)) return false;
  bool ok = true;
  std::function<void(const Stmt*)> walk = [&](const Stmt* s) {
    if (!s || !ok) return;
    if (const auto* d = dyn_cast<DeclRefExpr>(s)) {
      // A callee's names mean nothing where the loop's descriptors are computed: its
      // parameters are folded into the caller's values instead.
      if (const auto* v = dyn_cast<VarDecl>(d->getDecl()))
        if (!loop_ || v == header_.var || scan_.declared.count(v) || changes(v)) ok = false;
    } else if (isa<ArraySubscriptExpr>(s) || (isa<UnaryOperator>(s) && cast<UnaryOperator>(s)->getOpcode() == UO_Deref)) {
      ok = false;  // memory the loop may write
    } else if (const auto* m = dyn_cast<MemberExpr>(s); m && m->isArrow() && !isa<CXXThisExpr>(m->getBase()->IgnoreParenImpCasts())) {
      ok = false;
    }
    for (const Stmt* c : s->children()) walk(c);
  };
  walk(e);
  return ok;
}

// The text of `e` for the generated code: as written, or for a variable named inside a macro's
// body (n in `#define A(r, c) sh_a[(r) * n + (c)]`) its name, which means the same variable
// before the loop as in its body; empty when it has no such text.
std::string Analyzer::code_text(const Expr* e) const {
  std::string text = exact_text(e, ctx_);
  if (const auto* d = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()); text.empty() && d && !d->hasQualifier() &&
                                                                      isa<VarDecl>(d->getDecl()))
    text = d->getDecl()->getNameAsString();
  return text;
}

std::optional<Affine> Analyzer::fold(const Expr* e, std::string& why, int depth) const {
  e = e->IgnoreParens();
  if (!e->getType()->isIntegralOrEnumerationType()) {
    why = "'" + text_of(e, ctx_) + "' is not an integer expression";
    return std::nullopt;
  }
  if (Expr::EvalResult r; !e->isValueDependent() && e->EvaluateAsInt(r, ctx_))
    return Affine::invariant(Poly::constant(r.Val.getInt().getExtValue()));
  // A macro use standing for an invariant value is a symbol as written (NX for (n - 2)).
  // A default argument has no text at the call.
  const std::string text = code_text(e);
  if (invariant(e) && !text.empty() &&
      (e->getBeginLoc().isMacroID() || (!isa<BinaryOperator>(e) && !isa<UnaryOperator>(e) && !isa<CastExpr>(e))))
    return Affine::invariant(Poly::symbol(text));
  if (const auto* c = dyn_cast<CastExpr>(e)) {
    if (c->getSubExpr()->getType()->isIntegralOrEnumerationType() && keeps_value(c->getType(), c->getSubExpr()->getType(), ctx_))
      return fold(c->getSubExpr(), why, depth);
  } else if (const auto* b = dyn_cast<BinaryOperator>(e)) {
    const auto op = b->getOpcode();
    if (op == BO_Add || op == BO_Sub || op == BO_Mul) {
      auto l = fold(b->getLHS(), why, depth);
      if (!l) return l;
      auto r = fold(b->getRHS(), why, depth);
      if (!r) return r;
      if (op == BO_Add) return *l + *r;
      if (op == BO_Sub) return *l + -*r;
      auto p = *l * *r;
      if (!p) why = "'" + text_of(e, ctx_) + "' multiplies two loop variables";
      return p;
    }
  } else if (const auto* u = dyn_cast<UnaryOperator>(e)) {
    if (u->getOpcode() == UO_Minus || u->getOpcode() == UO_Plus) {
      auto s = fold(u->getSubExpr(), why, depth);
      if (s && u->getOpcode() == UO_Minus) return -*s;
      return s;
    }
  } else if (const auto* d = dyn_cast<DeclRefExpr>(e)) {
    if (const auto* v = dyn_cast<VarDecl>(d->getDecl())) {
      if (v == header_.var) return Affine::variable(v->getName().str());
      if (auto it = env_.find(v); it != env_.end() && !changes(v)) return it->second;
      if (auto it = keys_.find(v); it != keys_.end() && !changes(v)) return Affine::variable(it->second);
      if (unknown_bounds_.count(v)) {
        why = "the bounds of inner loop variable '" + v->getName().str() + "' are not affine";
        return std::nullopt;
      }
      if (changes(v)) {
        why = "'" + v->getName().str() + "' changes inside the loop";
        return std::nullopt;
      }
      // A local computed from the loop variables and never changed: use its definition.
      if (scan_.declared.count(v) && v->hasLocalStorage() && v->getInit() && !v->getType()->isReferenceType() && depth < 8)
        return fold(v->getInit(), why, depth + 1);
    }
  }
  if (why.empty()) why = "'" + text_of(e, ctx_) + "' is not affine";
  return std::nullopt;
}

std::optional<std::pair<Bound, Bound>> Analyzer::interval(const Affine& a, const std::string& skip) const {
  Bound lo = Bound::of(a.coef("")), hi = lo;
  for (const auto& [var, c] : a.parts) {
    if (var.empty() || var == skip) continue;
    auto r = ranges_.find(var);
    if (r == ranges_.end()) return std::nullopt;
    auto [l, h] = scale(c, r->second.first, r->second.second);
    lo = lo + l;
    hi = hi + h;
  }
  return std::make_pair(lo, hi);
}

void Analyzer::compute_inner_ranges(std::vector<InnerVar>* out) {
  for (const auto& [f, h] : scan_.inner) {
    if (changes(h.var)) continue;  // not canonical after all: its uses are not affine
    std::string why;
    auto lower = fold(h.lower, why), upper = fold(h.upper, why);
    std::optional<std::pair<Bound, Bound>> lo, hi;
    if (lower && upper) {
      lo = interval(*lower, "");
      hi = interval(*upper, "");
    }
    if (!lo || !hi) {
      // In a callee, or in a lambda the loop may call with a shared array (and then analyze
      // as a callee), the subscript that uses it says why.
      if (loop_ && !in_lambda(f))
        report_.warning(f->getBeginLoc(), "bounds of inner loop variable '" + h.var->getName().str() +
                                            "' are not affine (" + (why.empty() ? "depends on an unknown range" : why) +
                                            "); subscripts using it cover the whole array");
      keys_.erase(h.var);
      unknown_bounds_.insert(h.var);
      continue;
    }
    Bound top = h.inclusive ? hi->second : hi->second + Bound::of(Poly::constant(-1));
    ranges_[keys_[h.var]] = {lo->first, top};
    if (moves_with_loop(*lower) || moves_with_loop(*upper)) moving_.insert(keys_[h.var]);
    if (out) out->push_back({h.var->getName().str(), lo->first, top});
  }
}

std::string Analyzer::key(const VarDecl* v) {
  std::string k = v->getName().str();
  if (!loop_) k = chain_.back()->getNameAsString() + "::" + k;  // apart from the caller's
  const std::string stem = k;
  // An inner loop may reuse the marked loop's name (for (long i ...) inside the loop over i).
  for (int n = 2; k == loop_var_ || ranges_.count(k) || std::any_of(keys_.begin(), keys_.end(), [&](const auto& e) { return e.second == k; }); ++n)
    k = stem + "#" + std::to_string(n);
  return keys_[v] = k;
}

const Stmt* Analyzer::parent(const Stmt* s) const {
  const Stmt* p = parents_.getParent(const_cast<Stmt*>(s));
  while (p && isa<ParenExpr>(p)) p = parents_.getParent(const_cast<Stmt*>(p));
  return p;
}

// A lambda's body is analyzed as a callee where the lambda is called with a shared array.
bool Analyzer::in_lambda(const Stmt* s) const {
  for (const Stmt* p = parent(s); p; p = parent(p))
    if (isa<LambdaExpr>(p)) return true;
  return false;
}

// How the element designated by the lvalue `e` is used.
Access Analyzer::classify(const Expr* e, bool& escapes) const {
  const Stmt* p = parent(e);
  if (const auto* c = dyn_cast_or_null<ImplicitCastExpr>(p)) {
    if (c->getCastKind() == CK_LValueToRValue) return Access::read;
    if (c->getCastKind() == CK_NoOp || c->getCastKind() == CK_UncheckedDerivedToBase || c->getCastKind() == CK_DerivedToBase)
      return classify(c, escapes);
    if (c->getCastKind() == CK_ArrayToPointerDecay) escapes = true;
    return Access::read_write;
  }
  if (const auto* b = dyn_cast_or_null<BinaryOperator>(p)) {
    if (b->isAssignmentOp() && b->getLHS()->IgnoreParens() == e)
      return b->getOpcode() == BO_Assign ? Access::write : Access::read_write;
    return Access::read;
  }
  if (const auto* u = dyn_cast_or_null<UnaryOperator>(p)) {
    if (u->isIncrementDecrementOp()) return Access::read_write;
    if (u->getOpcode() == UO_AddrOf) escapes = true;
    return Access::read_write;
  }
  if (const auto* m = dyn_cast_or_null<MemberExpr>(p)) {
    if (const auto* md = dyn_cast<CXXMethodDecl>(m->getMemberDecl())) return md->isConst() ? Access::read : Access::read_write;
    return classify(m, escapes);
  }
  if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(p)) {
    if (op->getNumArgs() > 0 && op->getArg(0)->IgnoreParens() == e) {
      if (op->getOperator() == OO_Equal) return Access::write;
      if (const auto* md = dyn_cast_or_null<CXXMethodDecl>(op->getDirectCallee()); md && md->isConst()) return Access::read;
      return Access::read_write;
    }
  }
  if (const auto* c = dyn_cast_or_null<CallExpr>(p)) {
    const FunctionDecl* fn = c->getDirectCallee();
    for (unsigned k = 0; k < c->getNumArgs(); ++k)
      if (c->getArg(k)->IgnoreParens() == e) {
        const unsigned param = k - first_param_arg(c, fn);
        if (fn && param < fn->getNumParams() && !writable_reference(fn->getParamDecl(param)->getType()))
          return Access::read;
      }
    return Access::read_write;
  }
  if (const auto* ds = dyn_cast_or_null<DeclStmt>(p)) {
    for (const Decl* d : ds->decls())
      if (const auto* v = dyn_cast<VarDecl>(d); v && v->getInit() && v->getInit()->IgnoreParens() == e)
        return writable_reference(v->getType()) ? Access::read_write : Access::read;
  }
  if (isa_and_nonnull<CXXConstructExpr>(p) || isa_and_nonnull<InitListExpr>(p)) return Access::read;
  if (isa_and_nonnull<ReturnStmt>(p)) escapes = true;  // a callee returning a reference to it
  return Access::read_write;
}

// Builds the section of one use of a shared array name.
void Analyzer::describe(const Expr* name_ref) {
  const std::string array = code_text(name_ref);
  if (array.empty()) {
    report_.error(name_ref->getBeginLoc(), "shared array '" + text_of(name_ref, ctx_) +
                                               "' is named inside a macro in a way the pass cannot copy before the loop; "
                                               "name it outside the macro, or pass it to the macro as an argument");
    return;
  }
  const QualType type = name_ref->getType();
  if (!type->isPointerType() && !type->isArrayType()) {
    report_.warning(name_ref->getBeginLoc(), "'" + array + "' has the sh_ prefix but is neither a pointer nor an array; it is not described");
    return;
  }
  if (const auto* d = dyn_cast<DeclRefExpr>(name_ref); d && scan_.declared.count(dyn_cast<VarDecl>(d->getDecl()))) {
    report_.warning(name_ref->getBeginLoc(), "'" + array + "' is declared inside the loop and is not described; describe the array it points into instead");
    return;
  }
  if (!invariant(name_ref)) {
    report_.error(name_ref->getBeginLoc(), "shared array '" + array + "' changes inside the loop; its accesses cannot be described");
    return;
  }
  const Shape shape = shape_of(type, ctx_);
  Section proto;
  proto.array = array;
  proto.elem_type = shape.elem.getUnqualifiedType().getAsString(ctx_.getPrintingPolicy());
  proto.base = array;
  if (!shape.extent.empty()) {
    proto.base = "&" + array;
    for (size_t k = 0; k <= shape.extent.size(); ++k) proto.base += "[0]";
    proto.row_length = shape.unit(0);
  }
  describe_from(name_ref, proto, shape, Affine{});
}

// Climbs from `ref`, a pointer of `shape` at element `start`, through the subscripts,
// dereferences and pointer arithmetic applied to it.
Reach Analyzer::climb(const Expr* ref, const Shape& shape, std::optional<Affine> start, std::string& why) const {
  Reach r{ref, std::move(start)};
  const auto advance = [&](const Expr* by, bool back) {
    const auto n = fold(by, why);
    const auto scaled = n ? *n * Affine::invariant(Poly::constant(shape.unit(r.depth))) : std::nullopt;
    r.at = r.at && scaled ? std::optional<Affine>(*r.at + (back ? -*scaled : *scaled)) : std::nullopt;
  };
  while (const Stmt* p = parent(r.cur)) {
    if (const auto* c = dyn_cast<ImplicitCastExpr>(p)) {
      const auto kind = c->getCastKind();
      if (r.lvalue && kind == CK_ArrayToPointerDecay) {  // a row becomes a pointer into it
        ++r.depth;
        r.lvalue = false;
      } else if (r.lvalue || (kind != CK_LValueToRValue && kind != CK_ArrayToPointerDecay && kind != CK_NoOp)) {
        break;
      }
    } else if (const auto* a = dyn_cast<ArraySubscriptExpr>(p); a && !r.lvalue && a->getBase()->IgnoreParens() == r.cur) {
      advance(a->getIdx(), false);
      r.lvalue = true;
    } else if (const auto* u = dyn_cast<UnaryOperator>(p);
               u && ((u->getOpcode() == UO_Deref && !r.lvalue) || (u->getOpcode() == UO_AddrOf && r.lvalue))) {
      r.lvalue = !r.lvalue;
    } else if (const auto* b = dyn_cast<BinaryOperator>(p); b && !r.lvalue && b->getType()->isPointerType() &&
                                                             (b->getOpcode() == BO_Add || b->getOpcode() == BO_Sub)) {
      advance(b->getLHS()->IgnoreParens() == r.cur ? b->getRHS() : b->getLHS(), b->getOpcode() == BO_Sub);
    } else {
      break;
    }
    r.cur = cast<Expr>(p);
  }
  return r;
}

// Adds the section of the element a use of a pointer into the array of `proto` ends at, or
// of what a callee it is passed to does with it.
void Analyzer::describe_from(const Expr* ref, const Section& proto, const Shape& shape, std::optional<Affine> start) {
  std::string why;
  const Reach r = climb(ref, shape, std::move(start), why);
  const bool element = r.lvalue && r.depth == shape.extent.size();
  if (!r.lvalue && (compared_only(r.cur) || through_call(r, proto, shape, why))) return;
  Section s = proto;
  bool escapes = !element;
  s.access = classify(r.cur, escapes);
  if (escapes) s.access = Access::read_write;
  std::optional<std::pair<Bound, Bound>> range;
  if (!element || escapes) {
    if (why.empty()) why = "its address escapes";
  } else if (!shape.known) {
    why = "the array shape is not known";
  } else if (r.at) {
    range = interval(*r.at, loop_var_);
    if (!range && why.empty()) why = "it uses a variable without a known range";
  }
  if (!range) {
    s.whole = true;
    not_affine(ref, proto.array, why);
  } else {
    s.coef = r.at->coef(loop_var_);
    s.lo = range->first;
    s.hi = range->second;
    check_shared_updates(ref, s, *r.at);
  }
  sections_.push_back(s);
}

// Whether `a` changes with the marked loop's variable, directly or through an inner loop
// variable whose range does (j in for (j = i * n; ...)).
bool Analyzer::moves_with_loop(const Affine& a) const {
  return std::any_of(a.parts.begin(), a.parts.end(), [&](const auto& part) {
    return !part.first.empty() && !part.second.is_zero() && (part.first == loop_var_ || moving_.count(part.first));
  });
}

// A write whose elements do not move with the loop variable is made by every iteration, and
// so by every rank: a sum into sh_s[0] or column sums into sh_c[j] end with one rank's part.
void Analyzer::check_shared_updates(const Expr* ref, const Section& s, const Affine& at) {
  if (!loop_ || s.access == Access::read || moves_with_loop(at)) return;
  const std::string what = s.access == Access::write ? "writes" : "updates";
  report_.warning(ref->getBeginLoc(), "every iteration " + what + " the same elements of '" + s.array +
                                          "': the ranks run different iterations and race on them, so the result is one rank's, "
                                          "not the sequential one (unless a single iteration does it); for a reduction, "
                                          "accumulate per rank and combine after the loop");
}

// A pointer whose value alone is used (`if (p)`, `p < end`) touches no element.
bool Analyzer::compared_only(const Expr* pointer) const {
  const Stmt* p = parent(pointer);
  if (const auto* c = dyn_cast_or_null<ImplicitCastExpr>(p)) return c->getCastKind() == CK_PointerToBoolean;
  const auto* b = dyn_cast_or_null<BinaryOperator>(p);
  return b && b->isComparisonOp();
}

void Analyzer::not_affine(const Expr* where, const std::string& array, const std::string& why, bool located) {
  if (!loop_) {  // the call in the loop is reported, with the first reason and where it arose
    if (callee_why_.empty()) callee_why_ = located ? why : "in '" + chain_.back()->getNameAsString() + "': " + why;
    return;
  }
  report_.warning(where->getBeginLoc(), "access to '" + array + "' is not affine in '" + loop_var_ + "' (" + why +
                                            "); the whole array is assumed");
}

// The pointer a climb ended at may be an argument of a call: when the callee's body is at
// hand, its uses of the parameter give the sections, in the caller's terms.
bool Analyzer::through_call(const Reach& r, const Section& proto, const Shape& shape, std::string& why) {
  const auto* call = dyn_cast_or_null<CallExpr>(parent(r.cur));
  if (!call || !r.at || !shape.known) return false;
  const FunctionDecl* def = followed_callee(call, why);
  if (!def) return false;
  const unsigned first = first_param_arg(call, call->getDirectCallee());
  const ParmVarDecl* param = nullptr;
  for (unsigned k = first; k < call->getNumArgs(); ++k)
    if (call->getArg(k)->IgnoreParens() == r.cur && k - first < def->getNumParams()) param = def->getParamDecl(k - first);
  if (!param) return false;
  // The parameter must point where the argument does, with the same rows below.
  const Shape inner = shape_of(param->getType(), ctx_);
  if (!param->getType()->isPointerType() || !inner.known ||
      inner.elem.getCanonicalType().getUnqualifiedType() != shape.elem.getCanonicalType().getUnqualifiedType() ||
      !std::equal(inner.extent.begin(), inner.extent.end(), shape.extent.begin() + long(r.depth), shape.extent.end())) {
    why = "it is passed to '" + def->getNameAsString() + "' as another type";
    return false;
  }
  Analyzer callee(*this, def, bind_integers(call, def));
  const std::vector<Section> found = callee.through_param(param, proto, inner, *r.at);
  sections_.insert(sections_.end(), found.begin(), found.end());
  if (!callee.callee_why_.empty()) not_affine(call, proto.array, callee.callee_why_, true);
  return true;
}

// The definition of the function `call` calls, when its body can stand for the call.
const FunctionDecl* Analyzer::followed_callee(const CallExpr* call, std::string& why) const {
  const FunctionDecl* fn = call->getDirectCallee();
  const FunctionDecl* def = nullptr;
  if (!fn) return nullptr;
  const std::string name = std::string("'").append(fn->getNameAsString()).append("'");  // "'" + s: GCC 12's false -Wrestrict
  if (!fn->hasBody(def) || !def->getBody()) {
    why = "it is passed to " + name + ", whose body is not visible here";
    return nullptr;
  }
  if (const auto* md = dyn_cast<CXXMethodDecl>(def); md && md->isVirtual() && !md->hasAttr<FinalAttr>() && !md->getParent()->hasAttr<FinalAttr>()) {
    why = "it is passed to " + name + ", which is virtual: the override that runs is not known here";
    return nullptr;
  }
  if (std::count(chain_.begin(), chain_.end(), def)) {
    why = name + " is called recursively";
    return nullptr;
  }
  // Kernels call a helper or two; each level analyzes its body again for every array passed.
  constexpr size_t max_depth = 4;
  if (chain_.size() >= max_depth) {
    why = "it is passed on through more than " + std::to_string(max_depth) + " calls";
    return nullptr;
  }
  return def;
}

// The callee's integer parameters that stand for affine values of the caller's (not those
// given a default argument, or a conversion that may change the value).
std::map<const VarDecl*, Affine> Analyzer::bind_integers(const CallExpr* call, const FunctionDecl* def) const {
  std::map<const VarDecl*, Affine> env;
  const unsigned first = first_param_arg(call, call->getDirectCallee());
  for (unsigned k = first; k < call->getNumArgs() && k - first < def->getNumParams(); ++k) {
    const ParmVarDecl* p = def->getParamDecl(k - first);
    std::string ignored;
    if (p->getType()->isIntegerType())
      if (auto v = fold(call->getArg(k), ignored)) env[p] = *v;
  }
  return env;
}

std::vector<Section> Analyzer::through_param(const ParmVarDecl* param, const Section& proto, const Shape& shape, const Affine& start) {
  scan_.TraverseStmt(const_cast<Stmt*>(chain_.back()->getBody()));
  for (const auto& [f, h] : scan_.inner) key(h.var);
  compute_inner_ranges(nullptr);
  if (changes(param)) {
    not_affine(nullptr, proto.array, "parameter '" + param->getNameAsString() + "' is changed");
    Section s = proto;
    s.whole = true;
    s.access = Access::read_write;
    return {s};
  }
  for (const DeclRefExpr* ref : scan_.param_refs)
    if (ref->getDecl() == param) describe_from(ref, proto, shape, start);
  return std::move(sections_);
}

// The ranks count iterations in long from the bounds' values; the loop's own comparison must
// mean the same: an integer one, and not one that turns a negative signed variable into a
// huge unsigned value (fine when the loop starts at a constant >= 0: i < v.size()).
void Analyzer::check_comparison() {
  const auto* cond = cast<BinaryOperator>(loop_->getCond()->IgnoreParens());
  const QualType compared = cond->getLHS()->getType();
  const std::string var = header_.var->getNameAsString();
  if (!compared->isIntegralOrEnumerationType()) {
    report_.error(header_.upper->getBeginLoc(), "loop bound '" + text_of(header_.upper, ctx_) + "' is not an integer, so '" + var +
                                                    "' is compared as " + compared.getAsString() +
                                                    "; convert the bound to an integer type before the loop");
    return;
  }
  Expr::EvalResult r;
  const bool nonnegative_start = header_.lower->EvaluateAsInt(r, ctx_) && !r.Val.getInt().isNegative();
  if (compared->isUnsignedIntegerType() && header_.var->getType()->isSignedIntegerType() && !nonnegative_start)
    report_.error(header_.upper->getBeginLoc(), "signed '" + var + "' is compared with unsigned '" + text_of(header_.upper, ctx_) +
                                                    "', where a negative '" + var +
                                                    "' counts as a huge value; convert the bound to a signed type, e.g. (long)(" +
                                                    text_of(header_.upper, ctx_) + ")");
}

std::optional<Loop> Analyzer::run() {
  const size_t errors_before = report_.error_count();
  const SourceLocation at = loop_->getBeginLoc();
  header_ = parse_header(loop_);
  if (!header_.var) {
    const auto* inc = dyn_cast_or_null<UnaryOperator>(loop_->getInc() ? loop_->getInc()->IgnoreParens() : nullptr);
    const auto* cinc = dyn_cast_or_null<CompoundAssignOperator>(loop_->getInc() ? loop_->getInc()->IgnoreParens() : nullptr);
    if ((inc && inc->isDecrementOp()) || (cinc && cinc->getOpcode() == BO_SubAssign))
      report_.error(at, "decreasing '#pragma dsm parallel for' loops are not supported; count upwards: for (long i = lb; i < ub; ++i)");
    else
      report_.error(at, "'#pragma dsm parallel for' needs a canonical loop: for (T i = lb; i < ub | i <= ub; ++i | i++ | i += step) with an integer T");
    return std::nullopt;
  }
  scan_.TraverseStmt(const_cast<Stmt*>(loop_->getBody()));
  check_control(loop_->getBody(), 0, false, ctx_, report_);
  check_writes(loop_, header_.var, ctx_, report_);
  const std::string var = header_.var->getName().str();
  loop_var_ = var;
  keys_[header_.var] = var;
  if (scan_.modified.count(header_.var))
    report_.error(scan_.modified[header_.var].front()->getBeginLoc(), "loop variable '" + var + "' is changed inside the loop body");
  keys_.erase(header_.var);  // i is not an inner variable
  for (const auto& [f, h] : scan_.inner) key(h.var);

  Loop out;
  out.stmt = loop_;
  out.line = ctx_.getSourceManager().getPresumedLineNumber(at);
  out.var = var;
  out.var_type = header_.var->getType().getUnqualifiedType().getAsString(ctx_.getPrintingPolicy());
  out.var_unsigned = header_.var->getType()->isUnsignedIntegerType();
  std::string why;
  auto lower = fold(header_.lower, why), upper = fold(header_.upper, why);
  for (const Expr* e : {header_.lower, header_.upper, header_.step}) {
    if (e && !invariant(e))
      report_.error(e->getBeginLoc(), "loop bound '" + text_of(e, ctx_) + "' changes inside the loop or has side effects");
  }
  if (header_.step) {
    Expr::EvalResult r;
    if (!header_.step->getType()->isIntegralOrEnumerationType())
      report_.error(header_.step->getBeginLoc(), "loop step '" + text_of(header_.step, ctx_) + "' is not an integer");
    else if (header_.step->EvaluateAsInt(r, ctx_) && r.Val.getInt().getExtValue() <= 0)
      report_.error(header_.step->getBeginLoc(), "loop step must be positive");
  }
  check_comparison();
  if (loop_->getLParenLoc().isMacroID() || loop_->getRParenLoc().isMacroID())
    report_.error(at, "the header of a '#pragma dsm parallel for' loop comes from a macro; write the for (...) itself in the source");
  out.step = "1";
  for (const auto& [e, text] : {std::pair{header_.lower, &out.lb}, {header_.upper, &out.ub}, {header_.step, &out.step}}) {
    if (!e) continue;
    *text = code_text(e);
    if (text->empty())
      report_.error(e->getBeginLoc(), "loop bound '" + text_of(e, ctx_) +
                                          "' is only a part of a macro expansion; write the whole bound in the macro or outside it");
  }
  if (report_.error_count() > errors_before) return std::nullopt;
  if (header_.inclusive) out.ub = "(" + out.ub + ") + 1";
  if (lower && upper) {
    Bound ub = Bound::of(upper->coef(""));
    ranges_[var] = {Bound::of(lower->coef("")), header_.inclusive ? ub : ub + Bound::of(Poly::constant(-1))};
  }
  out.header = SourceRange(loop_->getLParenLoc(), loop_->getRParenLoc());

  compute_inner_ranges(&out.inner);
  for (const Expr* ref : scan_.shared_refs) describe(ref);

  // One section per array, access and coefficient when the bounds can be ordered.
  for (Section& s : sections_) {
    auto same = std::find_if(out.sections.begin(), out.sections.end(), [&](const Section& o) {
      return o.base == s.base && o.access == s.access && o.whole == s.whole &&
             (s.whole || (o.coef == s.coef && difference(o.lo, s.lo) && difference(o.hi, s.hi)));
    });
    if (same == out.sections.end()) {
      out.sections.push_back(s);
    } else if (!s.whole) {
      same->lo = min(same->lo, s.lo);
      same->hi = max(same->hi, s.hi);
    }
  }
  return out;
}

}  // namespace

std::optional<Loop> analyze_loop(const ForStmt* loop, const std::vector<const ForStmt*>& instances, ASTContext& ctx,
                                 Reporter& report) {
  for (const ForStmt* copy : instances)
    if (const Header h = parse_header(copy); h.var) check_writes(copy, h.var, ctx, report);
  return Analyzer(loop, ctx, report).run();
}

}  // namespace dsmpass
