// The runtime's state on one rank, shared by the page protocol (page_protocol.cpp), the
// synchronization (sync.cpp) and the public API (runtime/runtime.cpp). Internal.
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
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "job/board.hpp"
#include "job/bootstrap.hpp"
#include "mem/region.hpp"
#include "net/wait_counter.hpp"
#include "net/transport.hpp"
#include "proto/claims.hpp"
#include "proto/codec.hpp"
#include "proto/intervals.hpp"
#include "proto/whole_runs.hpp"

namespace dsm::proto {

// Message types of the protocol (the transport's uint16 type).
enum Msg : std::uint16_t {
  diff_request = 1,   // u32 req, u32 n, n x (u32 page, u32 idx, u8 whole)
  diff_reply = 2,     // u32 sender, u32 req, u32 n, n x (u32 page, u32 idx, u8 whole, bytes); whole 2:
                      // the page as it is (a request at_collection, for a valid page)
  lock_request = 3,   // u32 lock, u64 epoch, vt                 (to the lock's manager)
  lock_forward = 4,   // u32 lock, u32 requester, u64 epoch, vt  (manager to the last requester)
  lock_grant = 5,     // u32 lock, intervals             (holder to the next one)
  barrier_arrive = 6, // u64 epoch, vt, intervals, blob, u64 alloc, u64 protocol bytes,
                      // u32 n, n x (u32 reader, u32 page, u8 whole, bytes)  (pushes, Page::readers)
  barrier_depart = 7, // u64 epoch, intervals, blobs, u8 gc, u8 alloc mismatch,
                      // u32 n, n x (u32 writer, u32 idx, u32 page, u8 whole, bytes)
  echo_request = 8,   // any bytes: answered with the same bytes (round-trip floor, diagnosis)
  echo_reply = 9,
};

// For messages that name a message.
constexpr const char* msg_name(std::uint16_t type) {
  constexpr const char* names[] = {"message of unknown type", "diff request", "diff reply", "lock request",
                                   "lock forward", "lock grant", "barrier arrival", "barrier departure",
                                   "echo request", "echo reply"};
  return type < std::size(names) ? names[type] : names[0];
}

// A reply the service thread queued for the application thread.
struct Reply {
  int src;
  Msg type;
  std::vector<std::byte> payload;
};

// The fields a barrier's merge and interval end touch for every page come first, in one
// cache line: thousands of pages are walked per barrier, after a loop that streamed
// megabytes through the caches.
struct alignas(64) Page {
  std::unique_ptr<std::byte[]> twin;  // copy taken at the first write of interval twin_idx
  // Changes not applied yet (page invalid while non-empty); mostly one, kept inline.
  boost::container::small_vector<Notice, 1> pending;
  std::uint32_t twin_idx = 0;
  std::int32_t last_writer = -1;
  mem::Prot prot = mem::Prot::read;
  bool valid = true;
  bool dirty = false;        // written in the open interval
  bool dirty_whole = false;  // ... without a twin (exclusive claim or write_all)
  // Holding: the owner of a collective claim keeps the page writable across barriers and
  // announces it as a whole page at every interval end, so a loop that writes the same
  // pages every time pays no mprotect and no fault. ClaimTable::holder is the same on every
  // rank (it follows the collective claims); `held` is this rank's side of it.
  bool held = false;
  bool hold_ends = false;  // another rank claimed it: stop holding at the next interval end
  // Kept open: a twinned page this rank writes barrier after barrier keeps its write access
  // and a twin across interval ends. Each end diffs it against the twin at once and takes
  // a fresh twin (a few microseconds); an unchanged page goes unannounced. The page would
  // otherwise be closed at every end and opened again by a fault or a prefetch: two
  // mprotects, tens of microseconds each in a VM. While kept, `dirty` stays set and the
  // twin belongs to the open interval.
  bool kept = false;
  // Opened on a guess, ahead of a sequential run of write faults: at the interval end an
  // unchanged one goes unannounced, so a guess past the end of the run costs no invalidation.
  bool ahead = false;
  std::uint32_t idle = 0;               // interval ends a kept page went unchanged
  std::uint64_t written_epoch = ~0ull;  // barrier epoch of its last announced diff
  // Ranks that fetched this page from us in a small request (a halo): at each barrier where
  // our newest interval changed it, the change (the whole page, or its diff when another
  // rank writes the page too) goes to them with the barrier's departure, so they need no
  // fetch for a boundary they read every time. Each fetch renews `left` barriers of pushes.
  struct Reader {
    std::uint32_t rank;
    std::uint32_t left;
  };
  std::vector<Reader> readers;
  // A held page with readers: its contents when last announced in this hold. Held pages
  // take no fault, so they count as written at every barrier; this copy tells an unchanged
  // one apart, which then goes unannounced (its readers keep their copy).
  std::unique_ptr<std::byte[]> shown;
};

// A page's change in interval `idx` of rank `proc`, pushed with a barrier: the whole page
// at that interval's end, or that interval's diff of it.
struct Push {
  std::uint32_t proc, idx, page;
  bool whole;
  std::span<const std::byte> data;
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

struct BarrierManager {  // on rank 0, driven by the service thread
  std::uint64_t epoch = 0;
  int arrived = 0;
  std::vector<VectorTime> vts;
  std::vector<std::vector<Interval>> intervals;
  std::vector<std::vector<std::byte>> blobs;
  std::vector<std::uint64_t> allocs;
  std::vector<std::vector<std::pair<std::uint32_t, Push>>> pushes;  // per sender: (reader, push)
  std::vector<std::vector<std::byte>> arrivals;  // the messages the pushes point into
  std::uint64_t max_protocol_bytes = 0;
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

// The balancer moves pages in bulk (one request per writer), so what a page costs it is a
// bulk fetch's time per page. A fetch of a few pages is mostly round-trip latency, and
// under load mostly the wait for a descheduled peer: sampled per page, one boundary page
// came to 0.9 ms, which priced every move out for good. Only fetches of at least this
// many pages are sampled.
constexpr std::size_t bulk_fetch_pages = 64;
// Largest run a fault fetches ahead on a sequential read (below bulk_fetch_pages: the
// balancer's page cost is sampled from its own bulk fetches).
constexpr std::uint32_t max_fetch_ahead = 32;

struct State {
  int me = 0;
  int nprocs = 1;
  std::unique_ptr<mem::Region> region;
  std::unique_ptr<job::Bootstrap> boot;
  std::unique_ptr<board::Board> board;  // this host's statistics board (under dsmrun)
  std::unique_ptr<net::Transport> net;

