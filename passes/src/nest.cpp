#include "nest.hpp"

#include "dependence.hpp"
#include "loop_form.hpp"
#include "rewrite.hpp"
#include "source.hpp"

#include <clang/AST/Stmt.h>

#include <algorithm>

namespace dsmpass {

using namespace clang;

std::optional<Nest> analyze_nest(const Mark& mark, const Loop& outer, const std::vector<const Mark*>& ordered,
                                 ASTContext& ctx, Reporter& report) {
  const SourceManager& sm = ctx.getSourceManager();
  const unsigned errors_before = report.error_count();
  // reduction(...) names its variables as privates too; any other is a private(...) clause.
  const bool last = std::any_of(mark.reductions.begin(), mark.reductions.end(), [](const Mark::Reduction& r) { return r.op == "last"; });
  if (last || mark.privates.size() > mark.reductions.size() || mark.collapse > 1 || !mark.policy.empty())
    report.error(mark.hash, "'#pragma dsm parallel for ordered(2)' takes no clause but reduction(...): the pipeline has its own split");
  Nest nest;
  nest.inner = loop_alone_in(outer.stmt);
  if (!nest.inner) {
    report.error(mark.hash, "ordered(2) needs two perfectly nested for loops, the inner one the only statement of the outer");
    return std::nullopt;
  }
  if (outer.step != "1") report.error(outer.stmt->getBeginLoc(), "the rows of an ordered(2) nest advance by one");
  const Header h = parse_header(nest.inner);
  if (!h.var) {
    report.error(nest.inner->getBeginLoc(), "the inner loop of an ordered(2) nest must count upwards by one: for (T j = lb; j < ub; ++j)");
    return std::nullopt;
  }
  if (h.step) {
    Expr::EvalResult r;
    if (!h.step->EvaluateAsInt(r, ctx) || r.Val.getInt().getExtValue() != 1)
      report.error(h.step->getBeginLoc(), "the inner loop of an ordered(2) nest advances by one");
  }
  nest.var = h.var->getNameAsString();
  nest.var_type = h.var->getType().getUnqualifiedType().getAsString(ctx.getPrintingPolicy());
  nest.var_unsigned = h.var->getType()->isUnsignedIntegerType();
  nest.var_before = h.init != nullptr;
  nest.lb = exact_text(h.lower, ctx);
  nest.ub = exact_text(h.upper, ctx);
  if (nest.lb.empty() || nest.ub.empty()) {
    report.error(nest.inner->getBeginLoc(), "the inner loop's bounds are only a part of a macro expansion; write them whole");
    return std::nullopt;
  }
  if (h.inclusive) nest.ub = "(" + nest.ub + ") + 1";
  nest.header = SourceRange(nest.inner->getLParenLoc(), nest.inner->getRParenLoc());

  // One shared array written, at [i][j + c]: the one whose rows the ranks pass on.
  for (const Section& s : outer.sections) {
    if (s.access == Access::read) continue;
    if (s.whole) {
      report.error(mark.hash, "the ordered(2) nest writes '" + s.array + "' where the pass cannot follow the subscript; a pipeline needs [i][j + c]");
      continue;
    }
    if (nest.carried && nest.carried->base != s.base)
      report.error(mark.hash, "the ordered(2) nest writes '" + nest.carried->array + "' and '" + s.array + "'; a pipeline carries one array");
    nest.carried = &s;
  }
  if (!nest.carried && report.error_count() == errors_before)
    report.error(mark.hash, "the ordered(2) nest writes no shared array: nothing to pass on between ranks");

  // The depend(sink) vectors of the `#pragma dsm ordered` lines in the inner loop's body.
  const SourceRange body = nest.inner->getBody()->getSourceRange();
  for (const Mark* m : ordered)
    if (sm.isBeforeInTranslationUnit(body.getBegin(), m->hash) && sm.isBeforeInTranslationUnit(m->hash, body.getEnd()))
      nest.ordered.push_back(m);
  bool any_sink = false;
  for (const Mark* m : nest.ordered)
    for (const Mark::Sink& sink : m->sinks) {
      any_sink = true;
      const bool shape = sink.at.size() == 2 && sink.at[0].first == outer.var && sink.at[1].first == nest.var;
      if (shape && sink.at[0].second == -1) {
        nest.lookahead = std::max(nest.lookahead, sink.at[1].second);
      } else if (!(shape && sink.at[0].second == 0 && sink.at[1].second < 0)) {
        report.error(m->hash, "'" + sink.text + "': a pipeline waits for (" + outer.var + " - 1, " + nest.var + " + d) and (" +
                                  outer.var + ", " + nest.var + " - c), c > 0, in the nest's own variables");
      }
    }
  if (report.error_count() > errors_before) return std::nullopt;

  // The distances the subscripts prove: what a nest without depend clauses relies on, and
  // what the written ones must not miss.
  const NestNeeds needs = nest_needs(outer.uses, nest.carried->base, outer.var, nest.var);
  if (needs.kind == NestNeeds::Kind::refused) {
    report.error(needs.use->at, needs.why);
  } else if (needs.kind == NestNeeds::Kind::unknown) {
    if (!any_sink)
      report.error(mark.hash, "ordered(2) without '#pragma dsm ordered depend(sink: ...)' in the inner loop relies on the distances "
                              "the pass derives, and it cannot here (" + needs.why + "); name the iterations each one waits for");
  } else if (needs.lookahead > nest.lookahead) {
    if (any_sink)
      report.warning(needs.use->at, "'" + needs.use->array + "' is read here and written by iteration " + needs.writer +
                                        ": the nest needs depend(sink: " + outer.var + " - 1, " + nest.var + " + " +
                                        std::to_string(needs.lookahead) +
                                        "), which its depend clauses miss; the pipeline waits for it all the same");
    nest.lookahead = needs.lookahead;
  }
  if (report.error_count() > errors_before) return std::nullopt;
  return nest;
}

void rewrite_nest(Rewriter& rw, const Mark& mark, const Loop& outer, const Nest& nest, int index, const std::string& file) {
  const SourceManager& sm = rw.getSourceMgr();
  const std::string n = std::to_string(index);
  const std::string slot = "dsm_pipe_" + n, tile = "dsm_tile_" + n;
  const std::string ind(sm.getSpellingColumnNumber(outer.stmt->getBeginLoc()) - 1, ' ');
  const std::string lead = sm.getSpellingColumnNumber(mark.hash) == 1 ? ind : "";
  const Section& c = *nest.carried;
  const std::string carried = "dsm::lb::carried_section(" + c.base + ", " + c.coef.str() + ", " + c.lo.text + ", " + c.hi.text +
                              ", " + nest.lb + ", " + nest.ub + ")";
  const std::string red = "dsm_red_" + n;
  std::string pro = lead + "{ static std::optional<dsm::lb::Pipeline> " + slot + ";\n" + reduction_start(mark, red, ind);
  pro += ind + "  for (const dsm::lb::Tile& " + tile + " : dsm::lb::Pipeline::reuse(" + slot + ", " +
         quoted(basename(file) + ":" + std::to_string(outer.line)) + ", " + outer.lb + ", " + outer.ub + ", " + nest.lb +
         ", " + nest.ub + ", " + carried + ", " + std::to_string(nest.lookahead) + ").sweep())" + private_copies(mark, red) + "\n";
  pro += "#line " + std::to_string(sm.getPresumedLineNumber(mark.end) + 1) + " " + quoted(file);
  rw.ReplaceText(CharSourceRange::getCharRange(mark.hash, mark.end), pro);

  const auto cast = [](bool is_unsigned, const std::string& type, const std::string& v) {
    return is_unsigned ? "static_cast<" + type + ">(" + v + ")" : v;
  };
  const std::string rows = tile + ".rows()", cols = tile + ".cols(" + outer.var + ")";
  replace_keeping_lines(rw, SourceRange(outer.header.getBegin().getLocWithOffset(1), outer.header.getEnd()),
                        (outer.var_before ? "" : outer.var_type + " ") + outer.var + " = " +
                            cast(outer.var_unsigned, outer.var_type, rows + ".lb") + "; " + outer.var + " < " +
                            cast(outer.var_unsigned, outer.var_type, rows + ".ub") + "; ++" + outer.var);
  replace_keeping_lines(rw, SourceRange(nest.header.getBegin().getLocWithOffset(1), nest.header.getEnd()),
                        (nest.var_before ? "" : nest.var_type + " ") + nest.var + " = " +
                            cast(nest.var_unsigned, nest.var_type, cols + ".lb") + "; " + nest.var + " < " +
                            cast(nest.var_unsigned, nest.var_type, cols + ".ub") + "; ++" + nest.var);
  // The ordered lines are the pipeline's own waits and signals now.
  for (const Mark* m : nest.ordered) rw.ReplaceText(CharSourceRange::getCharRange(m->hash, m->end), "");
  rw.InsertTextAfter(after_statement(outer.stmt, sm, rw.getLangOpts()),
                     private_copies_end(mark, red) + reduction_end(mark, red) + " }");
}

}  // namespace dsmpass
