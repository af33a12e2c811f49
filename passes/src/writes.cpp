#include "writes.hpp"

#include "loop_form.hpp"
#include "source.hpp"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dsmpass {
namespace {

using namespace clang;

// Where the memory a write lands in lives.
enum class Home {
  shared,        // elements of an sh_ array
  local,         // a variable (or temporary) of one iteration
  outside,       // a variable declared before the loop, or a member of *this
  static_local,  // a static variable of the body: one for every iteration
  unknown,       // behind a pointer, iterator or call that is not an sh_ array
};

struct Target {
  Home home;
  std::string name;  // the variable, or the text of what the pointer comes from
  bool parameter = false;  // `name` is a parameter of the loop's function that no trace reached
};

bool fine(const Target& t) { return t.home == Home::shared || t.home == Home::local; }

// `c ? a : b` may be either.
Target worse(Target a, Target b) { return fine(a) ? b : a; }

bool shared_array(const ValueDecl* d) {
  return is_shared_name(d) && (d->getType()->isPointerType() || d->getType()->isArrayType());
}

// Parentheses and the wrappers of temporaries say nothing about where memory lives.
const Expr* strip(const Expr* e) {
  while (true) {
    e = e->IgnoreParens();
    if (const auto* f = dyn_cast<FullExpr>(e)) e = f->getSubExpr();
    else if (const auto* m = dyn_cast<MaterializeTemporaryExpr>(e)) e = m->getSubExpr();
    else if (const auto* b = dyn_cast<CXXBindTemporaryExpr>(e)) e = b->getSubExpr();
    else return e;
  }
}

struct Write {
  const Expr* target;  // the lvalue written, or the pointer (iterator) written through
  bool through;
  bool moves;  // ++, --, +=, -=: a pointer so changed still points into the same array
};

// A call of a function whose body may be followed: its arguments in parameter order, and the
// object `this` designates in it (a member call's object; none for a constructor's new object,
// a destructor's local, a free function).
struct Call {
  const FunctionDecl* fn;
  const Expr* at;  // where it is made
  std::vector<const Expr*> args;
  const Expr* object = nullptr;
  bool arrow = false;  // `object` is a pointer to it
};

bool is_assignment(OverloadedOperatorKind op) {
  switch (op) {
    case OO_Equal: case OO_PlusEqual: case OO_MinusEqual: case OO_StarEqual: case OO_SlashEqual:
    case OO_PercentEqual: case OO_CaretEqual: case OO_AmpEqual: case OO_PipeEqual: case OO_LessLessEqual:
    case OO_GreaterGreaterEqual: case OO_PlusPlus: case OO_MinusMinus:
      return true;
    default:
      return false;
  }
}

bool moves(const CallExpr* c) {
  const auto* op = dyn_cast<CXXOperatorCallExpr>(c);
  if (!op) return false;
  const OverloadedOperatorKind k = op->getOperator();
  return k == OO_PlusPlus || k == OO_MinusMinus || k == OO_PlusEqual || k == OO_MinusEqual;
}

// Whether calling `md` changes its object. A non-const member with a const overload of the
// same name is an accessor (operator[], at, begin, data): the call itself changes nothing,
// and writing its result is a write of its own. One without a const overload (push_back, a
// random engine's operator()) changes the object.
bool mutates(const CXXMethodDecl* md) {
  if (md->isConst() || md->isStatic() || isa<CXXConstructorDecl>(md) || isa<CXXDestructorDecl>(md)) return false;
  if (is_assignment(md->getOverloadedOperator())) return true;
  for (const NamedDecl* d : md->getParent()->lookup(md->getDeclName())) {
    const auto* other = dyn_cast<CXXMethodDecl>(d);
    if (const auto* t = dyn_cast<FunctionTemplateDecl>(d)) other = dyn_cast<CXXMethodDecl>(t->getTemplatedDecl());
    if (other && other->isConst()) return false;
  }
  return true;
}

// Every write of the body: assignments, increments, arguments bound to non-const lvalue
// references or pointers, and objects whose mutating members are called.
class WriteScan : public RecursiveASTVisitor<WriteScan> {
 public:
  explicit WriteScan(ASTContext& ctx) : ctx_(ctx) {}
  std::vector<Write> writes;
  std::vector<Call> calls;

  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->isAssignmentOp())
      writes.push_back({b->getLHS(), false, b->getOpcode() == BO_AddAssign || b->getOpcode() == BO_SubAssign});
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->isIncrementDecrementOp()) writes.push_back({u->getSubExpr(), false, true});
    return true;
  }
  bool VisitCallExpr(CallExpr* c) {
    const FunctionDecl* fn = c->getDirectCallee();
    // A member operator's argument 0 is its object, not its first parameter.
    const auto* op_method = isa<CXXOperatorCallExpr>(c) ? dyn_cast_or_null<CXXMethodDecl>(fn) : nullptr;
    if (op_method && c->getNumArgs() > 0) {
      if (mutates(op_method)) writes.push_back({c->getArg(0), false, moves(c)});
      arguments(fn, c->getArgs() + 1, c->getNumArgs() - 1);
      if (fn) calls.push_back({fn, c, {c->getArgs() + 1, c->getArgs() + c->getNumArgs()}, c->getArg(0), false});
      return true;
    }
    arguments(fn, c->getArgs(), c->getNumArgs());
    Call call{fn, c, {c->getArgs(), c->getArgs() + c->getNumArgs()}};
    if (const auto* m = dyn_cast<CXXMemberCallExpr>(c)) {
      const auto* callee = dyn_cast<MemberExpr>(m->getCallee()->IgnoreParens());
      call.object = m->getImplicitObjectArgument();
      call.arrow = callee && callee->isArrow();
      if (const CXXMethodDecl* md = m->getMethodDecl(); md && mutates(md))
        writes.push_back({call.object, call.arrow, false});
    }
    if (fn) calls.push_back(std::move(call));
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr* c) {
    arguments(c->getConstructor(), c->getArgs(), c->getNumArgs());
    calls.push_back({c->getConstructor(), c, {c->getArgs(), c->getArgs() + c->getNumArgs()}});
    return true;
  }
  // A default member initializer runs where the object is made (its expression is not a child
  // the visitor walks into).
  bool VisitCXXDefaultInitExpr(CXXDefaultInitExpr* e) {
    TraverseStmt(e->getExpr());
    return true;
  }
  // A variable of the body with a destructor of its own runs it at the end of each iteration.
  bool VisitVarDecl(VarDecl* v) {
    if (const CXXRecordDecl* rd = v->getType()->getAsCXXRecordDecl(); rd && rd->hasDefinition() && !v->hasGlobalStorage())
      if (const CXXDestructorDecl* d = rd->getDestructor(); d && d->isUserProvided())
        calls.push_back({d, v->getInit() ? v->getInit() : nullptr, {}});
    return true;
  }

 private:
  // Arguments the callee may write through. The parameter as written in a template decides:
  // forwarding references (T&&) and deduced iterators (InputIt) say nothing about writing,
  // although they become double& or double* once instantiated.
  void arguments(const FunctionDecl* fn, const Expr* const* args, unsigned count) {
    if (!fn) return;  // calls through pointers are not followed
    const FunctionDecl* pattern = fn->getTemplateInstantiationPattern();
    for (unsigned k = 0; k < count && k < fn->getNumParams(); ++k) {
      if (pattern && (k >= pattern->getNumParams() || pattern->getParamDecl(k)->isParameterPack())) return;
      const QualType type = fn->getParamDecl(k)->getType();
      const QualType written = pattern ? pattern->getParamDecl(k)->getType() : type;
      if (args[k]->isNullPointerConstant(ctx_, Expr::NPC_ValueDependentIsNotNull)) continue;
      if (type->isLValueReferenceType() && written->isLValueReferenceType() &&
          !type.getNonReferenceType().isConstQualified())
        writes.push_back({args[k], false, false});
      else if (type->isPointerType() && written->isPointerType() && !type->getPointeeType().isConstQualified() &&
               !type->getPointeeType()->isFunctionType())
        writes.push_back({args[k], true, false});
    }
  }

  ASTContext& ctx_;
};

