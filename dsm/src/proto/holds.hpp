// Claims of pages for exclusive writing, and the pages this rank holds: the owner of a
// collective claim keeps them writable across barriers and announces them whole at every
// interval end (Page::held). Application thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "proto/intervals.hpp"

namespace dsm::proto {

struct Page;

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
// The held pages, of those with readers or served whole since the last barrier, whose
// bytes are those of every other rank's valid copy (Page::shown), to go unannounced at this
// barrier (sorted); the contents of the others with readers are kept for the next one.
// Without this a block's boundary page would reach its readers at every barrier of a time
// step, whole and through the barrier manager, where it changed at one or two, and a block
// fetched by the rank it moved to would be announced again at the barrier after, where
// its hold ends, and fetched again. Under mu, before the interval end's walk of its pages.
std::vector<std::uint32_t> unchanged_holds();
// The bytes to serve of held `page` as a whole page now: its shown copy, taken now if no
// other rank has a valid copy, else the live page (marked stale if it changed since shown).
// Under mu.
std::span<const std::byte> show_held(std::uint32_t page);
// The page's shown copy goes: another rank wrote it, its hold ended or it was announced.
void drop_shown(Page& pg);

}  // namespace dsm::proto
