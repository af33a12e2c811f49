#include "pass.hpp"

#include "loop.hpp"
#include "nest.hpp"
#include "outside_access.hpp"
#include "pragma.hpp"
#include "read_regions.hpp"
#include "report.hpp"
#include "rewrite.hpp"
#include "source.hpp"
#include "single.hpp"
#include "traced_params.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <map>

namespace dsmpass {
namespace {

using namespace clang;

class ForCollector : public RecursiveASTVisitor<ForCollector> {
 public:
  explicit ForCollector(const SourceManager& sm) : sm_(sm) {}
  bool VisitForStmt(ForStmt* f) {
    if (sm_.isWrittenInMainFile(sm_.getExpansionLoc(f->getBeginLoc()))) loops.push_back(f);
    return true;
  }
  std::vector<const ForStmt*> loops;

 private:
  const SourceManager& sm_;
};

// The loops of template instantiations: in a template, a call whose callee depends on the
// template's parameters says nothing about what it writes until it is instantiated.
class InstanceCollector : public RecursiveASTVisitor<InstanceCollector> {
 public:
  explicit InstanceCollector(const SourceManager& sm) : sm_(sm) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool VisitForStmt(ForStmt* f) {
    if (sm_.isWrittenInMainFile(sm_.getExpansionLoc(f->getBeginLoc()))) loops[f->getBeginLoc()].push_back(f);
    return true;
  }
  std::map<SourceLocation, std::vector<const ForStmt*>> loops;  // the pattern's copies share its location

 private:
  const SourceManager& sm_;
};

// Whether `depth` for loops nest in `loop` (itself the first), each alone in the body of
// the one around it, as collapse(depth) asks. The outer loop's iterations are distributed
// and every rank runs the inner loops whole, which gives OpenMP's result for any nest
// collapse accepts.
bool nested_deep(const ForStmt* loop, unsigned depth) {
  for (unsigned level = 1; level < depth && loop; ++level) loop = loop_alone_in(loop);
  return loop != nullptr;
}

llvm::json::Value to_json(const Bound& b) { return b.text; }

llvm::json::Value to_json(const Loop& l) {
  llvm::json::Array inner, sections;
  for (const InnerVar& v : l.inner) inner.push_back(llvm::json::Object{{"var", v.name}, {"lo", to_json(v.lo)}, {"hi", to_json(v.hi)}});
  for (const Section& s : l.sections) {
    llvm::json::Object o{{"array", s.array}, {"base", s.base}, {"elem_type", s.elem_type},
                         {"access", name(s.access)}, {"whole", s.whole}};
    if (s.row_length) o["row_length"] = s.row_length;
    if (!s.whole || s.sparse) {
      o["coef"] = s.coef.str();
      o["lo"] = to_json(s.lo);
      o["hi"] = to_json(s.hi);
    }
    if (s.strided) {
      o["stride"] = s.strided->stride;
      o["first_hi"] = to_json(s.strided->first_hi);
      o["blocks"] = to_json(s.strided->blocks);
    }
    if (s.sparse) {
      if (!s.sparse->bounds.empty()) o["bounds"] = s.sparse->bounds;
      if (!s.sparse->index.empty()) o["index"] = s.sparse->index;
      o["offset"] = s.sparse->offset.str();
    }
    sections.push_back(std::move(o));
  }
  return llvm::json::Object{{"line", l.line}, {"var", l.var}, {"type", l.var_type}, {"lb", l.lb}, {"ub", l.ub},
                            {"step", l.step}, {"inner", std::move(inner)}, {"sections", std::move(sections)}};
}

class Consumer : public ASTConsumer {
 public:
  Consumer(Result& result, std::vector<Mark>& marks, std::string file)
      : result_(result), marks_(marks), file_(std::move(file)) {}