// Follows an lvalue, or a pointer, to the variable or array whose memory it designates.
class Resolver {
 public:
  // For the writes of a function the loop calls (`call`, made where `caller` judges): its own
  // variables, and those of the functions it was called from (`chain`, outermost first: a
  // lambda's captures), belong to one call; its parameters and its object are what the call
  // binds them to.
  Resolver(const ForStmt* loop, const VarDecl* var, const std::vector<Write>& writes, const ASTContext& ctx,
           const Resolver* caller = nullptr, const Call* call = nullptr,
           std::vector<const FunctionDecl*> chain = {})
      : loop_(loop), var_(var), writes_(writes), ctx_(ctx), caller_(caller), call_(call), chain_(std::move(chain)) {}

  Target storage(const Expr* e, int depth = 0) const;
  Target pointee(const Expr* e, int depth = 0) const;

 private:
  static constexpr int max_depth = 32;  // definitions followed through locals, e.g. p = q = r
  Target variable(const VarDecl* v, int depth) const;
  Target value_of(const Expr* e, int depth) const;
  Target object(const CXXMemberCallExpr* m, int depth) const;
  Target referenced(const CallExpr* c, int depth) const;
  bool inside(const Decl* d) const;
  bool within(const Decl* d, SourceRange range) const;
  std::optional<Target> parameter(const VarDecl* v, bool through) const;
  Target self(const std::string& member) const;
  bool reassigned(const VarDecl* v) const;
  Target unknown(const Expr* e) const { return {Home::unknown, text_of(e, ctx_)}; }

