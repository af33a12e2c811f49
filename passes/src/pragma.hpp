// `#pragma dsm parallel for [clauses]`, `#pragma dsm single` and `#pragma dsm ordered
// depend(...)`: a PragmaHandler records
// where each one is (unknown pragmas never reach the AST, so the loops and statements are
// matched to these marks afterwards).
#pragma once

#include <clang/Lex/Preprocessor.h>

#include <string>
#include <vector>

namespace dsmpass {

struct Mark {
  enum Kind { parallel_for, single, ordered };
  Kind kind = parallel_for;
  clang::SourceLocation hash;  // the '#' (or _Pragma)
  clang::SourceLocation end;   // end of the directive's line
  std::string problem;         // non-empty for a malformed `#pragma dsm ...`
  std::string policy;          // NAME of a policy(NAME) clause (or of a schedule), empty without one
  // The variables of private(...), firstprivate(...), lastprivate(...) and reduction(...)
  // clauses: each rank's own already (a process of its own), so the loop may write them.
  std::vector<std::string> privates;
  // reduction(op: list) and lastprivate(list): each variable with the dsm::lb::Op enumerator
  // of its operator (`last` for lastprivate).
  struct Reduction {
    std::string op;
    std::string var;
  };
  std::vector<Reduction> reductions;
  // collapse(N): the loops nested in the marked one that OpenMP would distribute with it
  // (the pass checks the nest and distributes the outer loop's iterations).
  unsigned collapse = 1;
  // ordered(N): a doacross nest of N loops, run as a pipeline (N = 2; 0 without the clause).
  unsigned nest = 0;
  // `#pragma dsm ordered`: its depend(sink: v1 +- c1, v2 +- c2) vectors, each loop's variable
  // and offset, as written; depend(source) marks the end of an iteration's work.
  struct Sink {
    std::vector<std::pair<std::string, long>> at;
    std::string text;
  };
  std::vector<Sink> sinks;
  bool source = false;
};

// Registers the handler for every `#pragma dsm ...`; marks are appended to `marks`, which
// must outlive the preprocessor.
void add_pragma_handler(clang::Preprocessor& pp, std::vector<Mark>& marks);

// The dsm::lb::Policy enumerator of a policy name accepted by the clause.
std::string policy_enumerator(const std::string& name);

}  // namespace dsmpass