  void HandleTranslationUnit(ASTContext& ctx) override {
    if (ctx.getDiagnostics().hasErrorOccurred()) return;
    SourceManager& sm = ctx.getSourceManager();
    Reporter report(ctx.getDiagnostics(), sm);
    const std::string& file = file_;
    Rewriter rw(sm, ctx.getLangOpts());

    trace_shared_parameters(ctx);
    ForCollector collect(sm);
    collect.TraverseDecl(ctx.getTranslationUnitDecl());
    InstanceCollector instances(sm);
    if (!marks_.empty()) instances.TraverseDecl(ctx.getTranslationUnitDecl());
    std::vector<std::pair<const Mark*, const ForStmt*>> marked;
    std::vector<const Mark*> ordered;
    for (const Mark& m : marks_) {
      if (!m.problem.empty()) {  // first: a _Pragma in a macro is not written in the main file
        report.error(m.hash, m.problem);
        continue;
      }
      if (!sm.isWrittenInMainFile(m.hash)) {
        report.error(m.hash, "'#pragma dsm' in an included file is not rewritten; put the loop in the source file given to dsm-pass");
        continue;
      }
      if (m.kind == Mark::single) continue;  // after the loops (rewrite_singles)
      if (m.kind == Mark::ordered) {         // with the nest around it
        ordered.push_back(&m);
        continue;
      }
      const ForStmt* loop = following_loop(m, collect.loops, sm, ctx.getLangOpts());
      if (!loop) {
        report.error(m.hash, "'#pragma dsm parallel for' must be followed directly by a for loop");
        continue;
      }
      if (loop->getBeginLoc().isMacroID()) {
        report.error(m.hash, "the loop after '#pragma dsm parallel for' comes from a macro; write the for loop itself there");
        continue;
      }
      if (!nested_deep(loop, std::max(m.collapse, m.nest))) {
        report.error(m.hash, (m.nest ? std::string("ordered(2) needs 2") : "collapse(" + std::to_string(m.collapse) + ") needs " +
                                                                          std::to_string(m.collapse)) +
                                 " perfectly nested for loops, each the only statement of the one around it");
        continue;
      }
      marked.emplace_back(&m, loop);
    }
    llvm::json::Array loops;
    bool needs_algorithm = false, needs_pipeline = false;
    std::vector<const Mark*> ordered_done;
    int index = 0;
    for (const auto& [mark, loop] : marked) {
      ++index;
      for (const Mark* m : ordered)  // reported with the nest, whatever becomes of it
        if (mark->nest == 2 && sm.isBeforeInTranslationUnit(loop->getBeginLoc(), m->hash) && sm.isBeforeInTranslationUnit(m->hash, loop->getEndLoc()))
          ordered_done.push_back(m);
      const auto outer = std::find_if(marked.begin(), marked.end(), [&](const auto& o) {
        return o.second != loop && sm.isBeforeInTranslationUnit(o.second->getBeginLoc(), loop->getBeginLoc()) &&
               sm.isBeforeInTranslationUnit(loop->getEndLoc(), o.second->getEndLoc());
      });
      if (outer != marked.end()) {
        report.error(loop->getBeginLoc(), "'#pragma dsm parallel for' loops cannot be nested; mark only the outer loop");
        continue;
      }
      std::vector<const ForStmt*> copies = instances.loops[loop->getBeginLoc()];
      std::erase(copies, loop);
      auto info = analyze_loop(loop, copies, ctx, report, mark->privates, mark->nest == 2);
      if (!info) continue;
      llvm::json::Value json = to_json(*info);
      if (!mark->policy.empty()) json.getAsObject()->try_emplace("policy", mark->policy);
      if (mark->collapse > 1) json.getAsObject()->try_emplace("collapse", mark->collapse);
      if (!mark->reductions.empty()) {
        llvm::json::Array reductions;
        for (const Mark::Reduction& r : mark->reductions) reductions.push_back(llvm::json::Object{{"op", r.op}, {"var", r.var}});
        json.getAsObject()->try_emplace("reductions", std::move(reductions));
      }
      for (const Section& s : info->sections)
        needs_algorithm |= s.lo.text.find("std::") != std::string::npos || s.hi.text.find("std::") != std::string::npos;
      if (mark->nest == 2) {
        const auto nest = analyze_nest(*mark, *info, ordered, ctx, report);
        if (!nest) continue;
        json.getAsObject()->try_emplace("pipeline", llvm::json::Object{{"inner", nest->var}, {"array", nest->carried->array},
                                                                       {"lookahead", nest->lookahead}});
        loops.push_back(std::move(json));
        needs_pipeline = true;
        rewrite_nest(rw, *mark, *info, *nest, index, file);
        continue;
      }
      loops.push_back(std::move(json));
      rewrite_loop(rw, *mark, *info, index, file);
    }
    for (const Mark* m : ordered)
      if (std::find(ordered_done.begin(), ordered_done.end(), m) == ordered_done.end())
        report.error(m->hash, "'#pragma dsm ordered' belongs in the inner loop of a '#pragma dsm parallel for ordered(2)' nest");
    std::vector<const ForStmt*> marked_loops;
    for (const auto& m : marked) marked_loops.push_back(m.second);
    rewrite_singles(ctx, rw, marks_, marked_loops, report);
    llvm::json::Array outside_writes, outside_reads, read_regions;
    for (const OutsideAccess& a : wrap_outside_accesses(ctx, rw, marked_loops))
      (a.write ? outside_writes : outside_reads).push_back(llvm::json::Object{{"line", a.line}, {"array", a.array}});
    if (report.error_count() == 0)
      for (unsigned line : wrap_read_regions(ctx, rw, marked_loops)) read_regions.push_back(line);
    llvm::json::Array diags;
    for (const Diagnostic& d : report.list())
      diags.push_back(llvm::json::Object{{"line", d.line}, {"column", d.column}, {"severity", d.error ? "error" : "warning"}, {"message", d.message}});
    result_.ran = true;
    result_.has_marks = !marks_.empty();
    result_.failed = report.error_count() > 0;
    const bool wrapped = !outside_writes.empty() || !outside_reads.empty();
    llvm::json::Object top{{"file", basename(file)}, {"loops", std::move(loops)}, {"diagnostics", std::move(diags)}};
    // Accesses wrapped in dsm::lb::written and dsm::lb::read.
    if (!outside_writes.empty()) top["outside_writes"] = std::move(outside_writes);
    if (!outside_reads.empty()) top["outside_reads"] = std::move(outside_reads);
    // Loops whose shared reads are all inside marked loops (dsm::lb::ReadsInLoops).
    if (!read_regions.empty()) top["read_regions"] = std::move(read_regions);
    result_.rsd_json = llvm::formatv("{0:2}", llvm::json::Value(std::move(top))).str() + "\n";
    result_.rewritten = marks_.empty() && !wrapped ? unchanged_file(sm, file) : rewritten_file(rw, file, needs_algorithm, needs_pipeline);
  }