  const ForStmt* loop_;
  const VarDecl* var_;
  const std::vector<Write>& writes_;
  const ASTContext& ctx_;
  const Resolver* caller_;
  const Call* call_;
  std::vector<const FunctionDecl*> chain_;
};

// Where the object designated by the lvalue `e` lives.
Target Resolver::storage(const Expr* e, int depth) const {
  e = strip(e);
  if (depth > max_depth) return unknown(e);
  if (e->isPRValue()) return {Home::local, ""};  // a temporary of this iteration
  if (const auto* c = dyn_cast<CastExpr>(e)) return storage(c->getSubExpr(), depth + 1);
  if (const auto* d = dyn_cast<DeclRefExpr>(e)) {
    if (const auto* v = dyn_cast<VarDecl>(d->getDecl())) return variable(v, depth);
    if (const auto* b = dyn_cast<BindingDecl>(d->getDecl()))
      if (const auto* v = dyn_cast_or_null<VarDecl>(b->getDecomposedDecl())) return variable(v, depth);
    return unknown(e);
  }
  if (const auto* m = dyn_cast<MemberExpr>(e)) {
    if (shared_array(m->getMemberDecl())) return {Home::shared, ""};
    // A reference member may refer anywhere, whatever object holds it.
    if (m->getMemberDecl()->getType()->isReferenceType()) return unknown(e);
    if (isa<CXXThisExpr>(m->getBase()->IgnoreParenImpCasts())) return self(m->getMemberDecl()->getNameAsString());
    return m->isArrow() ? pointee(m->getBase(), depth + 1) : storage(m->getBase(), depth + 1);
  }
  if (const auto* a = dyn_cast<ArraySubscriptExpr>(e)) return pointee(a->getBase(), depth + 1);
  if (const auto* u = dyn_cast<UnaryOperator>(e)) {
    if (u->getOpcode() == UO_Deref) return pointee(u->getSubExpr(), depth + 1);
    if (u->isIncrementDecrementOp()) return storage(u->getSubExpr(), depth + 1);  // ++x is x
  }
  if (const auto* b = dyn_cast<BinaryOperator>(e)) {
    if (b->isAssignmentOp()) return storage(b->getLHS(), depth + 1);
    if (b->getOpcode() == BO_Comma) return storage(b->getRHS(), depth + 1);
  }
  if (const auto* c = dyn_cast<AbstractConditionalOperator>(e))
    return worse(storage(c->getTrueExpr(), depth + 1), storage(c->getFalseExpr(), depth + 1));
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getNumArgs() > 0) {
    const OverloadedOperatorKind k = op->getOperator();
    if (k == OO_Subscript && op->getArg(0)->getType()->isRecordType()) return storage(op->getArg(0), depth + 1);  // a container's element
    if (k == OO_Star) return pointee(op->getArg(0), depth + 1);  // *it
    if (is_assignment(k)) return storage(op->getArg(0), depth + 1);
  }
  if (const auto* m = dyn_cast<CXXMemberCallExpr>(e)) return object(m, depth + 1);  // v.at(i), v.front()
  if (const auto* c = dyn_cast<CallExpr>(e)) return referenced(c, depth + 1);
  return unknown(e);
}

