// Multi-process checks of the DSM core, run through dsmrun at 1 to 4 ranks. Each mode
// compares shared memory with what a sequential execution gives; a mismatch counts as a
// failure and makes the program exit 1. The modes live in files by theme: synchronization
// (dsm_check_sync.cpp), the randomized model test (dsm_check_model.cpp), pages one rank
// holds or claims (dsm_check_holds.cpp), and fetching, pushing and collecting pages
// (dsm_check_pages.cpp); dsm_check_main.cpp maps mode names to them.
#pragma once

#include <cstdint>

namespace dsm_check {

// Mismatches found on this rank so far.
extern int failures;

// Counts a mismatch unless `ok`, printing the first few.
void expect(bool ok, const char* what, long where, long got, long want);

// What word w holds after step (phase, round) `stamp`: a stale or misplaced word differs.
inline std::uint64_t stamped(long stamp, long w) { return std::uint64_t(stamp) << 32 | std::uint64_t(w); }

// Locks and barriers (dsm_check_sync.cpp).
void false_sharing();
void migratory();
void turns(long rounds);
void producer_consumer();
void stencil();
void sync_for(double seconds);
void barrier_notices(int rounds);
void blobs(int rounds);

// The randomized model test (dsm_check_model.cpp).
void randomized(unsigned seed, int phases, bool flap = false);

// Pages one rank holds or claims (dsm_check_holds.cpp).
void claims(unsigned seed, int phases);
void boundary(int phases);
void quiet_holds(int steps);
void moved_block(int steps);
void served_as_barrier_ends(int rounds);
void renewed_holds(int steps);
void allocation_tail(int steps);
void own_bad_rank();
void broken_promise();

// Fetching, pushing and collecting pages (dsm_check_pages.cpp).
void shared_edge(int phases);
void within(int phases);
void fetch_ahead();
void write_ahead();
void gc_copies(int phases);
void init_pages(int steps);
void kept(int phases);
void late_reader(int rounds);
void page_cost();
void handoff();
void fabric();

}  // namespace dsm_check
