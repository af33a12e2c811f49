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

}  // namespace dsmpass
