#include "traced_params.hpp"

#include "source.hpp"

#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <set>
#include <vector>

namespace dsmpass {
namespace {

using namespace clang;

std::set<const ParmVarDecl*>& traced() {
  static std::set<const ParmVarDecl*> params;
  return params;
}

// Every call of each function (by its first declaration), and the functions used other
// than by a call.
class CallCollector : public RecursiveASTVisitor<CallCollector> {
 public:
  bool VisitCallExpr(CallExpr* call) {
    if (const FunctionDecl* f = call->getDirectCallee()) {
      calls[f->getFirstDecl()].push_back(call);
      if (const auto* ref = dyn_cast<DeclRefExpr>(call->getCallee()->IgnoreParenImpCasts())) callees.insert(ref);
    }
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr* ref) {
    if (const auto* f = dyn_cast<FunctionDecl>(ref->getDecl())) used.push_back({ref, f->getFirstDecl()});
    return true;
  }
  std::map<const FunctionDecl*, std::vector<const CallExpr*>> calls;
  std::set<const DeclRefExpr*> callees;
  std::vector<std::pair<const DeclRefExpr*, const FunctionDecl*>> used;
};

// The declaration an argument's pointer comes from: `sh_a`, `sh_a + k`, `&sh_a[k]`, `s.sh_f`.
const NamedDecl* pointer_root(const Expr* e) {
  while (true) {
    e = e->IgnoreParenImpCasts();
    if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return ref->getDecl();
    if (const auto* member = dyn_cast<MemberExpr>(e)) return member->getMemberDecl();
    if (const auto* op = dyn_cast<UnaryOperator>(e); op && op->getOpcode() == UO_AddrOf) {
      const auto* element = dyn_cast<ArraySubscriptExpr>(op->getSubExpr()->IgnoreParenImpCasts());
      if (!element) return nullptr;
      e = element->getBase();
      continue;
    }
    if (const auto* op = dyn_cast<BinaryOperator>(e); op && (op->getOpcode() == BO_Add || op->getOpcode() == BO_Sub)) {
      e = op->getLHS()->getType()->isPointerType() ? op->getLHS() : op->getRHS();
      if (!e->getType()->isPointerType()) return nullptr;
      continue;
    }
    return nullptr;
  }
}

bool pointer_like(const ParmVarDecl* p) {
  const QualType t = p->getOriginalType();
  return t->isPointerType() || t->isArrayType();
}

}  // namespace

void trace_shared_parameters(ASTContext& ctx) {
  traced().clear();
  CallCollector collect;
  collect.TraverseDecl(ctx.getTranslationUnitDecl());
  std::set<const FunctionDecl*> address_taken;
  for (const auto& [ref, f] : collect.used)
    if (!collect.callees.count(ref)) address_taken.insert(f);
  const SourceManager& sm = ctx.getSourceManager();
  // A parameter passed on as another function's argument is traced once its own is: repeat
  // until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [first, calls] : collect.calls) {
      const FunctionDecl* body = first->getDefinition();
      if (!body || address_taken.count(first) || body->isTemplateInstantiation() || body->isVariadic() ||
          !sm.isWrittenInMainFile(sm.getExpansionLoc(body->getLocation())))
        continue;
      for (unsigned k = 0; k < body->getNumParams(); ++k) {
        const ParmVarDecl* p = body->getParamDecl(k);
        if (traced().count(p) || !pointer_like(p)) continue;
        bool all = true;
        for (const CallExpr* call : calls) {
          const NamedDecl* root = k < call->getNumArgs() ? pointer_root(call->getArg(k)) : nullptr;
          all = all && root && is_shared_name(root);
        }
        if (all) changed = traced().insert(p).second || changed;
      }
    }
  }
}

bool is_traced_parameter(const ParmVarDecl* p) { return traced().count(p) != 0; }

}  // namespace dsmpass
