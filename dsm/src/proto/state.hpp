// The runtime's state on one rank, shared by the page protocol, the synchronization
// (sync.cpp) and the public API (runtime/runtime.cpp). Internal. State is composed of one
// part per concern (the page table, intervals, served changes, fetch and write ahead,
// holds, synchronization, garbage collection, the balancer's link, the inbox), beside the
// rank's identity and handles.
//
// The page protocol (fault_path, fetch, serve, diffs, interval_end, notices, holds, gc)
// works over sets of pages at once, one request per writer and one mprotect per run of
// pages, because per-page system calls cost more than the computation (docs/design.md,
// section "What the hardware costs, and what follows").
//
// Threads: the application thread changes page states, the open interval and the interval
// log; the service thread answers diff requests, forwards locks and manages barriers.
// `mu` guards what both touch: twins, the diff store, the interval log, lock tokens and
// the inbox. Runtime code reads and writes page contents only through the region's alias,
// so it never faults while holding `mu`.
#pragma once

#include <algorithm>
#include <array>
#include <boost/container/small_vector.hpp>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "job/board.hpp"
#include "job/bootstrap.hpp"
#include "mem/region.hpp"
#include "net/wait_counter.hpp"
#include "net/transport.hpp"
#include "proto/barrier_codec.hpp"
#include "proto/claims.hpp"
#include "proto/inbox.hpp"
#include "proto/intervals.hpp"
#include "proto/twin.hpp"
#include "proto/whole_runs.hpp"
#include "proto/within.hpp"

