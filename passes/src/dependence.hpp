// Loop-carried dependences a marked loop's descriptors prove: an iteration writes elements
// that another iteration reads or writes, so running the iterations on different ranks
// (or in another order) can change the result. Only what the sections prove is reported;
// whole-array sections, coefficients that differ (other than a section every iteration
// touches) and bounds that cannot be compared stay silent.
#pragma once

#include "loop.hpp"

#include <optional>
#include <string>

namespace dsmpass {

struct Dependence {
  std::string array;
  Access other = Access::read;  // what the second iteration does to the written elements
  long distance = 0;            // iterations from the writing one to the other; 0: every iteration
};

// The first dependence the sections prove, for a loop whose variable runs from `first` to
// `last` (inclusive) by the constant `step`. Symbolic sizes (n) are taken as large.
std::optional<Dependence> carried_dependence(const std::vector<Section>& sections, const Bound& first, const Bound& last,
                                             long step);

// What a doacross nest over rows `row` and columns `col` (the variables' keys) needs of its
// pipeline, in which row i reaches column j only after row i - 1 reached j + lookahead, and
// only a block's last row travels to the next block: derived from the nest's uses of the
// array `base` when every index is row_length * row + col + a constant.
struct NestNeeds {
  enum class Kind { derived, unknown, refused } kind = Kind::derived;
  std::string why;                   // unknown, refused: what stands in the way
  const Use* use = nullptr;          // ... where; derived: the read needing `lookahead`
  long lookahead = 0;                // derived: the least that keeps every dependence
  std::string writer;                // derived: the iteration writing what `use` reads, "(i - 1, j + 2)"
};
NestNeeds nest_needs(const std::vector<Use>& uses, const std::string& base, const std::string& row,
                     const std::string& col);

}  // namespace dsmpass