  std::mutex mu;
  std::vector<Page> pages;    // one per allocated page of the heap
  ClaimTable claims;  // one entry per page, beside `pages` (application thread only)
  std::atomic<std::uint32_t> heap_pages{0};  // grown by alloc (under mu), read by both threads
  struct Allocation {
    std::uint32_t first, count;
    std::size_t bytes;
  };
  std::vector<Allocation> allocations;
  IntervalLog log{1};
  // Invalid pages whose one pending notice is a whole page of another rank: that notice's
  // interval is the one listed here, not the one in Page::pending (see take_whole).
  WholeRuns whole_runs{1};
  std::vector<std::uint32_t> dirty;  // pages written in the open interval, app thread only
  std::vector<std::uint32_t> held;   // pages this rank holds (may hold stale entries)
  std::vector<PageRun> held_runs;    // `held` as the last walk of it left it (close_interval)
  bool held_changed = false;         // a hold began, ends or was lost since that walk
  std::uint64_t held_walk_due = 0;   // barrier epoch of the next walk at the latest
  std::vector<std::uint32_t> read_pages;  // pages with readers to push to (under mu)
  std::unordered_map<std::uint64_t, std::vector<std::byte>> diffs;  // (page, own idx)
  std::size_t diff_bytes = 0;
  std::uint32_t last_sent_interval = 0;  // own intervals already sent to the barrier manager
  std::uint64_t epoch = 0;                 // barriers completed
  std::uint32_t next_fetch = ~0u;   // the page after the last run a fault fetched (app thread)
  std::uint32_t fetch_window = 1;   // pages that run had
  std::uint32_t next_write = ~0u;   // the same for the last run a write fault opened
  std::uint32_t write_window = 1;
  // Largest run a write fault opens ahead on sequential first writes (DSM_WRITE_AHEAD; 1:
  // none). A rank that writes its block without dsm::own took a fault per page and interval.
  std::uint32_t max_write_ahead = 64;
  bool in_barrier = false;  // the application thread waits in barrier `epoch` (under mu)

  // Replies for the application thread (diff replies, lock grants, barrier departures).
  net::WaitCounter arrived;
  std::deque<Reply> inbox;

  std::vector<LockToken> tokens;
  int locks_in_use = 0;  // tokens between lock_acquire and lock_release (under mu)
  std::vector<int> lock_last;  // lock manager: last requester of each lock it manages
  BarrierManager barrier_mgr;