namespace dsm::proto {

// The fields a barrier's merge and interval end touch for every page come first, in one
// cache line: thousands of pages are walked per barrier, after a loop that streamed
// megabytes through the caches.
struct alignas(64) Page {
  Twin twin;  // taken at the first write of interval twin_idx
  // Changes not applied yet (page invalid while non-empty); mostly one, kept inline.
  boost::container::small_vector<Notice, 1> pending;
  std::uint32_t twin_idx = 0;
  std::int32_t last_writer = -1;
  mem::Prot prot = mem::Prot::read;
  bool valid = true;
  // Its bytes are all zero: never opened for writing here, no change applied. A fetch then
  // asks for a first change `from_zeros`, and its twin is zero_page.
  bool zero = true;
  bool dirty = false;        // written in the open interval
  bool dirty_whole = false;  // ... without a twin (exclusive claim or write_all)
  // One of its own changes since the last collection was announced as the whole page: a
  // reader that has not fetched since asks for that interval's page however many diffs
  // followed, so whenever the page is written again its bytes are kept first
  // (Served::befores): a reader that fetches late, while this rank writes the page in an
  // interval the reader does not know yet, must not get that write with the page.
  bool shown_whole = false;
  // Holding: the owner of a collective claim keeps the page writable across barriers and
  // announces it as a whole page at every interval end, so a loop that writes the same
  // pages every time pays no mprotect and no fault. ClaimTable::holder is the same on every
  // rank (it follows the collective claims); `held` is this rank's side of it.
  bool held = false;
  bool hold_ends = false;  // another rank claimed it: stop holding at the next interval end
  // Kept open: a twinned page this rank writes barrier after barrier keeps its write access
  // and a twin across interval ends. Each end diffs it against the twin at once and takes
  // a fresh twin, copies that cost far less than what they spare: the page closed at every
  // end and opened again by a fault or a prefetch, two mprotects. An unchanged page goes
  // unannounced. While kept, `dirty` stays set and the twin belongs to the open interval.
  bool kept = false;
  // Opened on a guess, ahead of a sequential run of write faults: at the interval end an
  // unchanged one goes unannounced, so a guess past the end of the run costs no invalidation.
  bool ahead = false;
  std::uint32_t idle = 0;               // interval ends a kept page went unchanged
  std::uint64_t written_epoch = ~0ull;  // barrier epoch of its last announced diff
  std::uint64_t noticed_epoch = ~0ull;  // barrier epoch of the last change of another rank's noticed
  // Ranks that fetched this page from us in a small request (a halo): at each barrier where
  // our newest interval changed it, the change (the whole page, or its diff when another
  // rank writes the page too) goes to them with the barrier's departure, so they need no
  // fetch for a boundary they read every time. Each fetch renews `left` barriers of pushes.
  // A reader that promised to read bytes [lo, hi) alone (dsm::ReadsWithin) gets those bytes
  // of a whole page alone.
  struct Reader {
    std::uint32_t rank;
    std::uint32_t left;
    std::uint16_t lo = 0;
    std::uint16_t hi = mem::page_size;
  };
  std::vector<Reader> readers;
  // A held page's bytes as every valid copy of it on other ranks holds them: recorded when
  // it was announced to its readers (pushed), or when it was first served whole in an epoch
  // whose barrier before had announced it (no other copy was valid then). Held pages take
  // no fault, so they count as written at every barrier; this copy tells an unchanged one
  // apart, which then goes unannounced, and the ranks that read or fetched it keep their
  // copies (a block that moved to another rank is not fetched twice). `shown_stale`: served
  // since with other bytes, so announced at the next barrier whatever it holds then.
  std::unique_ptr<std::byte[]> shown;
  bool shown_stale = false;
  // The barrier epoch its hold began, or of the last collection (which left every rank a
  // valid copy): until the barrier that announces the page has closed this rank's interval,
  // no copy may be taken as shown.
  std::uint64_t held_from = 0;
  // Invalid, yet bytes [known_lo, known_hi) are up to date: a push of them alone brought the
  // whole-page change (known_proc, known_idx) there. While that change is all the page lacks,
  // a promise to read those bytes alone needs no fetch (within.hpp).
  std::uint32_t known_proc = 0, known_idx = 0;
  std::uint16_t known_lo = 0, known_hi = 0;
  // Fetched whole from `proc`, as its interval `idx` left it (whole_through), a change this
  // rank has not been noticed of yet: the page stays valid when it is.
  struct Through {
    std::uint32_t proc = ~0u, idx = 0;
  };
  Through fetched_through;
};

struct LockRequest {
  int rank;
  std::uint64_t epoch;  // barriers the requester had completed when it asked
  VectorTime vt;
};

struct LockToken {
  bool held = false;    // this rank has the token
  bool in_use = false;  // between lock_acquire and lock_release
  std::optional<LockRequest> next;  // who asked after us
};

struct BarrierNode {  // gathering on rank 0 and every rank with children; handlers only
  std::uint64_t epoch = 0;
  int fanout = 3;
  bool exchange = false;           // two ranks that send each other their arrivals (barrier.hpp)
  std::vector<int> members;        // this rank, then its children
  std::vector<Arrival> arrivals;   // by member
  std::vector<net::Payload> kept;  // by member: what its arrival's spans point into
  int arrived = 0;
  // The pushes to this rank itself, with the buffers they point into: set before its own
  // departure is sent, taken by its application thread with that departure. Copied into
  // the departure, they were a second copy of megabytes a barrier where a split loop
  // writes by columns what the other rank reads by rows (adi).
  std::vector<Push> pushes_here;
  std::vector<net::Payload> pushes_kept;
};

// Median of the last few samples: one fetch that waited for a descheduled peer must not
// make every page look expensive to the balancer.
struct RecentMedian {
  std::array<double, 15> samples{};
  std::size_t count = 0;
  void add(double v) { samples[count++ % samples.size()] = v; }
  double value() const {  // 0 before any sample
    std::array<double, 15> s = samples;
    const std::size_t n = std::min(count, s.size());
    if (n == 0) return 0;
    std::nth_element(s.begin(), s.begin() + n / 2, s.begin() + n);
    return s[n / 2];
  }
};

// The shared heap's pages as this rank sees them.
struct PageTable {
  std::vector<Page> pages;  // one per allocated page of the heap
  std::atomic<std::uint32_t> allocated{0};  // pages allocated: grown by alloc (under mu), read by both threads
  struct Allocation {
    std::uint32_t first, count;
    std::size_t bytes;
  };
  std::vector<Allocation> allocations;
  bool populate = true;  // give allocations memory at dsm::alloc (DSM_POPULATE)
};

// Intervals and write notices: the open interval's pages and every interval this rank knows.
struct Intervals {
  IntervalLog log{1};
  // Invalid pages whose one pending notice is a whole page of another rank: that notice's
  // interval is the one listed here, not the one in Page::pending (see take_whole).
  WholeRuns whole_runs{1};
  std::vector<std::uint32_t> dirty;  // pages written in the open interval, app thread only
  std::uint32_t last_sent = 0;       // own intervals already sent to the barrier manager
};

// What this rank's changes give the others: the changes it stored, and the pages whose
// readers get their changes pushed (serve.cpp). Under mu.
struct Served {
  // By diff_key(page, own idx): a change as its diff, or (for a page whose twin was all
  // zero and whose diff would be larger than the page, see encode_twin) as the page the
  // interval left, to be diffed against zeros when asked for.
  std::unordered_map<std::uint64_t, std::vector<std::byte>> diffs;
  std::unordered_map<std::uint64_t, std::unique_ptr<std::byte[]>> ends;
  std::size_t diff_bytes = 0;  // of both
  std::vector<std::uint32_t> read_pages;  // pages with readers to push to
  std::vector<std::uint32_t> shown_pages;  // held pages given Page::shown by a whole serve
  // A page's bytes before own interval `idx` first wrote it, where an earlier interval
  // announced it whole (holds.hpp, keep_image): what a rank that knows only earlier
  // intervals reads.
  struct Before {
    std::uint32_t idx;
    std::unique_ptr<std::byte[]> bytes;
  };
  std::unordered_map<std::uint32_t, std::vector<Before>> befores;  // by page, idx ascending
};

// Fetching and opening ahead of sequential faults (application thread).
struct Ahead {
  // Walks through memory others wrote that faults follow, each the page after the last run
  // a fault fetched for it and that run's length: a loop reads several arrays at once (a
  // sparse matrix's values, column indices and row starts), each a walk of its own.
  struct Walk {
    std::uint32_t next = ~0u;
    std::uint32_t window = 1;
    std::uint64_t used = 0;  // when a fault last continued it (for replacing the oldest)
  };
  static constexpr std::size_t walks_kept = 8;
  std::array<Walk, walks_kept> walks{};
  std::uint64_t faults = 0;
  std::uint32_t next_write = ~0u;  // the same for the last run a write fault opened
  std::uint32_t write_window = 1;
  // Largest run a write fault opens ahead on sequential first writes (DSM_WRITE_AHEAD; 1:
  // none): without it, a rank that writes its block without dsm::own takes a fault per page
  // and interval.
  std::uint32_t max_write = 64;
};

// Claims of pages and the pages this rank holds (holds.hpp; application thread only).
struct Holds {
  ClaimTable claims;                 // one entry per page, beside PageTable::pages
  std::vector<std::uint32_t> pages;  // pages this rank holds (may hold stale entries)
  std::vector<PageRun> runs;         // `pages` as the last walk of them left them (close_interval)
  bool changed = false;              // a hold began, ends or was lost since that walk
  std::uint64_t walk_due = 0;        // barrier epoch of the next walk at the latest
  std::uint64_t closes = 0;          // interval ends so far
  // The last page keep_before_change looked at, and `closes` then: a loop outside marked
  // loops asks for the same page again and again.
  std::uint32_t noted_page = ~0u;
  std::uint64_t noted_closes = 0;
};

// Barriers and locks (sync.cpp).
struct Sync {
  std::uint64_t epoch = 0;  // barriers completed
  bool in_barrier = false;  // the application thread waits in barrier `epoch` (under mu)
  // ... and has changed no page since it closed its last interval: its pages are as that
  // interval left them, until the barrier's merge (under mu).
  bool pages_as_closed = false;
  std::vector<LockToken> tokens;
  int locks_in_use = 0;  // tokens between lock_acquire and lock_release (under mu)
  std::vector<int> lock_last;  // lock manager: last requester of each lock it manages
  BarrierNode barrier;
  // A writer's pushes to one reader, at least this many, go straight to it (barrier_push;
  // DSM_DIRECT_PUSH) unless the reader gathers the writer's arrival anyway; `relayed_push_pages`
  // where the arrival goes to another rank, which would pass them on: over a network they
  // would cross it twice (1 there unless DSM_DIRECT_PUSH says otherwise).
  std::uint32_t direct_push_pages = 16;
  std::uint32_t relayed_push_pages = 16;
  std::uint64_t acquire_poll_ns = 0;  // when an acquire last took in messages (application thread)
};

// Garbage collection (gc.cpp).
struct Collection {
  std::size_t bound = 256u << 20;  // of any rank's protocol_bytes (DSM_GC_BOUND)
  // In a garbage collection, from the barrier that started it (merged here) to the one that
  // ends it (under mu): a valid page then holds every change any rank knows of.
  bool collecting = false;
};

// What the runtime and the balancer exchange (runtime_hooks.hpp).
struct BalancerLink {
  std::vector<std::vector<std::byte>> blobs;  // balancer figures from the last barrier
  std::vector<std::byte> my_blob;
  std::vector<std::byte> sent_blob;  // with the barrier in progress, which does not bring it back
  void (*hook)() = nullptr;   // called after every barrier
  RecentMedian page_seconds;  // measured cost of fetching one page in bulk
  // Parts of detail::shared_page_seconds: faults and protection changes, and the round trip
  // of a fetch over a network (< 0: not measured yet).
  double protect_seconds = 0;
  double fetch_round_trip = -1;
};

// The pages that live dsm::ReadsWithin promises cover in part, with the bytes read of each
// (within.hpp; application thread only).
struct Within {
  std::vector<ByteRange> edges;
};

struct Inbox {
  // Replies for the application thread (diff replies, lock grants, barrier departures).
  net::WaitCounter arrived;
  std::deque<Reply> replies;
  // Channel messages by sender: data a rank sent this one by value, taken in the order sent
  // whenever the application thread asks for the next one (wait_channel).
  std::map<int, std::deque<std::vector<std::byte>>> channel;
  // Messages of the barrier by type and sender, whatever the application thread waits for
  // when they come: direct pushes (barrier_push) and, under exchange, the other rank's
  // arrivals (barrier.hpp), until the merge of their barrier.
  std::map<std::pair<Msg, int>, std::deque<Reply>> queued;
  // What the application thread waits for, for a message when a peer goes silent: the
  // reply's type (0: none) and sender (-1: any).
  std::atomic<std::uint16_t> waiting_type{0};
  std::atomic<int> waiting_from{-1};
};

struct State {
  int me = 0;
  int nprocs = 1;
  std::unique_ptr<mem::Region> region;
  std::unique_ptr<job::Bootstrap> boot;
  std::unique_ptr<board::Board> board;  // this host's statistics board (under dsmrun)
  std::unique_ptr<net::Transport> net;