// Where the memory the pointer (or iterator) `e` points into lives.
Target Resolver::pointee(const Expr* e, int depth) const {
  e = strip(e);
  if (depth > max_depth) return unknown(e);
  if (const auto* c = dyn_cast<CastExpr>(e)) {
    switch (c->getCastKind()) {
      case CK_ArrayToPointerDecay: return storage(c->getSubExpr(), depth + 1);
      case CK_LValueToRValue: return value_of(c->getSubExpr(), depth + 1);
      case CK_NullToPointer: case CK_IntegralToPointer: case CK_FunctionToPointerDecay: return unknown(e);
      default: return pointee(c->getSubExpr(), depth + 1);
    }
  }
  if (const auto* u = dyn_cast<UnaryOperator>(e)) {
    if (u->getOpcode() == UO_AddrOf) return storage(u->getSubExpr(), depth + 1);
    if (u->isIncrementDecrementOp()) return value_of(u->getSubExpr(), depth + 1);
  }
  if (const auto* b = dyn_cast<BinaryOperator>(e)) {
    if (b->isAdditiveOp()) return pointee(b->getLHS()->getType()->isIntegralOrEnumerationType() ? b->getRHS() : b->getLHS(), depth + 1);
    if (b->getOpcode() == BO_Comma) return pointee(b->getRHS(), depth + 1);
    if (b->isAssignmentOp()) return value_of(b->getLHS(), depth + 1);
  }
  if (const auto* c = dyn_cast<AbstractConditionalOperator>(e))
    return worse(pointee(c->getTrueExpr(), depth + 1), pointee(c->getFalseExpr(), depth + 1));
  if (isa<CXXThisExpr>(e)) return self("*this");
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getNumArgs() > 0) {
    const OverloadedOperatorKind k = op->getOperator();
    if (k == OO_Arrow || k == OO_Plus || k == OO_Minus) return pointee(op->getArg(0), depth + 1);  // it->x, it + 3
    if (is_assignment(k)) return value_of(op->getArg(0), depth + 1);
  }
  if (const auto* m = dyn_cast<CXXMemberCallExpr>(e)) return object(m, depth + 1);  // v.data(), v.begin()
  if (const auto* c = dyn_cast<CXXConstructExpr>(e); c && c->getNumArgs() == 1) return pointee(c->getArg(0), depth + 1);
  if (e->isGLValue()) return value_of(e, depth + 1);  // an iterator object
  return unknown(e);
}

// Where the pointer or iterator stored in the lvalue `e` points.
Target Resolver::value_of(const Expr* e, int depth) const {
  e = strip(e)->IgnoreParenNoopCasts(ctx_);
  if (depth > max_depth) return unknown(e);
  if (const auto* m = dyn_cast<MemberExpr>(e); m && shared_array(m->getMemberDecl())) return {Home::shared, ""};
  const auto* d = dyn_cast<DeclRefExpr>(e);
  const auto* v = d ? dyn_cast<VarDecl>(d->getDecl()) : nullptr;
  if (!v) return unknown(e);
  if (shared_array(v)) return {Home::shared, ""};
  // A parameter points where the argument it was passed points, until it is reassigned.
  if (auto bound = parameter(v, true)) return reassigned(v) ? Target{Home::unknown, v->getNameAsString()} : *bound;
  if (isa<ParmVarDecl>(v) && inside(v) && !reassigned(v)) return {Home::local, ""};  // a lambda's, as above
  // A pointer of this iteration points where its definition does, until it is reassigned.
  if (inside(v) && !v->isStaticLocal() && v->getInit() && !reassigned(v))
    return v->getType()->isReferenceType() ? value_of(v->getInit(), depth + 1) : pointee(v->getInit(), depth + 1);
  return {Home::unknown, v->getNameAsString(), isa<ParmVarDecl>(v)};
}

Target Resolver::variable(const VarDecl* v, int depth) const {
  // The loop variable has its own check, and so does a shared array's pointer (it must not change).
  if (v == var_) return {Home::local, ""};
  if (shared_array(v)) return {Home::shared, ""};
  if (auto bound = parameter(v, false)) return *bound;
  // A parameter of a lambda defined here: its argument is judged where the lambda is called.
  if (isa<ParmVarDecl>(v) && inside(v)) return {Home::local, ""};
  if (!inside(v)) return {Home::outside, v->getNameAsString()};
  if (v->isStaticLocal()) return {Home::static_local, v->getNameAsString()};
  if (v->getType()->isReferenceType())
    return v->getInit() ? storage(v->getInit(), depth + 1) : Target{Home::unknown, v->getNameAsString()};
  return {Home::local, ""};
}