  std::vector<std::vector<std::byte>> blobs;  // balancer figures from the last barrier
  std::vector<std::byte> my_blob;
  void (*barrier_hook)() = nullptr;
  std::size_t gc_bound = 256u << 20;
  // In a garbage collection, from the barrier that started it (merged here) to the one that
  // ends it (under mu): a valid page then holds every change any rank knows of.
  bool collecting = false;
  bool populate = true;  // give allocations memory at dsm::alloc (DSM_POPULATE)
  RecentMedian page_seconds;  // measured cost of fetching one page in bulk
  // How long a waiting application thread polls (DSM_POLL_US). A sleeping rank's reply wakes
  // its service thread and then it, ~50-80 us a hop on an idle vCPU here, and barrier waits
  // of 0.3-2 ms are common (the phases' times jitter between cores): at 2 ms, Jacobi's 6000
  // barrier waits (1500 iterations, 2 ranks) sleep ~15 times instead of ~400 at 300 us.
  // OpenMP runtimes spin for a while too, Open MPI for ever. Only while no other program
  // takes CPU time the rank needs (set_core_shared).
  static constexpr std::uint64_t default_poll_ns = 2'000'000;
  std::uint64_t poll_ns = default_poll_ns;
  std::uint64_t configured_poll_ns = default_poll_ns;  // poll_ns while no other program takes the rank's CPU time
  std::uint64_t acquire_poll_ns = 0;  // when an acquire last took in messages (application thread)
};

State& state();

// Walks over thousands of pages come right after a loop that streamed the caches: each
// Page is a miss to memory (6-8 ns a page here). Touching the one `prefetch_distance` pages
// ahead overlaps the misses (merge: half the time).
constexpr std::uint32_t prefetch_distance = 48;
inline void prefetch_page(const std::vector<Page>& pages, std::uint32_t page) {
  if (page < pages.size()) __builtin_prefetch(pages.data() + page);
}

inline std::uint64_t diff_key(std::uint32_t page, std::uint32_t idx) {
  return (std::uint64_t(page) << 32) | idx;
}

[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// page_protocol.cpp
void on_fault(void* addr, bool is_write);
// At every release and acquire. Held pages stay writable only across barriers.
void close_interval(bool at_barrier);
// Records a claim (see runtime_hooks.hpp); collective claims may be held across barriers.
void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective);
// At every acquire: learn intervals, invalidate pages. A pushed page whose only missing
// change is its push is updated in place instead.
void merge(std::vector<Interval> in, std::span<const Push> pushes = {});
// Pushes of the changes `newest` (this rank's newest interval, or none) made to pages that
// readers fetched, encoded into w as the barrier arrival carries them. Called with mu held.
void encode_pushes(codec::Writer& w, const Interval* newest);
// Brings the pages up to date. `collecting`: garbage collection, where every rank knows
// every change, so a writer whose copy is valid sends it whole instead of its diffs.
void make_valid(std::vector<std::uint32_t> pages, bool collecting = false);
// Calls part(first, end, held) for the parts of [first, last) in page order, held when
// this rank surely holds every page of the part (valid, writable, announced whole at every
// barrier), known from the runs of the last walk of the holds without touching the pages.
void split_held(std::uint32_t first, std::uint32_t last,
                const std::function<void(std::uint32_t, std::uint32_t, bool)>& part);
// What opening held pages [first, last) for writing comes to: their holds are renewed.
void renew_holds(std::uint32_t first, std::uint32_t last);
// Gives the pages of [first, end) their pending whole notices back from whole_runs, before
// anything reads or changes their `pending` or `valid`. Called with mu held.
void take_whole(std::uint32_t first, std::uint32_t end);
// Opens valid pages for writing (twins, or none when `whole`); pages[guessed_from..] are
// opened ahead of the writes (Page::ahead).
void open_for_write(std::span<const std::uint32_t> pages, bool whole, std::size_t guessed_from = SIZE_MAX);
void serve_diff_request(int src, codec::Reader& r);
void garbage_collect();
std::size_t protocol_bytes();
// Waits for the next reply for the application thread and takes it out of the inbox. That
// thread waits for one kind of reply at a time: one of another type, or from another rank
// than `from` (-1: any), is a forged or duplicated message, and fatal.
Reply wait_inbox(Msg type, int from);
void post_inbox(int src, Msg type, std::span<const std::byte> payload);

// sync.cpp
void handle_message(int src, std::uint16_t type, std::span<const std::byte> payload);
// A barrier that checks every rank reached the same collective call: `call` is 0 for
// dsm::barrier, the size for dsm::alloc, finalize_call for dsm::finalize. The barrier inside
// garbage collection passes collecting = true, so it cannot start another.
constexpr std::uint64_t finalize_call = ~std::uint64_t{0};
void barrier_with(std::uint64_t call, bool collecting = false);
void acquire(int lock);
// Sends `bytes` to `peer`'s service thread and waits for them to come back.
void echo(int peer, std::span<const std::byte> bytes);
void release(int lock);

}  // namespace dsm::proto
