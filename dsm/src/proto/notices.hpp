// Other ranks' intervals and write notices as an acquire brings them: merged into the log,
// their pages invalidated, or updated in place from the changes pushed with a barrier.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "proto/intervals.hpp"

namespace dsm::proto {

// At every acquire: learn intervals, invalidate pages. A pushed page whose only missing
// change is its push is updated in place instead. A barrier's departure also ends the
// barrier (`ends_barrier`), under the same lock: a page served after the merge is served
// in the next epoch (see show_held), never in the one the departure closed.
void merge(std::vector<Interval> in, std::span<const Push> pushes = {}, bool ends_barrier = false);
// Gives the pages of [first, end) their pending whole notices back from whole_runs, before
// anything reads or changes their `pending` or `valid`. Called with mu held.
void take_whole(std::uint32_t first, std::uint32_t end);

}  // namespace dsm::proto
