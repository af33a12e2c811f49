#include "pragma.hpp"

namespace dsmpass {
namespace {

class DsmPragma : public clang::PragmaHandler {
 public:
  // The empty name receives every `#pragma dsm <anything>`, so typos are reported too.
  explicit DsmPragma(std::vector<Mark>& marks) : clang::PragmaHandler(""), marks_(marks) {}

  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer intro, clang::Token& first) override {
    std::vector<std::string> words;
    clang::Token tok = first;
    while (tok.isNot(clang::tok::eod)) {
      words.push_back(pp.getSpelling(tok));
      pp.Lex(tok);
    }
    Mark m{intro.Loc, tok.getLocation(), ""};
    if (words != std::vector<std::string>{"parallel", "for"}) {
      std::string seen;
      for (const auto& w : words) seen += " " + w;
      m.problem = "unknown directive '#pragma dsm" + seen + "'; the only one is '#pragma dsm parallel for'";
    }
    marks_.push_back(m);
  }

 private:
  std::vector<Mark>& marks_;
};

}  // namespace

void add_pragma_handler(clang::Preprocessor& pp, std::vector<Mark>& marks) {
  pp.AddPragmaHandler("dsm", new DsmPragma(marks));  // the preprocessor owns its handlers
}

}  // namespace dsmpass