// What a member function returns a reference or pointer into: its object.
Target Resolver::object(const CXXMemberCallExpr* m, int depth) const {
  const Expr* obj = m->getImplicitObjectArgument();
  if (!obj) return unknown(m);
  const auto* callee = dyn_cast<MemberExpr>(m->getCallee()->IgnoreParens());
  return callee && callee->isArrow() ? pointee(obj, depth) : storage(obj, depth);
}

// What a function returning a reference (std::get<0>(t), a functor's operator()) refers
// into: the arguments it could write, its object included, if it has any.
Target Resolver::referenced(const CallExpr* c, int depth) const {
  const FunctionDecl* fn = c->getDirectCallee();
  if (!fn) return unknown(c);
  std::optional<Target> found;
  auto add = [&](const Target& t) { found = found ? worse(*found, t) : t; };
  const bool member_op = isa<CXXOperatorCallExpr>(c) && isa<CXXMethodDecl>(fn) && c->getNumArgs() > 0;
  if (member_op) add(storage(c->getArg(0), depth));
  const unsigned first = member_op ? 1 : 0;
  for (unsigned k = first; k < c->getNumArgs() && k - first < fn->getNumParams(); ++k) {
    const QualType t = fn->getParamDecl(k - first)->getType();
    if (t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified()) add(storage(c->getArg(k), depth));
    else if (t->isPointerType() && !t->getPointeeType().isConstQualified()) add(pointee(c->getArg(k), depth));
  }
  return found ? *found : unknown(c);
}

// Declared in the loop's body (a variable of one iteration, also when a lambda the loop calls
// captures it), or in a called function being judged (a variable of one call).
bool Resolver::inside(const Decl* d) const {
  if (within(d, loop_->getBody()->getSourceRange())) return true;
  for (const FunctionDecl* f : chain_)
    if (within(d, f->getSourceRange())) return true;
  return false;
}

bool Resolver::within(const Decl* d, SourceRange range) const {
  const SourceManager& sm = ctx_.getSourceManager();
  const SourceLocation at = sm.getExpansionLoc(d->getLocation());
  return !sm.isBeforeInTranslationUnit(at, sm.getExpansionLoc(range.getBegin())) &&
         !sm.isBeforeInTranslationUnit(sm.getExpansionLoc(range.getEnd()), at);
}

// What the parameter `v` of a called function (this one, or one it was called from, whose
// parameter a lambda captured) is bound to by its call: `through`, where the pointer or
// iterator it holds points; else the object it names (a reference parameter's argument, a
// by-value parameter's own copy). Nullopt for any other variable; a parameter without an
// argument of its own (a default argument, a pack) is of one call.
std::optional<Target> Resolver::parameter(const VarDecl* v, bool through) const {
  if (!call_ || !isa<ParmVarDecl>(v) || chain_.empty()) return std::nullopt;
  const FunctionDecl* fn = chain_.back();
  for (unsigned k = 0; k < fn->getNumParams(); ++k) {
    if (fn->getParamDecl(k) != v) continue;
    if (k >= call_->args.size() || isa<CXXDefaultArgExpr>(call_->args[k])) return Target{Home::local, ""};
    const Expr* arg = call_->args[k];
    if (through) return caller_->pointee(arg);
    return v->getType()->isReferenceType() ? caller_->storage(arg) : Target{Home::local, ""};
  }
  return caller_->parameter(v, through);
}

// What `this` designates. In the loop's body, and in a lambda (which captured the enclosing
// object), an object outside the loop; in a member function, the object it was called on;
// in a constructor or destructor, the object of one iteration it makes or ends.
Target Resolver::self(const std::string& member) const {
  const auto* method = chain_.empty() ? nullptr : dyn_cast<CXXMethodDecl>(chain_.back());
  if (!method) return {Home::outside, member};
  if (method->getParent()->isLambda()) {
    // A lambda defined in the member function that called it shares that function's `this`.
    const DeclContext* defined_in = method->getParent()->getParent();
    const bool in_caller = caller_ && !caller_->chain_.empty() && defined_in == caller_->chain_.back();
    return in_caller ? caller_->self(member) : Target{Home::outside, member};
  }
  if (call_ && call_->object) return call_->arrow ? caller_->pointee(call_->object) : caller_->storage(call_->object);
  return {Home::local, ""};
}

