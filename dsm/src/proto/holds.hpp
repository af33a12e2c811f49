// Claims of pages for exclusive writing, and the pages this rank holds: the owner of a
// collective claim keeps them writable across barriers and announces them whole at every
// interval end (Page::held). Application thread.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "proto/intervals.hpp"

namespace dsm::proto {

// A held page stays writable for this many barriers after the last loop that opened it, so
// a time step with many phases (Shallow: nine barriers) does not close and reopen its
// arrays every step (two mprotects each); the price is that it is announced whole at those
// barriers.
constexpr std::uint64_t hold_barriers = 16;
// The barrier epoch at which a hold renewed in epoch `renewed` lapses: from then on the page
// is closed at the next walk of the holds, unless a loop renewed it meanwhile.
constexpr std::uint64_t lapse_epoch(std::uint64_t renewed) { return renewed + hold_barriers; }

// Records a claim (see runtime_hooks.hpp); collective claims may be held across barriers.
void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective);
// Calls part(first, end, held) for the parts of [first, last) in page order, held when
// this rank surely holds every page of the part (valid, writable, announced whole at every
// barrier), known from the runs of the last walk of the holds without touching the pages.
void split_held(std::uint32_t first, std::uint32_t last,
                const std::function<void(std::uint32_t, std::uint32_t, bool)>& part);
// What opening held pages [first, last) for writing comes to: their holds are renewed.
void renew_holds(std::uint32_t first, std::uint32_t last);

// Code outside marked loops, which every rank runs, reads or is about to write [first,
// last). A held page, or one kept open (a twinned page written barrier after barrier),
// takes writes without a fault, in that code or in the loop after it, and a rank that
// fetches the page before its next acquire must not see them: the same update run on every
// rank would be applied twice (or, over a kept page, mixed bytewise with the diff before
// it), and a value read before a loop (a pivot) would be read after the holder's loop
// changed it. Every rank runs the same access, so the writer's own access comes before its
// writes: the page's bytes are kept then, once per page and interval, and served in its
// place for the intervals before (image_before), even after the writer's next barrier
// closed the interval.
void keep_before_change(std::uint32_t first, std::uint32_t last);
// Keeps `bytes` as `page` was before own interval `idx` wrote it. Under mu.
void keep_image(std::uint32_t page, std::uint32_t idx, const std::byte* bytes);
// The bytes of `page` as its own interval `idx` left them, when a later interval wrote it
// (kept by keep_before_change or keep_image); nullptr when its bytes now are those. Under mu.
const std::byte* image_before(std::uint32_t page, std::uint32_t idx);
// At the interval end that closes own interval `closing` at a barrier: every rank knows
// the intervals before it, so nobody asks for the bytes kept in them. Under mu.
void drop_befores(std::uint32_t closing);

// No page is held any more: stale entries go.
void forget_holds();
// After a walk of the holds: `still` (sorted) are the pages held on, the oldest of them
// renewed in epoch `oldest`.
void walked_holds(std::vector<std::uint32_t> still, std::uint64_t oldest);
// Whether a hold lapses at this barrier, the one reason for a walk that falls due. If none
// does (loops renewed them all), the walk is put off to when the oldest renewal lapses: a
// word read per held page instead of the walk's work per page, which every rank holding a
// block does at the same barrier.
bool hold_lapses();
// The held pages with readers that `runs` announce whole but that have not changed since
// they were last announced (sorted); the others' contents are kept for the next barrier.
// Without this a block's boundary page would reach its readers at every barrier of a time
// step, whole and through the barrier manager, where it changed at one or two. Under mu.
std::vector<std::uint32_t> unchanged_holds(const std::vector<PageRun>& runs);

}  // namespace dsm::proto
