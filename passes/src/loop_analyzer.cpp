#include "loop_analyzer.hpp"

#include "source.hpp"

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

#include <algorithm>
#include <set>
#include <functional>

namespace dsmpass {

using namespace clang;

namespace {

// A conversion of an integer that keeps its value wherever the program's indices can be:
// not to bool or to types narrower than int (a value of 300 in an unsigned char is 44).
bool keeps_value(QualType to, QualType from, const ASTContext& ctx) {
  return !to->isBooleanType() && (ctx.getTypeSize(to) >= ctx.getTypeSize(from) || ctx.getTypeSize(to) >= 32);
}

// `text` in quotes, for messages. Appended to the quote: "'" + text, once inlined into a
// function that builds several messages, makes GCC 12 warn of an overlapping copy that
// cannot happen (-Wrestrict).
std::string quoted(const std::string& text) { return std::string("'").append(text).append("'"); }

}  // namespace

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
      if (std::none_of(scan_.inner.begin(), scan_.inner.end(),
                       [&](const auto& f) { return f.second.inc == s || f.second.init == s; }))
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
        if (!loop_ || v == header_.var || scan_.declared.count(v) || keys_.count(v) || changes(v)) ok = false;
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
    why = quoted(text_of(e, ctx_)) + " is not an integer expression";
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
      if (!p) why = quoted(text_of(e, ctx_)) + " multiplies two loop variables";
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
        why = quoted(v->getName().str()) + " changes inside the loop";
        return std::nullopt;
      }
      // A local computed from the loop variables and never changed: use its definition.
      if (scan_.declared.count(v) && v->hasLocalStorage() && v->getInit() && !v->getType()->isReferenceType() && depth < 8)
        return fold(v->getInit(), why, depth + 1);
    }
  }
  if (why.empty()) why = quoted(text_of(e, ctx_)) + " is not affine";
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
  std::set<std::string> seen;  // a counter of several loops (C89 style) spans all their ranges
  for (const auto& [f, h] : scan_.inner) {
    if (changes(h.var)) continue;  // not canonical after all: its uses are not affine
    std::string why;
    auto lower = fold(h.lower, why), upper = fold(h.upper, why);
    std::optional<std::pair<Bound, Bound>> lo, hi;
    if (lower && upper) {
      lo = interval(*lower, "");
      hi = interval(*upper, "");
    }
    if ((!lo || !hi) && loop_) {
      if (const auto span = span_of(h)) {  // its subscripts are described as sparse reads
        spans_[keys_[h.var]] = *span;
        moving_.insert(keys_[h.var]);
        continue;
      }
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
    Bound bottom = h.lower_exclusive ? lo->first + Bound::of(Poly::constant(1)) : lo->first;
    const std::string& k = keys_[h.var];
    if (!seen.insert(k).second) {
      bottom = min(bottom, ranges_[k].first);
      top = max(top, ranges_[k].second);
    }
    ranges_[k] = {bottom, top};
    if (moves_with_loop(*lower) || moves_with_loop(*upper)) moving_.insert(keys_[h.var]);
    if (out) out->push_back({h.var->getName().str(), bottom, top});
  }
}

std::optional<Analyzer::Span> Analyzer::span_of(const Header& h) const {
  if (h.inclusive || h.lower_exclusive) return std::nullopt;
  // An entry of a shared array at an affine function of the marked loop's variable alone.
  struct Entry {
    std::string array;
    Affine at;
  };
  const auto entry = [&](const Expr* e) -> std::optional<Entry> {
    const auto* sub = dyn_cast<ArraySubscriptExpr>(e->IgnoreParenImpCasts());
    const auto* base = sub ? dyn_cast<DeclRefExpr>(sub->getBase()->IgnoreParenImpCasts()) : nullptr;
    if (!base || !is_shared_name(base->getDecl()) || !base->getType()->isPointerType() || !invariant(base)) return std::nullopt;
    std::string ignored;
    auto at = fold(sub->getIdx(), ignored);
    if (!at || std::any_of(at->parts.begin(), at->parts.end(), [&](const auto& p) { return !p.first.empty() && p.first != loop_var_; }))
      return std::nullopt;
    return Entry{code_text(base), *at};
  };
  const auto lower = entry(h.lower), upper = entry(h.upper);
  if (!lower || !upper || lower->array.empty() || lower->array != upper->array ||
      !(lower->at.coef(loop_var_) == upper->at.coef(loop_var_)))
    return std::nullopt;
  return Span{lower->array, lower->at.coef(loop_var_), Bound::of(lower->at.coef("")), Bound::of(upper->at.coef(""))};
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

// Whether `a` changes with the marked loop's variable, directly or through an inner loop
// variable whose range does (j in for (j = i * n; ...)).
bool Analyzer::moves_with_loop(const Affine& a) const {
  return std::any_of(a.parts.begin(), a.parts.end(), [&](const auto& part) {
    return !part.first.empty() && !part.second.is_zero() && (part.first == loop_var_ || moving_.count(part.first));
  });
}

}  // namespace dsmpass