bool Resolver::reassigned(const VarDecl* v) const {
  for (const Write& w : writes_) {
    const auto* d = dyn_cast<DeclRefExpr>(strip(w.target)->IgnoreParenImpCasts());
    if (d && d->getDecl() == v && !w.through && !w.moves) return true;
  }
  return false;
}

// Output: a rank prints from the iterations it runs, as OpenMP's threads do from theirs.
// Standard and file streams (std::cout, std::cerr, an ofstream) and C FILEs are where
// output goes, not data the loop computes; a string stream declared outside the loop
// collects data, and stays an error.
bool output_stream(const Expr* e, bool through) {
  // A chain `s << a << b` writes what its leftmost operand is, whatever the operators'
  // return types (a base class reference) say.
  e = strip(e)->IgnoreImpCasts();
  while (const auto* op = dyn_cast<CXXOperatorCallExpr>(e)) {
    if (op->getOperator() != OO_LessLess || op->getNumArgs() == 0) break;
    e = strip(op->getArg(0))->IgnoreImpCasts();
  }
  QualType t = e->getType().getNonReferenceType();
  if (through && t->isPointerType()) t = t->getPointeeType();
  if (t.getUnqualifiedType().getAsString() == "FILE") return true;
  const CXXRecordDecl* rd = t->getAsCXXRecordDecl();
  if (!rd || !rd->hasDefinition()) return rd && rd->getName() == "_IO_FILE";
  const auto named = [](const CXXRecordDecl* c, llvm::StringRef name) { return c->isInStdNamespace() && c->getName() == name; };
  const auto any_base = [&](llvm::StringRef name) {
    return named(rd, name) || !rd->forallBases([&](const CXXRecordDecl* b) { return !named(b, name); });
  };
  return rd->getName() == "_IO_FILE" ||
         (any_base("basic_ostream") && !any_base("basic_ostringstream") && !any_base("basic_stringstream"));
}

// `via`: empty for a write of the loop's body, else " in 'f' (line N)" for one of a function
// the loop calls.
std::string message(const Target& t, const std::string& via) {
  const std::string because = "each rank runs only some iterations, so ";
  const std::string fix = " (write to an sh_ array)";
  switch (t.home) {
    case Home::outside:
      // The clauses name variables the loop's own body writes.
      return "loop writes '" + t.name + "'" + via + ", declared outside the loop: " + because +
             "its value would differ from the sequential one" +
             (via.empty() ? " (a sum, minimum or the like: name it in reduction(op: " + t.name + "); a temporary: private(" +
                                t.name + "); else write to an sh_ array)"
                          : fix);
    case Home::static_local:
      return "loop writes '" + t.name + "'" + via + ", a static variable: " + because +
             "its value would differ from the sequential one" + fix;
    default:
      return "loop writes through '" + (t.name.empty() ? std::string("an expression") : t.name) + "'" + via +
             ", which is not an sh_ array: the pass cannot describe the write, and " + because +
             "memory that is not shared would hold only this rank's part " +
             (t.parameter ? "(a parameter stands for an sh_ array when every call in this file passes one there and "
                            "the function's address is not taken)"
                          : "(index the sh_ array itself)");
  }
}

// Calls `offence(write, target)` for each write of `writes` that only an sh_ array could take
// (output aside), once per target name over `reported`.
template <class Offence>
void each_offence(const std::vector<Write>& writes, const Resolver& where, std::set<std::string>& reported,
                  Offence&& offence) {
  for (const Write& w : writes) {
    if (output_stream(w.target, w.through)) continue;
    const Target t = w.through ? where.pointee(w.target) : where.storage(w.target);
    if (!fine(t) && reported.insert(t.name).second) offence(w, t);
  }
}

// The functions a loop calls, and those they call, whose bodies this translation unit has
// (library code in system headers is not followed): what they write is the loop's, judged
// with their parameters and object bound to what each call passes.
class CalleeWrites {
 public:
  CalleeWrites(const ForStmt* loop, const VarDecl* var, ASTContext& ctx, Reporter& report,
               std::set<std::string>& reported)
      : loop_(loop), var_(var), ctx_(ctx), report_(report), reported_(reported) {}

