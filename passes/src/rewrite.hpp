// Source-to-source rewriting of analyzed loops into redistribute() calls.
//
// Only the pragma line and the three parts of the loop header change; the body keeps its
// text, and `#line` directives keep every line number of the user's file.
#pragma once

#include "loop.hpp"
#include "pragma.hpp"

#include <clang/Rewrite/Core/Rewriter.h>

#include <string>

namespace dsmpass {

// Rewrites one marked loop; `index` makes the generated names unique in the file.
void rewrite_loop(clang::Rewriter& rw, const Mark& mark, const Loop& loop, int index, const std::string& file);

// reduction(...) of `mark` around its loop, in a dsm::lb::Reduction called `name`: the
// declaration before the loop (each variable starts at its operator's identity on every
// rank), indented by `ind`, and the call after it that combines the parts (a barrier).
// Both empty without a clause.
std::string reduction_start(const Mark& mark, const std::string& name, const std::string& ind);
std::string reduction_end(const Mark& mark, const std::string& name);

// Around each range (or tile) of the loop, a private copy of every reduction variable, by
// the same name, that the range starts from and hands back at its end. The Reduction holds
// the variables' addresses, so without the copies every store the loop makes through a
// pointer of their type may change them, and they stay in memory across the iterations
// (25 % of a sparse product's time). Opens a block after the range's `for` (`name` makes
// the references' names unique) and closes it after the loop; both empty without a clause.
std::string private_copies(const Mark& mark, const std::string& name);
std::string private_copies_end(const Mark& mark, const std::string& name);

// The rewritten main file: the runtime headers first (<dsm/pipeline.hpp> too for a
// pipelined nest), then the edited text.
std::string rewritten_file(clang::Rewriter& rw, const std::string& file, bool needs_algorithm, bool needs_pipeline);

// A string literal of `s`; a path's last component.
std::string quoted(const std::string& s);
std::string basename(const std::string& path);

// Replaces the characters of `range` (its end excluded) by `text`, padded with the newlines
// they held so the following lines keep their numbers.
void replace_keeping_lines(clang::Rewriter& rw, clang::SourceRange range, std::string text);

// A main file without marked loops, unchanged: compiled from elsewhere (dsmc++'s folder),
// it still reports errors and __FILE__ at the user's path.
std::string unchanged_file(const clang::SourceManager& sm, const std::string& file);

}  // namespace dsmpass
