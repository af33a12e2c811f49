#include "pragma.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace dsmpass {
namespace {

// The names of dsmrun --lb and DSM_LB, and the runtime's enumerators.
constexpr std::array<std::pair<const char*, const char*>, 6> policies = {{{"static", "static_blocks"},
                                                                          {"shift", "shift"},
                                                                          {"multi", "multi"},
                                                                          {"locality", "locality"},
                                                                          {"fgdls", "fgdls"},
                                                                          {"auto", "automatic"}}};
const char* const policy_list = "static, shift, multi, locality, fgdls, auto";

// The tokens from `from` on, spaced as usually written: policy(shift) nowait.
std::string clause_text(const std::vector<std::string>& words, size_t from) {
  std::string out;
  for (size_t k = from; k < words.size(); ++k) {
    const bool space = k > from && words[k] != "(" && words[k] != ")" && words[k] != "," && words[k - 1] != "(";
    out += (space ? " " : "") + words[k];
  }
  return out;
}

const char* const clause_list =
    "policy(NAME), schedule(KIND[, chunk]), private(list), firstprivate(list), lastprivate(list), reduction(op: list), "
    "collapse(N), ordered(2) and nowait";

// OpenMP's schedule kinds and the policy each selects: static is equal blocks; dynamic and
// guided ask for balancing at run time, which the balancer does; auto and runtime leave
// the choice to the run (dsmrun --lb).
constexpr std::array<std::pair<const char*, const char*>, 5> schedules = {
    {{"static", "static"}, {"dynamic", "auto"}, {"guided", "auto"}, {"auto", ""}, {"runtime", ""}}};

// OpenMP's reduction operators and the runtime's enumerators; - adds the parts, as in OpenMP.
constexpr std::array<std::pair<const char*, const char*>, 10> reduction_ops = {{{"+", "plus"},
                                                                                {"-", "plus"},
                                                                                {"*", "times"},
                                                                                {"min", "min"},
                                                                                {"max", "max"},
                                                                                {"&", "bit_and"},
                                                                                {"|", "bit_or"},
                                                                                {"^", "bit_xor"},
                                                                                {"&&", "logical_and"},
                                                                                {"||", "logical_or"}}};

bool identifier(const std::string& w) {
  return !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_') &&
         std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

const char* const twice = "the policy is chosen twice in '#pragma dsm parallel for' (by policy(...) or schedule(...))";

// Reads policy(NAME) at words[k]; returns the index after it, or 0 with m.problem set.
size_t policy_clause(const std::vector<std::string>& words, size_t k, Mark& m) {
  if (k + 3 >= words.size() || words[k + 1] != "(" || words[k + 3] != ")") {
    m.problem = "malformed clause '" + clause_text(words, k) + "'; write policy(NAME) with NAME one of " + policy_list;
    return 0;
  }
  if (!m.policy.empty()) {
    m.problem = twice;
    return 0;
  }
  if (policy_enumerator(words[k + 2]).empty()) {
    m.problem = "unknown policy '" + words[k + 2] + "' in '#pragma dsm parallel for policy(...)'; expected one of " + policy_list;
    return 0;
  }
  m.policy = words[k + 2];
  return k + 4;
}

// The variables the clauses name so far, each with its clause.
using Named = std::vector<std::pair<std::string, std::string>>;

// Reads the list `a, b, ...)` whose first name is words[at]: its names, and the index after
// the ')'; 0 when it is malformed.
size_t name_list(const std::vector<std::string>& words, size_t at, std::vector<std::string>& names) {
  for (; at + 1 < words.size() && identifier(words[at]) && (words[at + 1] == "," || words[at + 1] == ")"); at += 2) {
    names.push_back(words[at]);
    if (words[at + 1] == ")") return at + 2;
  }
  return 0;
}

// Reads private(a, b), firstprivate(a, b) or lastprivate(a, b) at words[k] into `named`
// (and a lastprivate's variables into m.reductions, with the operator `last`); as
// policy_clause.
size_t private_clause(const std::vector<std::string>& words, size_t k, Mark& m, Named& named) {
  const std::string what = words[k];
  std::vector<std::string> names;
  const size_t next = k + 1 < words.size() && words[k + 1] == "(" ? name_list(words, k + 2, names) : 0;
  if (!next) {
    m.problem = "malformed clause '" + clause_text(words, k) + "'; write " + what + "(a, b, ...) with variable names";
    return 0;
  }
  for (const std::string& n : names) {
    named.emplace_back(n, what);
    if (what == "lastprivate") m.reductions.push_back({"last", n});
  }
  return next;
}

// Reads reduction(op: a, b) at words[k] into m.reductions and `named`; as policy_clause.
size_t reduction_clause(const std::vector<std::string>& words, size_t k, Mark& m, Named& named) {
  const auto op = k + 2 < words.size() && words[k + 1] == "("
                      ? std::find_if(reduction_ops.begin(), reduction_ops.end(), [&](const auto& o) { return words[k + 2] == o.first; })
                      : reduction_ops.end();
  std::vector<std::string> names;
  const size_t next =
      op != reduction_ops.end() && k + 3 < words.size() && words[k + 3] == ":" ? name_list(words, k + 4, names) : 0;
  if (!next) {
    m.problem = "malformed clause '" + clause_text(words, k) +
                "'; write reduction(op: a, b, ...) with op one of + - * min max & | ^ && || and variable names";
    return 0;
  }
  for (const std::string& n : names) {
    m.reductions.push_back({op->second, n});
    named.emplace_back(n, "reduction");
  }
  return next;
}

// Reads schedule(KIND[, chunk]) at words[k] into m.policy; as policy_clause. The chunk is
// read and left: the balancer cuts ranges at page boundaries of the written arrays.
size_t schedule_clause(const std::vector<std::string>& words, size_t k, Mark& m) {
  const auto kind = k + 2 < words.size() && words[k + 1] == "("
                        ? std::find_if(schedules.begin(), schedules.end(), [&](const auto& s) { return words[k + 2] == s.first; })
                        : schedules.end();
  size_t close = k + 3;
  if (kind != schedules.end() && close < words.size() && words[close] == ",") {
    int depth = 0;
    for (++close; close < words.size() && (depth > 0 || words[close] != ")"); ++close) depth += (words[close] == "(") - (words[close] == ")");
    if (close == k + 4) close = words.size();  // nothing after the comma
  }
  if (kind == schedules.end() || close >= words.size() || words[close] != ")") {
    m.problem = "malformed clause '" + clause_text(words, k) + "'; write schedule(KIND) or schedule(KIND, chunk) with KIND one of static, dynamic, guided, auto, runtime";
    return 0;
  }
  if (!m.policy.empty()) {
    m.problem = twice;
    return 0;
  }
  m.policy = kind->second;
  return close + 1;
}

// Reads collapse(N) at words[k] into m.collapse; as policy_clause.
size_t collapse_clause(const std::vector<std::string>& words, size_t k, Mark& m) {
  const bool ok = k + 3 < words.size() && words[k + 1] == "(" && words[k + 3] == ")" && words[k + 2].size() <= 2 &&
                  std::all_of(words[k + 2].begin(), words[k + 2].end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
                  std::stoul(words[k + 2]) >= 1;
  if (!ok) {
    m.problem = "malformed clause '" + clause_text(words, k) + "'; write collapse(N) with N a positive number of nested loops";
    return 0;
  }
  m.collapse = static_cast<unsigned>(std::stoul(words[k + 2]));
  return k + 4;
}

// Reads ordered(N) at words[k] into m.nest; as policy_clause. Nests of two loops are
// pipelined (rows over the ranks, columns in tiles).
size_t ordered_clause(const std::vector<std::string>& words, size_t k, Mark& m) {
  if (k + 3 >= words.size() || words[k + 1] != "(" || words[k + 2] != "2" || words[k + 3] != ")") {
    const bool region = k + 1 >= words.size() || words[k + 1] != "(";
    m.problem = "'" + clause_text(words, k) + "': " + (region ? "ordered regions are not there yet; " : "") +
                "a doacross nest is written ordered(2), over two perfectly nested loops (rows, then columns)";
    return 0;
  }
  m.nest = 2;
  return k + 4;
}

// Reads `ordered depend(sink: i - 1, j + 1) ... ` or `ordered depend(source)` into `m`.
void parse_ordered(const std::vector<std::string>& words, Mark& m) {
  const std::string usage = "; write '#pragma dsm ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)' before an "
                            "iteration's work and '#pragma dsm ordered depend(source)' after it";
  if (words.size() < 2) m.problem = "'#pragma dsm ordered' without depend(...)" + usage;
  for (size_t k = 1; k < words.size() && m.problem.empty();) {
    const size_t start = k;
    if (words[k] == ",") {
      ++k;
      continue;
    }
    if (k + 3 < words.size() && words[k] == "depend" && words[k + 1] == "(" && words[k + 2] == "source" && words[k + 3] == ")") {
      m.source = true;
      k += 4;
      continue;
    }
    if (!(k + 3 < words.size() && words[k] == "depend" && words[k + 1] == "(" && words[k + 2] == "sink" && words[k + 3] == ":")) {
      m.problem = "malformed clause '" + clause_text(words, k) + "'" + usage;
      break;
    }
    Mark::Sink sink;
    for (k += 4; k < words.size();) {
      if (!identifier(words[k])) break;
      std::pair<std::string, long> at{words[k++], 0};
      if (k + 1 < words.size() && (words[k] == "+" || words[k] == "-") && !words[k + 1].empty() &&
          std::all_of(words[k + 1].begin(), words[k + 1].end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
          words[k + 1].size() < 9) {
        at.second = (words[k] == "-" ? -1 : 1) * std::stol(words[k + 1]);
        k += 2;
      }
      sink.at.push_back(at);
      if (k < words.size() && words[k] == ",") {
        ++k;
        continue;
      }
      break;
    }
    if (k >= words.size() || words[k] != ")" || sink.at.empty()) {
      m.problem = "malformed clause '" + clause_text(words, start) + "': each position is a loop variable plus or minus a constant" + usage;
      break;
    }
    ++k;
    std::vector<std::string> clause(words.begin() + long(start), words.begin() + long(k));
    sink.text = clause_text(clause, 0);
    m.sinks.push_back(std::move(sink));
  }
  if (m.problem.empty() && m.source && !m.sinks.empty())
    m.problem = "depend(source) and depend(sink: ...) in one '#pragma dsm ordered'" + usage;
}

// Reads the clauses after `parallel for` into `m`.
void parse_clauses(const std::vector<std::string>& words, Mark& m) {
  Named named;
  for (size_t k = 2; k < words.size();) {
    if (words[k] == "policy") k = policy_clause(words, k, m);
    else if (words[k] == "private" || words[k] == "firstprivate" || words[k] == "lastprivate") k = private_clause(words, k, m, named);
    else if (words[k] == "reduction") k = reduction_clause(words, k, m, named);
    else if (words[k] == "schedule") k = schedule_clause(words, k, m);
    else if (words[k] == "collapse") k = collapse_clause(words, k, m);
    else if (words[k] == "ordered") k = ordered_clause(words, k, m);
    else if (words[k] == "nowait") ++k;  // the loop has no barrier of its own to leave out
    else if (words[k] == ",") ++k;  // OpenMP allows commas between clauses
    else m.problem = "unknown clause '" + clause_text(words, k) + "' in '#pragma dsm parallel for'; the clauses are " + clause_list;
    if (!m.problem.empty()) return;
  }
  // As in OpenMP, a variable is named once, or in firstprivate and lastprivate.
  for (size_t i = 0; i < named.size(); ++i)
    for (size_t j = i + 1; j < named.size(); ++j) {
      const auto& [var, clause] = named[i];
      const auto& [other, other_clause] = named[j];
      const bool first_and_last = (clause == "firstprivate" && other_clause == "lastprivate") ||
                                  (clause == "lastprivate" && other_clause == "firstprivate");
      if (var == other && !first_and_last) {
        m.problem = "'" + var + "' is named in two clauses (" + clause + " and " + other_clause +
                    "); a variable takes one, or firstprivate and lastprivate";
        return;
      }
    }
  for (const auto& n : named) m.privates.push_back(n.first);
}

class DsmPragma : public clang::PragmaHandler {
 public:
  // The empty name receives every `#pragma <space> <anything>`, so typos are reported too;
  // `space` is dsm, or a spelling of it that would otherwise be ignored as an unknown pragma.
  DsmPragma(std::vector<Mark>& marks, std::string space)
      : clang::PragmaHandler(""), marks_(marks), space_(std::move(space)) {}

  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer intro, clang::Token& first) override {
    std::vector<std::string> words;
    clang::Token tok = first;
    while (tok.isNot(clang::tok::eod)) {
      words.push_back(pp.getSpelling(tok));
      pp.Lex(tok);
    }
    Mark m;
    m.hash = intro.Loc;
    m.end = tok.getLocation();
    if (space_ != "dsm") {
      m.problem = "'#pragma " + space_ + "' is not read: the name is lower case, '#pragma dsm parallel for'";
    } else if (intro.Kind != clang::PIK_HashPragma) {
      // Its text is a string, in a macro more often than not: the rewriter cannot replace it.
      m.problem = "_Pragma(\"dsm ...\") is not rewritten; write '#pragma dsm parallel for' on its own line before the loop";
    } else if (!words.empty() && words[0] == "ordered") {
      m.kind = Mark::ordered;
      parse_ordered(words, m);
    } else if (!words.empty() && words[0] == "single") {
      m.kind = Mark::single;
      if (words.size() > 1) m.problem = "'#pragma dsm single' takes no clause ('" + clause_text(words, 1) + "')";
    } else if (words.size() < 2 || words[0] != "parallel" || words[1] != "for") {
      std::string seen;
      for (const auto& w : words) seen += " " + w;
      m.problem = "unknown directive '#pragma dsm" + seen +
                  "'; the directives are '#pragma dsm parallel for', '#pragma dsm single' and '#pragma dsm ordered'";
    } else {
      parse_clauses(words, m);
    }
    marks_.push_back(m);
  }

 private:
  std::vector<Mark>& marks_;
  std::string space_;
};

}  // namespace

void add_pragma_handler(clang::Preprocessor& pp, std::vector<Mark>& marks) {
  // Every capitalization of "dsm": pragma namespaces are matched exactly.
  for (unsigned upper = 0; upper < 8; ++upper) {
    std::string space = "dsm";
    for (unsigned k = 0; k < space.size(); ++k)
      if (upper & (1u << k)) space[k] = char(space[k] - 'a' + 'A');
    pp.AddPragmaHandler(space, new DsmPragma(marks, space));  // the preprocessor owns its handlers
  }
}

std::string policy_enumerator(const std::string& name) {
  for (const auto& [written, enumerator] : policies)
    if (name == written) return enumerator;
  return "";
}

}  // namespace dsmpass