 private:
  // The loop whose `for` is the first token after the pragma line.
  static const ForStmt* following_loop(const Mark& m, const std::vector<const ForStmt*>& loops, const SourceManager& sm,
                                       const LangOptions& lo) {
    const SourceLocation next = token_after(m.end, sm, lo);
    for (const ForStmt* f : loops)
      if (sm.getExpansionLoc(f->getBeginLoc()) == next) return f;
    return nullptr;
  }

  Result& result_;
  std::vector<Mark>& marks_;
  std::string file_;
};

class Action : public ASTFrontendAction {
 public:
  Action(Result& result, std::string file) : result_(result), file_(std::move(file)) {}
  bool BeginSourceFileAction(CompilerInstance& ci) override {
    add_pragma_handler(ci.getPreprocessor(), marks_);
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance&, StringRef) override {
    return std::make_unique<Consumer>(result_, marks_, file_);
  }

 private:
  Result& result_;
  std::string file_;
  std::vector<Mark> marks_;
};

class Factory : public tooling::FrontendActionFactory {
 public:
  Factory(Result& result, std::string file) : result_(result), file_(std::move(file)) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<Action>(result_, file_); }

 private:
  Result& result_;
  std::string file_;
};

}  // namespace

std::unique_ptr<tooling::FrontendActionFactory> make_action_factory(Result& result, std::string display_name) {
  return std::make_unique<Factory>(result, std::move(display_name));
}

}  // namespace dsmpass