  std::mutex mu;
  PageTable heap;
  Intervals intervals;
  Served served;
  Ahead ahead;
  Holds holds;
  Sync sync;
  Collection gc;
  BalancerLink balancer;
  Within within;
  Inbox inbox;

  // How long a waiting application thread polls (DSM_POLL_US). A sleeping rank's reply wakes
  // its service thread and then it, two thread wake-ups of 50-80 us each on an idle vCPU,
  // and barrier waits of 0.3-2 ms are common (the phases' times jitter between cores): at
  // 2 ms, Jacobi's 6000 barrier waits (1500 iterations, 2 ranks) sleep ~15 times, at 300 us
  // ~400 times.
  // OpenMP runtimes spin for a while too, Open MPI for ever. Only while no other program
  // takes CPU time the rank needs (set_core_shared).
  static constexpr std::uint64_t default_poll_ns = 2'000'000;
  std::uint64_t poll_ns = default_poll_ns;
  std::uint64_t configured_poll_ns = default_poll_ns;  // poll_ns while no other program takes the rank's CPU time
};

State& state();

// Walks over thousands of pages come right after a loop that streamed the caches: each
// Page is a miss to memory. Touching the one `prefetch_distance` pages ahead overlaps the
// misses, which halves the time of a merge.
constexpr std::uint32_t prefetch_distance = 48;
inline void prefetch_page(const std::vector<Page>& pages, std::uint32_t page) {
  if (page < pages.size()) __builtin_prefetch(pages.data() + page);
}

inline std::uint64_t diff_key(std::uint32_t page, std::uint32_t idx) {
  return (std::uint64_t(page) << 32) | idx;
}

// The page's bytes in the runtime's alias of the region (always writable).
std::byte* alias_page(std::uint32_t page);
// Gives `pages` protection `prot` in the application view, one mprotect per run (sorts them).
void protect(std::vector<std::uint32_t>& pages, mem::Prot prot);

// Reports on stderr, in one write, and ends the rank with status 1.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace dsm::proto
