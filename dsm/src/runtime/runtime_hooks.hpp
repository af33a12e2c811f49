// What the runtime offers the balancer (balancer/) inside libdsm. Not a public header.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dsm::detail {

// Whether dsm::init has run and dsm::finalize has not.
bool joined();

// Bytes this rank attaches to its next barrier arrival (replacing any earlier blob). The
// barrier carries them to every rank, so the balancer needs no messages of its own.
void set_barrier_blob(std::vector<std::byte> blob);
// Every rank's blob from the most recent completed barrier, indexed by rank (empty vectors
// before the first barrier, or for ranks that attached nothing).
const std::vector<std::vector<std::byte>>& barrier_blobs();
// Number of barriers completed so far.
std::uint64_t barrier_count();
// Called on every rank after every barrier, with every rank's blob of it known: the
// balancer takes the figures in there and checks that the ranks ran the same loops. A
// rank's blob goes with one barrier only (empty at the next, unless set again).
void set_barrier_hook(void (*hook)());
// Called once, at dsm::finalize, for the balancer's part of the statistics this rank reports
// to dsmrun (--stats): a JSON object text. Without a hook the part is an empty object.
void set_stats_section_hook(std::string (*section)());

// Records that, until the next barrier, rank `owner` alone writes the pages of
// [addr, addr+bytes). Collective in effect: every rank must make the same calls in the same
// order (for every owner, not only itself), computed from the same inputs. The owner then
// writes those pages without twins and serves whole pages instead of diffs. A page claimed
// for two different owners between two barriers falls back to twins for the later claims.
void claim_exclusive_write(int owner, const void* addr, std::size_t bytes);

// dsm::prefetch of several ranges at once: one fetch (a request per writer) for the pages of
// `reads` and `writes`, not one per range, and the opening of those of `writes` for writing
// (Mode::write). A page fetched to be written goes from invalid to writable in one protection
// change. A strided section (a column: a few bytes in each of a thousand rows) is a thousand
// ranges. `rereads`: this rank reads the same pages again after the next barriers (a loop
// over the same ranges as at its last execution), so their writers push their next changes
// with the barrier instead of this rank closing the pages and fetching them again.
struct ByteRun {
  const void* addr;
  std::size_t bytes;
};
void prefetch_runs(std::span<const ByteRun> reads, std::span<const ByteRun> writes, bool rereads = false);

// `rank` reads [addr, addr+bytes) after the next barrier: the pages of it this rank changes
// before that barrier go to it pushed with the barrier, as to a halo's reader (as many pages
// at most).
void expect_reader(const void* addr, std::size_t bytes, int rank);

// Which rank last wrote each page of [addr, addr+bytes) as far as this rank knows
// (-1: never written). One entry per page overlapping the range.
std::vector<int> page_writers(const void* addr, std::size_t bytes);

// Whether the contents of [addr, addr+bytes) may have changed on this rank since barrier
// `epoch` (barrier_count() then) ended: a page invalid or written now, or a change of it
// noticed or announced since. What a cache of values read from shared memory (the sparse
// loops' inspector) checks before it is used again.
bool changed_since(const void* addr, std::size_t bytes, std::uint64_t epoch);

// Measured cost of moving one page between ranks in a bulk fetch, in seconds (0 before any
// fetch large enough to measure it).
double page_transfer_seconds();

// What a page written by two ranks costs each of them at every barrier beyond moving its
// diff: a write fault, a close at the interval end, an invalidation and a fault that fetches
// (measured at dsm::init), and where pages cross a network the round trip of that fetch
// (measured at the first call: the median of a few echoes to another rank). 0 for a single
// rank.
double shared_page_seconds();

// Whether pages travel through a network stack (the tcp provider) rather than shared
// memory: there a page moved costs more than the mprotects of fetching pages apart.
bool pages_cross_network();

// Tells the runtime whether other programs take CPU time this rank needs (its core, or the
// CPUs it moves between). A rank that polls while it waits spends its share of that time,
// which its ranges need: it sleeps at once instead (the other program runs meanwhile, and
// the woken rank gets the core back first), and polls for DSM_POLL_US again once the CPU
// time is its own.
void set_core_shared(bool shared);

// Measures, at most every 0.1 s (longer for ranks not bound, so that /proc's rounding stays
// small), whether other programs take CPU time this rank needs, and sets it
// (set_core_shared) once known. For a rank bound to one core (dsmrun --bind): the share of
// that core it could keep against them (1: none runs there; 0.5: one always runnable), kept
// between calls, none before the first reading; none for a rank not bound. `with_peers`:
// other ranks of the job run on this core (more ranks than cores). Called at dsm::init, at
// every barrier and before every lock request that waits for a grant.
struct CoreShare {
  std::optional<double> share;
  bool with_peers = false;
};
CoreShare watch_core();

// Process ids of the job's other ranks on this host that have started, from the host's
// statistics board; none without one.
std::optional<std::vector<int>> host_peer_pids();

// The word on this host's statistics board through which ranks take a loop's chunks from
// rank `r` (balancer/runtime/take.cpp): nullptr where `r` runs on another host, has not
// started yet, or there is no board.
std::atomic<std::uint64_t>* chunk_word(int r);

// Whether no rank holds a page of [addr, addr+bytes) across barriers (dsm::own, a loop's
// exclusive writes) and none was claimed since the last barrier: a rank may then write
// there beside another with twins and diffs, and neither writes a page whole.
bool unheld(const void* addr, std::size_t bytes);

// Data sent by value from this rank's application thread to another's, outside the
// consistency protocol (a pipeline's boundary strips): messages from one rank arrive in the
// order sent and wait until received. Both fatal for a rank outside the job or this rank.
void send_to(int rank, std::span<const std::byte> data);
std::vector<std::byte> receive_from(int rank);
// Writes bytes another rank sent by value into this rank's copy of shared memory at `addr`
// (inside the region): values that rank wrote and announces at its next release, so this
// rank's own changes leave them out. Application thread only.
void write_received(void* addr, std::span<const std::byte> bytes);
// Seconds of one message's round trip to `rank` (an echo of a few bytes), measured now.
double round_trip_seconds(int rank);

// Extent of the allocation holding addr: {start, bytes}; {nullptr, 0} outside the region.
struct Extent {
  void* start;
  std::size_t bytes;
};
Extent allocation_of(const void* addr);

constexpr std::size_t page_size = 4096;

}  // namespace dsm::detail
