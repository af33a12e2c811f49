// dsm-pass: source-to-source rewriting of `#pragma dsm parallel for` loops into calls of
// the loop balancer (docs/design.md, section "The pass").
//
//   dsm-pass prog.cpp -o prog.dsm.cpp -- -std=c++20 -I...   rewritten source
//   dsm-pass --emit-rsd prog.cpp -- ...                      descriptors as JSON
#include "pass.hpp"

#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CommonOptionsParser.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <array>

namespace {

llvm::cl::OptionCategory category("dsm-pass options");
llvm::cl::opt<std::string> output("o", llvm::cl::desc("Write the rewritten source to <file> (default: stdout)"),
                                  llvm::cl::value_desc("file"), llvm::cl::cat(category));
llvm::cl::opt<bool> emit_rsd("emit-rsd", llvm::cl::desc("Print the access descriptors of the marked loops as JSON"),
                             llvm::cl::cat(category));

// Flags GCC accepts and Clang rejects or misreads; warnings are left to the host compiler.
bool gcc_only(const std::string& a) {
  static const std::array<const char*, 10> prefixes = {"-fno-tree-", "-ftree-", "-fipa-", "-fno-ipa-", "-fconcepts",
                                                        "-fmodulo-sched", "-flto", "-fno-gnu-unique", "-fanalyzer",
                                                        "-fcoroutines"};
  for (const char* p : prefixes)
    if (a.rfind(p, 0) == 0) return true;
  const bool warning = a.rfind("-W", 0) == 0 && a.rfind("-Wl,", 0) != 0 && a.rfind("-Wp,", 0) != 0 && a.rfind("-Wa,", 0) != 0;
  return warning || a == "-pedantic" || a == "-pedantic-errors";
}

}  // namespace

int main(int argc, const char** argv) {
  auto parser = clang::tooling::CommonOptionsParser::create(argc, argv, category, llvm::cl::Required,
                                                            "dsm-pass: rewrite '#pragma dsm parallel for' loops for the DSM load balancer\n");
  if (!parser) {
    llvm::errs() << "dsm-pass: " << llvm::toString(parser.takeError()) << "\n";
    return 2;
  }
  if (parser->getSourcePathList().size() != 1) {
    llvm::errs() << "dsm-pass: give exactly one source file\n";
    return 2;
  }
  const std::string source = parser->getSourcePathList().front();
  clang::tooling::ClangTool tool(parser->getCompilations(), {source});
  tool.appendArgumentsAdjuster([](const clang::tooling::CommandLineArguments& args, llvm::StringRef) {
    clang::tooling::CommandLineArguments out;
    for (const std::string& a : args)
      if (!gcc_only(a)) out.push_back(a);
    return out;
  });
  // Builtin headers (stddef.h, ...) live in Clang's resource directory, which a tool
  // outside the Clang install does not find by itself.
  tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
      "-resource-dir=" DSM_CLANG_RESOURCE_DIR, clang::tooling::ArgumentInsertPosition::BEGIN));

  dsmpass::Result result;
  const int status = tool.run(dsmpass::make_action_factory(result, source).get());
  if (!result.ran) {
    llvm::errs() << "dsm-pass: " << source << " does not compile; nothing was rewritten\n";
    return 1;
  }
  if (emit_rsd) llvm::outs() << result.rsd_json;
  if (result.failed || status != 0) return 1;
  if (emit_rsd && output.empty()) return 0;
  if (output.empty()) {
    llvm::outs() << result.rewritten;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "dsm-pass: cannot write " << output << ": " << ec.message() << "\n";
    return 1;
  }
  out << result.rewritten;
  return 0;
}
