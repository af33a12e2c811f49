#include "rewrite.hpp"

#include "source.hpp"

#include <clang/Lex/Lexer.h>

#include <algorithm>

namespace dsmpass {
namespace {

using namespace clang;

// A sparse read's positions: over a CSR row of `bounds`, or affine.
std::string positions_call(const Section& s, const std::string& array) {
  const std::string range = s.coef.str() + ", " + s.lo.text + ", " + s.hi.text;
  if (s.sparse->bounds.empty()) return "dsm::lb::section(" + array + ", dsm::lb::Access::read, " + range + ")";
  return "dsm::lb::span(" + array + ", " + s.sparse->bounds + ", " + range + ", " + s.sparse->offset.str() + ")";
}

std::string section_call(const Section& s) {
  const std::string access = std::string("dsm::lb::Access::") + name(s.access);
  if (s.sparse && s.sparse->index.empty()) return positions_call(s, s.base);
  if (s.sparse) return "dsm::lb::through(" + s.base + ", " + s.sparse->index + ", " + positions_call(s, s.sparse->index) + ")";
  if (s.whole) return "dsm::lb::whole_array(" + s.base + ", " + access + ")";
  if (s.strided)
    return "dsm::lb::strided(" + s.base + ", " + access + ", " + s.coef.str() + ", " + s.lo.text + ", " +
           s.strided->first_hi.text + ", " + std::to_string(s.strided->stride) + ", " + s.strided->blocks.text + ")";
  return "dsm::lb::section(" + s.base + ", " + access + ", " + s.coef.str() + ", " + s.lo.text + ", " + s.hi.text + ")";
}

}  // namespace

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string basename(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void replace_keeping_lines(Rewriter& rw, SourceRange range, std::string text) {
  const CharSourceRange r = CharSourceRange::getCharRange(range);
  const StringRef old = Lexer::getSourceText(r, rw.getSourceMgr(), rw.getLangOpts());
  text.append(std::count(old.begin(), old.end(), '\n'), '\n');
  rw.ReplaceText(r, text);
}

void rewrite_loop(Rewriter& rw, const Mark& mark, const Loop& loop, int index, const std::string& file) {
  const SourceManager& sm = rw.getSourceMgr();
  const std::string n = std::to_string(index);
  const std::string site = "dsm_site_" + n, acc = "dsm_acc_" + n, r = "dsm_r_" + n;
  const std::string ind(sm.getSpellingColumnNumber(loop.stmt->getBeginLoc()) - 1, ' ');

  // Pragmas usually sit in column 1; the block opens where the loop is indented.
  const std::string lead = sm.getSpellingColumnNumber(mark.hash) == 1 ? ind : "";
  // A policy(NAME) clause fixes the site's policy; without one the run's (dsmrun --lb) decides.
  const std::string policy = mark.policy.empty() ? "" : ", dsm::lb::Policy::" + policy_enumerator(mark.policy);
  std::string pro = lead + "{ static dsm::lb::Site " + site + "(" + quoted(basename(file) + ":" + std::to_string(loop.line)) +
                    policy + ");\n";
  std::string sections = "std::span<const dsm::lb::Section>()";
  if (!loop.sections.empty()) {
    pro += ind + "  const dsm::lb::Section " + acc + "[] = {";
    for (size_t k = 0; k < loop.sections.size(); ++k)
      pro += "\n" + ind + "      " + section_call(loop.sections[k]) + (k + 1 < loop.sections.size() ? "," : "};\n");
    sections = acc;
  }
  // lastprivate(...) variables take the value of the rank whose plan holds the last iteration.
  const std::string red = "dsm_red_" + n;
  const bool last = std::any_of(mark.reductions.begin(), mark.reductions.end(), [](const Mark::Reduction& x) { return x.op == "last"; });
  pro += reduction_start(mark, red, ind);
  const std::string plan = "dsm::lb::redistribute(" + site + ", " + loop.lb + ", " + loop.ub + ", " + loop.step + ", " + sections + ")";
  pro += ind + "  for (const dsm::lb::Range& " + r + " : " + (last ? red + ".track(" + plan + ")" : plan) + ")" +
         private_copies(mark, red) + "\n";
  // The line after the directive's last (it may be continued with a backslash).
  pro += "#line " + std::to_string(sm.getPresumedLineNumber(mark.end) + 1) + " " + quoted(file);
  rw.ReplaceText(CharSourceRange::getCharRange(mark.hash, mark.end), pro);

  auto part = [&](const std::string& field) {
    return loop.var_unsigned ? "static_cast<" + loop.var_type + ">(" + r + "." + field + ")" : r + "." + field;
  };
  // The whole header, not its parts: a bound or step may be a macro, the variable may be
  // brace-initialized, and its type may be auto. The step is the loop's own (a range's is
  // the same): a constant one lets the compiler vectorize the loop and reuse loads from one
  // iteration in the next, which a step read from the range forbids (a sparse product 3-4 %
  // slower, docs/results.md).
  replace_keeping_lines(rw, SourceRange(loop.header.getBegin().getLocWithOffset(1), loop.header.getEnd()),
                        (loop.var_before ? "" : loop.var_type + " ") + loop.var + " = " + part("lb") + "; " + loop.var + " < " + part("ub") + "; " +
                            loop.var + " += (" + loop.step + ")");
  rw.InsertTextAfter(after_statement(loop.stmt, sm, rw.getLangOpts()),
                     private_copies_end(mark, red) + reduction_end(mark, red) + " }");
}

std::string reduction_start(const Mark& mark, const std::string& name, const std::string& ind) {
  if (mark.reductions.empty()) return "";
  std::string out = ind + "  dsm::lb::Reduction " + name + "{";
  for (size_t k = 0; k < mark.reductions.size(); ++k)
    out += std::string(k ? ", " : "") + "dsm::lb::reduced<dsm::lb::Op::" + mark.reductions[k].op + ">(" + mark.reductions[k].var + ")";
  return out + "};\n";
}

std::string reduction_end(const Mark& mark, const std::string& name) {
  return mark.reductions.empty() ? "" : " " + name + ".finish();";
}

std::string private_copies(const Mark& mark, const std::string& name) {
  if (mark.reductions.empty()) return "";
  // The copies shadow the variables on purpose: the body's text stays as written.
  std::string out = " { _Pragma(\"GCC diagnostic push\") _Pragma(\"GCC diagnostic ignored \\\"-Wshadow\\\"\")";
  for (size_t k = 0; k < mark.reductions.size(); ++k) {
    const std::string& var = mark.reductions[k].var;
    const std::string ref = name + "_" + std::to_string(k);
    out += " auto& " + ref + " = " + var + "; auto " + var + " = " + ref + ";";
  }
  return out + " _Pragma(\"GCC diagnostic pop\")";
}

std::string private_copies_end(const Mark& mark, const std::string& name) {
  if (mark.reductions.empty()) return "";
  std::string out;
  for (size_t k = 0; k < mark.reductions.size(); ++k)
    out += " " + name + "_" + std::to_string(k) + " = " + mark.reductions[k].var + ";";
  return out + " }";
}

std::string rewritten_file(Rewriter& rw, const std::string& file, bool needs_algorithm, bool needs_pipeline) {
  const FileID main = rw.getSourceMgr().getMainFileID();
  std::string head = "#include <dsm/balancer.hpp>\n";
  if (needs_pipeline) head += "#include <dsm/pipeline.hpp>\n#include <optional>\n";
  if (needs_algorithm) head += "#include <algorithm>\n";
  head += "#line 1 " + quoted(file) + "\n";
  const RewriteBuffer* buf = rw.getRewriteBufferFor(main);
  if (!buf) return head + rw.getSourceMgr().getBufferData(main).str();
  return head + std::string(buf->begin(), buf->end());
}

std::string unchanged_file(const SourceManager& sm, const std::string& file) {
  return "#line 1 " + quoted(file) + "\n" + sm.getBufferData(sm.getMainFileID()).str();
}

}  // namespace dsmpass
