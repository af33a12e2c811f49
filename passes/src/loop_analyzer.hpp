// The analysis of one marked loop, shared by its parts: loop.cpp (the loop's header and its
// descriptors), loop_analyzer.cpp (the symbolic values of the body: affine folding and the
// ranges of inner loop variables) and loop_sections.cpp (the sections of shared arrays,
// followed into the functions the loop calls).
#pragma once

#include "loop.hpp"
#include "loop_form.hpp"
#include "loop_scan.hpp"
#include "loop_sections.hpp"
#include "report.hpp"
#include "symbolic.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/ParentMap.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dsmpass {

// Analyzes a marked loop, or (for the sections of a shared array passed to a function) the
// body of a function it calls, with the parameters bound to the caller's values.
class Analyzer {
 public:
  Analyzer(const clang::ForStmt* loop, clang::ASTContext& ctx, Reporter& report, std::vector<std::string> privates = {},
           bool carried_ok = false)
      : loop_(loop), ctx_(ctx), report_(report), parents_(const_cast<clang::ForStmt*>(loop)), privates_(std::move(privates)),
        carried_ok_(carried_ok) {}

  std::optional<Loop> run();

 private:
  // Warns when the loop's sections prove a loop-carried dependence (dependence.hpp).
  void warn_carried(const Loop& loop);
  // A function the loop calls: `fn`'s body, reached from `caller`, integer parameters bound
  // to the caller's affine values.
  Analyzer(const Analyzer& caller, const clang::FunctionDecl* fn, std::map<const clang::VarDecl*, Affine> env);

  // Values (loop_analyzer.cpp).
  bool changes(const clang::VarDecl* v) const;
  bool invariant(const clang::Expr* e) const;
  std::string code_text(const clang::Expr* e) const;
  std::optional<Affine> fold(const clang::Expr* e, std::string& why, int depth = 0) const;
  std::optional<std::pair<Bound, Bound>> interval(const Affine& a, const std::string& skip) const;
  bool moves_with_loop(const Affine& a) const;
  void compute_inner_ranges(std::vector<InnerVar>* out);
  // An inner loop over a CSR row: for (k = sh_p[a*i + b]; k < sh_p[a*i + c]; ++k).
  struct Span {
    std::string bounds;  // sh_p, as written
    Poly coef;
    Bound lo, hi;
  };
  std::optional<Span> span_of(const Header& h) const;
  std::string key(const clang::VarDecl* v);
  const clang::Stmt* parent(const clang::Stmt* s) const;
  bool in_lambda(const clang::Stmt* s) const;

  // Sections (loop_sections.cpp).
  void describe(const clang::Expr* name_ref);
  Reach climb(const clang::Expr* ref, const Shape& shape, std::optional<Affine> start, std::string& why) const;
  void describe_from(const clang::Expr* ref, const Section& proto, const Shape& shape, std::optional<Affine> start);
  Access classify(const clang::Expr* e, bool& escapes) const;
  bool compared_only(const clang::Expr* pointer) const;
  void check_shared_updates(const clang::Expr* ref, const Section& s, const Affine& at);
  void not_affine(const clang::Expr* where, const std::string& array, const std::string& why, bool located = false);
  bool sparse_read(Section& s, const Reach& r) const;
  std::optional<Section::Strided> strided(const Affine& at) const;
  bool sparse_positions(const Affine& at, Section& s) const;
  bool through_call(const Reach& r, const Section& proto, const Shape& shape, std::string& why);
  const clang::FunctionDecl* followed_callee(const clang::CallExpr* call, std::string& why) const;
  std::map<const clang::VarDecl*, Affine> bind_integers(const clang::CallExpr* call,
                                                        const clang::FunctionDecl* def) const;
  std::vector<Section> through_param(const clang::ParmVarDecl* param, const Section& proto, const Shape& shape,
                                     const Affine& start);

  const clang::ForStmt* loop_;  // null in a callee
  clang::ASTContext& ctx_;
  Reporter& report_;
  clang::ParentMap parents_;
  std::vector<std::string> privates_;  // of private(...) and firstprivate(...): the loop may write them
  bool carried_ok_ = false;           // a doacross nest: its carried dependences are no mistake
  BodyScan scan_;
  Header header_;
  std::string loop_var_;                                  // the marked loop's variable
  std::vector<const clang::FunctionDecl*> chain_;         // callees from the loop to this one
  std::map<const clang::VarDecl*, Affine> env_;           // a callee's bound parameters
  std::string callee_why_;                                // why a callee's access was not affine
  std::map<const clang::VarDecl*, std::string> keys_;     // canonical loop variables -> Affine key
  std::set<const clang::VarDecl*> unknown_bounds_;        // inner loop variables of no known range
  std::set<std::string> moving_;  // keys of inner variables whose range moves with the loop variable
  std::map<std::string, std::pair<Bound, Bound>> ranges_;  // key -> inclusive range
  std::map<std::string, Span> spans_;                      // key -> the CSR row it runs over
  std::vector<Section> sections_;
  std::vector<Use> uses_;
};

}  // namespace dsmpass