  // Follows `calls`, judged by `caller` (the loop's or a callee's), reached through `chain`;
  // `site` is the call in the loop that led there (where errors are reported), or null.
  void follow(const std::vector<Call>& calls, const Resolver& caller, const std::vector<const FunctionDecl*>& chain,
              const Expr* site) {
    for (const Call& c : calls) {
      const FunctionDecl* def = nullptr;
      if (!c.fn->hasBody(def) || !def || ctx_.getSourceManager().isInSystemHeader(def->getLocation())) continue;
      if (std::find(chain.begin(), chain.end(), def) != chain.end()) continue;
      if (chain.size() >= max_depth || ++followed_ > max_followed) {
        if (!cut_) report_.warning(site ? site->getBeginLoc() : loop_->getBody()->getBeginLoc(),
                                   "calls nested more than " + std::to_string(max_depth) + " deep, or more than " +
                                       std::to_string(max_followed) +
                                       " of them, are not followed: what they write is not checked");
        cut_ = true;
        continue;
      }
      std::vector<const FunctionDecl*> inner = chain;
      inner.push_back(def);
      judge(c, caller, inner, site ? site : c.at);
    }
  }

 private:
  static constexpr std::size_t max_depth = 16;     // calls deep
  static constexpr int max_followed = 4096;        // calls followed from one loop

  static std::string name(const FunctionDecl* fn) {
    const auto* method = dyn_cast<CXXMethodDecl>(fn);
    if (method && method->getParent()->isLambda()) return "a lambda";
    std::string quoted = "'";
    quoted += fn->getQualifiedNameAsString();
    quoted += "'";
    return quoted;
  }

  void judge(const Call& call, const Resolver& caller, const std::vector<const FunctionDecl*>& chain, const Expr* site) {
    const FunctionDecl* fn = chain.back();
    WriteScan scan(ctx_);
    scan.TraverseStmt(fn->getBody());
    if (const auto* ctor = dyn_cast<CXXConstructorDecl>(fn))
      for (const CXXCtorInitializer* init : ctor->inits()) scan.TraverseStmt(init->getInit());
    const Resolver where(loop_, var_, scan.writes, ctx_, &caller, &call, chain);
    each_offence(scan.writes, where, reported_, [&](const Write& w, const Target& t) {
      const unsigned line = ctx_.getSourceManager().getExpansionLineNumber(w.target->getBeginLoc());
      const SourceLocation at = site ? site->getBeginLoc() : loop_->getBody()->getBeginLoc();
      report_.error(at, message(t, " in " + name(fn) + " (line " + std::to_string(line) + ")"));
    });
    follow(scan.calls, where, chain, site);
  }

  const ForStmt* loop_;
  const VarDecl* var_;
  ASTContext& ctx_;
  Reporter& report_;
  std::set<std::string>& reported_;
  int followed_ = 0;
  bool cut_ = false;
};

// The counters of the loops in a body that assign a variable declared before them (C89
// style, for (j = 0; ...)): as in OpenMP they are private, each rank's own (a process of its
// own), and set afresh by every execution of their loop, so writing them is no write the
// loop must be kept from.
class OutsideCounters : public RecursiveASTVisitor<OutsideCounters> {
 public:
  bool VisitForStmt(ForStmt* f) {
    if (const Header h = parse_inner_header(f); h.init) vars.insert(h.var);
    return true;
  }
  std::set<const VarDecl*> vars;
};

}  // namespace

void check_writes(const ForStmt* loop, const VarDecl* var, ASTContext& ctx, Reporter& report,
                  const std::vector<std::string>& privates) {
  WriteScan scan(ctx);
  scan.TraverseStmt(const_cast<Stmt*>(loop->getBody()));
  OutsideCounters counters;
  counters.TraverseStmt(const_cast<Stmt*>(loop->getBody()));
  // A variable each rank has its own copy of: a counter, or one a clause names private.
  const auto own_copy = [&](const Write& w) {
    const auto* d = w.through ? nullptr : dyn_cast<DeclRefExpr>(w.target->IgnoreParenImpCasts());
    if (!d) return false;
    const auto* v = dyn_cast<VarDecl>(d->getDecl());
    return counters.vars.count(v) || std::find(privates.begin(), privates.end(), d->getDecl()->getNameAsString()) != privates.end();
  };
  std::erase_if(scan.writes, own_copy);
  const Resolver where(loop, var, scan.writes, ctx);
  std::set<std::string> reported;
  each_offence(scan.writes, where, reported,
               [&](const Write& w, const Target& t) { report.error(w.target->getBeginLoc(), message(t, "")); });
  CalleeWrites(loop, var, ctx, report, reported).follow(scan.calls, where, {}, nullptr);
}

}  // namespace dsmpass
