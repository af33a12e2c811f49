#include "loop.hpp"

#include "dependence.hpp"
#include "loop_analyzer.hpp"
#include "loop_form.hpp"
#include "loop_scan.hpp"
#include "source.hpp"
#include "writes.hpp"

#include <algorithm>
#include <cstdlib>

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

std::optional<Loop> Analyzer::run() {
  const size_t errors_before = report_.error_count();
  const SourceLocation at = loop_->getBeginLoc();
  header_ = parse_header(loop_);
  if (!header_.var) {
    report_not_canonical(loop_, report_);
    return std::nullopt;
  }
  scan_ = scan_body(loop_->getBody());
  check_control(loop_->getBody(), ctx_, report_);
  check_writes(loop_, header_.var, ctx_, report_, privates_);
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
  out.var_before = header_.init != nullptr;
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
  check_comparison(loop_, header_, ctx_, report_);
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
  out.uses = uses_;

  // One section per array, access and coefficient when the bounds can be ordered.
  for (Section& s : sections_) {
    auto same = std::find_if(out.sections.begin(), out.sections.end(), [&](const Section& o) {
      return o.base == s.base && o.access == s.access && o.whole == s.whole &&
             (s.whole || (o.coef == s.coef && difference(o.lo, s.lo) && difference(o.hi, s.hi)));
    });
    if (same == out.sections.end()) {
      out.sections.push_back(s);
    } else if (s.whole) {
      // Two reads of the array that do not go the same way: all of it, without the way.
      const auto zero = [](const std::optional<long>& d) { return d && *d == 0; };
      if (!same->sparse || !s.sparse || same->sparse->bounds != s.sparse->bounds || same->sparse->index != s.sparse->index ||
          !(same->sparse->offset == s.sparse->offset) || !(same->coef == s.coef) || !zero(difference(same->lo, s.lo)) ||
          !zero(difference(same->hi, s.hi)))
        same->sparse.reset();
    } else {
      // Blocks as many and as far apart (u[k][j-1], u[k][j], u[k][j+1] over k) merge block by
      // block: the first spans from the lower first block's start to the higher one's end.
      // Any other two merge to their hull.
      if (same->strided && s.strided && same->strided->stride == s.strided->stride &&
          same->strided->blocks.text == s.strided->blocks.text)
        same->strided->first_hi = max(same->strided->first_hi, s.strided->first_hi);
      else
        same->strided.reset();
      same->lo = min(same->lo, s.lo);
      same->hi = max(same->hi, s.hi);
      same->dense = same->dense && s.dense;
    }
  }
  if (!carried_ok_) warn_carried(out);
  return out;
}

void Analyzer::warn_carried(const Loop& loop) {
  long step = 1;
  Expr::EvalResult r;
  if (header_.step && !(header_.step->EvaluateAsInt(r, ctx_) && (step = r.Val.getInt().getExtValue()) > 0)) return;
  const auto range = ranges_.find(loop.var);
  if (range == ranges_.end()) return;
  const auto dep = carried_dependence(loop.sections, range->second.first, range->second.second, step);
  if (!dep) return;
  const bool one = dep->distance != 0;
  const std::string does = dep->other == Access::read ? (one ? "reads" : "read")
                           : dep->other == Access::write ? (one ? "writes" : "write")
                                                         : (one ? "reads or writes" : "read or write");
  const long by = dep->distance * step;
  const std::string other = dep->distance == 0 ? "other iterations"
                                               : "iteration " + loop.var + (by > 0 ? " + " : " - ") + std::to_string(std::labs(by));
  report_.warning(loop_->getBeginLoc(), "loop carries a dependence: iteration " + loop.var + " writes elements of '" + dep->array +
                                            "' that " + other + " " + does +
                                            "; the ranks run their iterations at once, so the result can differ from the "
                                            "sequential one (remove '#pragma dsm parallel for', or restructure the loop)");
}

std::optional<Loop> analyze_loop(const ForStmt* loop, const std::vector<const ForStmt*>& instances, ASTContext& ctx,
                                 Reporter& report, const std::vector<std::string>& privates, bool carried_ok) {
  for (const ForStmt* copy : instances)
    if (const Header h = parse_header(copy); h.var) check_writes(copy, h.var, ctx, report, privates);
  return Analyzer(loop, ctx, report, privates, carried_ok).run();
}

}  // namespace dsmpass
