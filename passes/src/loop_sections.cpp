#include "loop_sections.hpp"

#include "loop_analyzer.hpp"
#include "source.hpp"

#include <clang/AST/Attr.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>

#include <algorithm>

namespace dsmpass {

using namespace clang;

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
    const bool first = r.steps++ == 0;
    const auto n = fold(by, why);
    r.opaque = first && !n && !back ? by : nullptr;
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
  uses_.push_back({proto.array, proto.base, s.access, range ? r.at : std::optional<Affine>(), ref->getBeginLoc()});
  if (!range && element && !escapes && s.access == Access::read && shape.extent.empty() && loop_ && sparse_read(s, r)) {
    s.whole = true;
  } else if (!range) {
    s.whole = true;
    not_affine(ref, proto.array, why);
  } else {
    s.coef = r.at->coef(loop_var_);
    s.lo = range->first;
    s.hi = range->second;
    bool inner = false, unit = false;
    for (const auto& [var, c] : r.at->parts) {
      if (var.empty() || var == loop_var_) continue;
      inner = true;
      const auto k = c.as_constant();
      unit = unit || (k && (*k == 1 || *k == -1));
    }
    s.dense = !inner || unit;
    s.strided = strided(*r.at);
    check_shared_updates(ref, s, *r.at);
  }
  sections_.push_back(s);
}

// The blocks of a subscript with an inner variable that steps by more than the rest of it
// spans (k in A[k][j] at iteration j: a row per step, one element of each): the variable
// with the largest constant coefficient. None when another's coefficient is not constant,
// or the blocks could touch (their hull is all they touch then).
std::optional<Section::Strided> Analyzer::strided(const Affine& at) const {
  std::string var;
  long c = 0;
  for (const auto& [v, k] : at.parts) {
    if (v.empty() || v == loop_var_) continue;
    const auto constant = k.as_constant();
    if (!constant) return std::nullopt;
    if (std::labs(*constant) > std::labs(c)) {
      var = v;
      c = *constant;
    }
  }
  const auto range = ranges_.find(var);
  if (var.empty() || range == ranges_.end()) return std::nullopt;
  Affine rest = at;
  rest.parts.erase(var);
  const auto block = interval(rest, loop_var_);
  const auto width = block ? difference(block->second, block->first) : std::nullopt;
  if (!width || *width + 1 >= std::labs(c)) return std::nullopt;
  const auto& [first, last] = range->second;
  const Bound lowest = scale(Poly::constant(c), first, last).first;  // the first block's row
  return Section::Strided{std::labs(c), block->second + lowest,
                          last + scale(Poly::constant(-1), first, first).first + Bound::of(Poly::constant(1))};
}

// Positions `at` (an index into some array) as a sparse read gives them: on a CSR row when
// `at` is k + c for an inner variable k over one (offset c), else affine in the loop
// variable alone, coef*i + [lo, hi].
bool Analyzer::sparse_positions(const Affine& at, Section& s) const {
  Section::Sparse sp;
  for (const auto& [var, c] : at.parts) {
    if (var.empty()) continue;
    const auto span = spans_.find(var);
    if (span == spans_.end() || c.as_constant() != 1 || !sp.bounds.empty()) {
      if (var == loop_var_) continue;
      return false;
    }
    sp.bounds = span->second.bounds;
    s.coef = span->second.coef;
    s.lo = span->second.lo;
    s.hi = span->second.hi;
  }
  if (!sp.bounds.empty()) {
    if (!at.coef(loop_var_).is_zero()) return false;
    sp.offset = at.coef("");
  } else {
    const auto range = interval(at, loop_var_);
    if (!range) return false;
    s.coef = at.coef(loop_var_);
    std::tie(s.lo, s.hi) = *range;
  }
  s.sparse = sp;
  return true;
}

// A read the subscript of which is not affine, as a sparse loop's: an element of a CSR row
// (sh_v[k], k from sh_p[i] to sh_p[i + 1]), or an element named by another shared array
// (sh_x[sh_col[k]]). False when it is neither.
bool Analyzer::sparse_read(Section& s, const Reach& r) const {
  if (r.at) return sparse_positions(*r.at, s);
  const auto* sub = r.opaque ? dyn_cast<ArraySubscriptExpr>(r.opaque->IgnoreParenImpCasts()) : nullptr;
  if (!sub) return false;
  const auto* index = dyn_cast<DeclRefExpr>(sub->getBase()->IgnoreParenImpCasts());
  std::string ignored;
  const auto at = index ? fold(sub->getIdx(), ignored) : std::nullopt;
  if (!at || !is_shared_name(index->getDecl()) || !index->getType()->isPointerType() || !invariant(index) ||
      !sparse_positions(*at, s))
    return false;
  s.sparse->index = code_text(index);
  return !s.sparse->index.empty();
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
  uses_.insert(uses_.end(), callee.uses_.begin(), callee.uses_.end());
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

std::vector<Section> Analyzer::through_param(const ParmVarDecl* param, const Section& proto, const Shape& shape,
                                            const Affine& start) {
  scan_ = scan_body(chain_.back()->getBody());
  for (const auto& [f, h] : scan_.inner) key(h.var);
  compute_inner_ranges(nullptr);
  if (changes(param)) {
    not_affine(nullptr, proto.array, "parameter '" + param->getNameAsString() + "' is changed");
    Section s = proto;
    s.whole = true;
    s.access = Access::read_write;
    uses_.push_back({proto.array, proto.base, s.access, std::nullopt, param->getLocation()});
    return {s};
  }
  for (const DeclRefExpr* ref : scan_.param_refs)
    if (ref->getDecl() == param) describe_from(ref, proto, shape, start);
  return std::move(sections_);
}

}  // namespace dsmpass
