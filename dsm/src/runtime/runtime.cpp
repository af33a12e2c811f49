// The public API (dsm.hpp) and the hooks for the balancer (runtime_hooks.hpp): set-up,
// allocation, and the entry points into the protocol.
#include <dsm/dsm.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "mem/fault.hpp"
#include "mem/heap.hpp"
#include "mem/protect_cost.hpp"
#include "net/fabric_lib.hpp"
#include "net/segments.hpp"
#include "proto/barrier.hpp"
#include "proto/dispatch.hpp"
#include "proto/fault_path.hpp"
#include "proto/fetch.hpp"
#include "proto/holds.hpp"
#include "proto/inbox.hpp"
#include "proto/notices.hpp"
#include "proto/received.hpp"
#include "proto/serve.hpp"
#include "proto/state.hpp"
#include "proto/sync.hpp"
#include "proto/within.hpp"
#include "runtime/cpus.hpp"
#include "runtime/env_setting.hpp"
#include "runtime/runtime_hooks.hpp"
#include "runtime/stats.hpp"

namespace dsm {

namespace {

using sys::env_int;
using sys::env_size;

using proto::state;

constexpr int lock_count = 1024;
bool g_initialized = false;
bool g_finalized = false;  // a process joins one job, once
double g_start = 0;
std::string (*g_stats_section)() = nullptr;  // set_stats_section_hook

void require_init(const char* what) {
  if (!g_initialized) {
    std::fprintf(stderr, "dsm: %s called %s\n", what, g_finalized ? "after dsm::finalize" : "before dsm::init");
    std::exit(2);
  }
}

std::uint32_t page_index(const void* addr) {
  return std::uint32_t(state().region->page_of(addr));
}

// Pages of [addr, addr+bytes) that lie in the heap: [first, last).
std::pair<std::uint32_t, std::uint32_t> heap_pages_of(const void* addr, std::size_t bytes) {
  auto& s = state();
  if (!bytes || !s.region || !s.region->contains(addr)) return {0, 0};
  std::uint32_t first = page_index(addr);
  auto end = reinterpret_cast<std::uintptr_t>(addr) + bytes - 1;
  std::uint32_t last = s.region->contains(reinterpret_cast<void*>(end))
                           ? page_index(reinterpret_cast<void*>(end)) + 1
                           : std::uint32_t(s.region->pages());
  return {first, std::min(last, s.heap.allocated.load())};
}

// Heap pages entirely inside [addr, addr+bytes): a page shared with a neighbour's range
// keeps its twin. The rest of an allocation's last page holds nothing, so a range that
// ends where its allocation ends has that page whole (the last block of an array is held).
std::pair<std::uint32_t, std::uint32_t> inner_pages(const void* addr, std::size_t bytes) {
  auto begin = reinterpret_cast<std::uintptr_t>(addr), end = begin + bytes;
  const std::uintptr_t ps = detail::page_size;
  auto lo = (begin + ps - 1) / ps * ps, hi = end / ps * ps;
  if (bytes > 0 && end % ps != 0)
    if (const auto a = detail::allocation_of(reinterpret_cast<const void*>(end - 1));
        a.start && end == reinterpret_cast<std::uintptr_t>(a.start) + a.bytes)
      hi += ps;
  if (hi <= lo) return {0, 0};
  return heap_pages_of(reinterpret_cast<const void*>(lo), hi - lo);
}

// The heap pages [addr, addr+bytes) covers in part (its first and last), with the bytes it
// covers of each.
std::vector<proto::ByteRange> within_edges(const void* addr, std::size_t bytes) {
  auto [first, last] = heap_pages_of(addr, bytes);
  const auto begin = reinterpret_cast<std::uintptr_t>(addr) - reinterpret_cast<std::uintptr_t>(state().region->app());
  const auto end = begin + bytes;
  std::vector<proto::ByteRange> edges;
  for (std::uint32_t p : {first, last - 1}) {
    if (first >= last || (!edges.empty() && edges.back().page == p)) continue;
    const std::uintptr_t at = std::uintptr_t(p) * detail::page_size;
    const auto lo = std::max(begin, at) - at, hi = std::min(end, at + detail::page_size) - at;
    if (lo > 0 || hi < detail::page_size) edges.push_back({p, std::uint16_t(lo), std::uint16_t(hi)});
  }
  return edges;
}

// Publishes this rank's counters and state on the host's statistics board. The board is
// for watching a job: a rank that cannot use it runs on without it.
void open_board(const job::JobEnv& env) {
  auto& s = state();
  try {
    auto board = std::make_unique<board::Board>(env.token, env.size);
    board::Slot& slot = board->slot(env.rank);
    stats::publish_into(slot.stats);
    board::attach(&slot);
    s.board = std::move(board);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsm: rank %d: running without a statistics board: %s\n", env.rank, e.what());
  }
}

}  // namespace

// Seconds a peer may stay silent (DSM_LIVENESS, dsmrun --liveness; 0: never given up):
// long enough for a link down a few seconds, a rank stopped a while or a loaded host to
// recover, short enough that a job whose host is gone ends well within half a minute.
constexpr std::uint64_t default_liveness_s = 10;

// Learns every rank's host name (for the message) and starts watching the peers: one that
// goes silent for `bound` seconds ends this rank, which dsmrun then reports and the job ends.
void watch_peers(std::uint32_t bound) {
  auto& s = state();
  // The name dsmrun placed this rank on (DSM_HOST, where --hosts names it), else the system's.
  char name[256] = {};
  if (const char* placed = std::getenv("DSM_HOST")) std::strncpy(name, placed, sizeof name - 1);
  else gethostname(name, sizeof name - 1);
  const auto mine = std::as_bytes(std::span(name, std::strlen(name)));
  std::vector<std::string> hosts;
  for (const auto& h : s.boot->allgather(mine)) hosts.emplace_back(reinterpret_cast<const char*>(h.data()), h.size());
  if (bound == 0) return;
  s.net->watch_liveness(bound, [hosts = std::move(hosts), bound](int peer, double silent_s) {
    const auto& me = state().me;
    proto::fatal("rank %d on host %s sent nothing for %.1f s, not even a heartbeat (liveness bound %u s, dsmrun "
                 "--liveness): its host is down or cut off, or the rank is stopped. This rank, on host %s, was "
                 "waiting for %s",
                 peer, hosts[std::size_t(peer)].c_str(), silent_s, bound, hosts[std::size_t(me)].c_str(),
                 proto::waiting_for().c_str());
  });
}

void init(int, char**) {
  if (g_initialized) return;
  if (g_finalized) {
    std::fprintf(stderr, "dsm: dsm::init called after dsm::finalize: a process takes part in one job, once\n");
    std::exit(2);
  }
  auto& s = state();
  std::string token;
  try {
    auto env = job::read_job_env();
    token = env.token;
    // Ranks share dsmrun's stdout: whole lines, not 4 KiB blocks cut mid-line.
    if (env.under_dsmrun && !isatty(STDOUT_FILENO)) {
      std::fflush(stdout);
      std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
    }
    s.me = env.rank;
    s.nprocs = env.size;
    if (s.nprocs > 1) net::fabric::load();  // before this rank starts threads (fabric_lib.hpp)
    s.gc.bound = env_size("DSM_GC_BOUND", s.gc.bound);
    s.heap.populate = env_int("DSM_POPULATE", 1, 0, 1) != 0;
    s.ahead.max_write = std::uint32_t(env_int("DSM_WRITE_AHEAD", s.ahead.max_write, 1, 4096));
    mem::tune_heap(env_size("DSM_HEAP_STEP", std::size_t{8} << 20));
    // Ranks that share cores (more ranks than cores on one host) would poll away the CPU
    // the rank they wait for needs: by default they sleep at once. Without dsmrun's count of
    // the ranks on this host, all of them are taken to be here.
    if (int(env_int("DSM_HOST_RANKS", std::uint64_t(s.nprocs), 1, std::uint64_t(s.nprocs))) > sys::host_cpus().count) s.poll_ns = 0;
    s.poll_ns = env_int("DSM_POLL_US", s.poll_ns / 1000, 0, 10'000'000) * 1000;
    s.configured_poll_ns = s.poll_ns;
    s.region = std::make_unique<mem::Region>(env_size("DSM_REGION_BASE", mem::default_base),
                                             env_size("DSM_REGION_SIZE", std::size_t{8} << 30));
    s.intervals.log = proto::IntervalLog(std::uint32_t(s.nprocs));
    s.intervals.whole_runs = proto::WholeRuns(std::uint32_t(s.nprocs));
    s.sync.tokens = std::vector<proto::LockToken>(lock_count);
    s.sync.lock_last.assign(lock_count, 0);
    for (int l = 0; l < lock_count; ++l) {
      s.sync.lock_last[l] = l % s.nprocs;
      s.sync.tokens[l].held = l % s.nprocs == s.me;
    }
    auto& b = s.sync.barrier;
    b.fanout = int(env_int("DSM_BARRIER_FANOUT", proto::default_barrier_fanout, 1, 1 << 20));
    s.sync.direct_push_pages = std::uint32_t(env_int("DSM_DIRECT_PUSH", s.sync.direct_push_pages, 1, 1u << 30));
    // Four tcp hosts: rank 1's halo rows for rank 2 went through rank 0 and crossed the
    // network twice, 1.8x MPI's bytes an iteration where sent straight they cost 1.04x.
    s.sync.relayed_push_pages = std::getenv("DSM_DIRECT_PUSH") || env.provider == "shm" ? s.sync.direct_push_pages : 1;
    // Two ranks on one host send each other their arrivals (barrier.hpp).
    b.exchange = s.nprocs == 2 && env_int("DSM_BARRIER_EXCHANGE", env.provider == "shm", 0, 1) == 1;
    b.members = proto::barrier_children(s.me, s.nprocs, b.fanout);
    b.members.insert(b.members.begin(), s.me);
    b.arrivals.resize(b.members.size());
    b.kept.resize(b.members.size());
    s.balancer.blobs.resize(s.nprocs);
    if (env.under_dsmrun) {
      open_board(env);
      s.boot = std::make_unique<job::Bootstrap>(env);
    }
    if (s.nprocs > 1) {
      s.net = std::make_unique<net::Transport>(env, *s.boot, s.board ? &s.board->slot(s.me).traffic : nullptr);
      const mem::ProtectCost protect = mem::measure_protect_cost();
      s.balancer.protect_seconds = 2 * (protect.fault + protect.close);
      mem::install_fault_handler(s.region->app(), s.region->app() + s.region->capacity(), proto::on_fault);
      s.net->start(proto::handle_message);
      // A rank that never polls would find lazy messages only when its service thread
      // wakes for something else: it always counts as waiting, so they wake it.
      if (s.poll_ns == 0) s.net->set_waiting(true);
      watch_peers(std::uint32_t(env_int("DSM_LIVENESS", default_liveness_s, 0, 86400)));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsm: rank %d: dsm::init failed: %s\n", s.me, e.what());
    // The board was made but dsmrun never reached (gone, or never there): nobody else
    // knows to remove it.
    if (s.board && !s.boot) net::remove_job_segments(token);
    std::exit(1);
  }
  g_initialized = true;
  g_start = wtime();
  // The first sample: whether the core is shared is then known at the first barrier a
  // window later (0.1 s; ranks not bound, up to a few seconds), not one window after it.
  detail::watch_core();
}

void finalize() {
  require_init("dsm::finalize");
  auto& s = state();
  if (s.nprocs > 1) {
    proto::barrier_with(proto::finalize_call);  // a rank still in another collective is named
    // Every rank has its last departure before anyone closes its endpoint.
    s.boot->allgather({});
    s.net->stop_liveness();  // the others leave now
  }
  std::string json;
  if (s.boot) {
    static const net::Traffic no_traffic;  // a single rank sends nothing
    json = "{\"rank\": " + std::to_string(s.me) + ", \"counters\": " +
           board::rank_counters_json(stats::counters(), s.net ? s.net->counters() : no_traffic, wtime() - g_start,
                                     "\"mprotect_calls\": " + std::to_string(s.region->mprotect_calls()) +
                                         ", \"poll_us\": " + std::to_string(s.configured_poll_ns / 1000)) +
           (s.net ? ", \"sent_to\": " + net::sent_to_json(s.net->sent_to()) : "") +
           ", \"sections\": {\"balancer\": " + (g_stats_section ? g_stats_section() : "{}") + "}}";
  }
  board::set_state(board::RankState::finished);
  if (s.nprocs > 1) {
    s.net.reset();
    mem::uninstall_fault_handler();
  }
  if (s.boot) {
    s.boot->report_finalized(json);
    s.boot.reset();
  }
  // The counters stay in the mapping; the name goes if this rank created the board.
  if (s.board) s.board->remove_name();
  g_initialized = false;
  g_finalized = true;
}

// Before dsm::init every process would be rank 0 of 1; after dsm::finalize the job's
// figures still hold (results are often printed by rank 0 then).
int rank() {
  if (!g_finalized) require_init("dsm::rank");
  return state().me;
}
int nprocs() {
  if (!g_finalized) require_init("dsm::nprocs");
  return state().nprocs;
}
int max_locks() { return lock_count; }

void barrier() {
  require_init("dsm::barrier");
  if (state().nprocs > 1) proto::barrier_with(0);
}

void lock_acquire(int id) {
  require_init("dsm::lock_acquire");
  if (id < 0 || id >= lock_count) proto::fatal("dsm::lock_acquire(%d): lock ids run from 0 to %d", id, lock_count - 1);
  auto& s = state();
  bool held;
  {
    std::lock_guard lk(s.mu);
    held = s.sync.tokens[id].in_use;
    // One rank has no protocol to run: the token only records the hold, for the checks.
    if (s.nprocs == 1) s.sync.tokens[id].in_use = true;
  }
  // A second acquire would wait for itself at several ranks (or pass at one), and the
  // release after it would be blamed.
  if (held) proto::fatal("dsm::lock_acquire(%d): this rank holds that lock already (locks are not recursive)", id);
  if (s.nprocs > 1) proto::acquire(id);
}

void lock_release(int id) {
  require_init("dsm::lock_release");
  if (id < 0 || id >= lock_count) proto::fatal("dsm::lock_release(%d): lock ids run from 0 to %d", id, lock_count - 1);
  auto& s = state();
  if (s.nprocs > 1) {
    proto::release(id);
    return;
  }
  if (!std::exchange(s.sync.tokens[id].in_use, false))
    proto::fatal("dsm::lock_release(%d) of a lock this rank does not hold", id);
}

void prefetch(const void* addr, std::size_t bytes, Mode mode) {
  require_init("dsm::prefetch");
  auto& s = state();
  if (s.nprocs == 1) return;
  auto [first, last] = heap_pages_of(addr, bytes);
  if (first >= last) return;
  stats::Timer timer(stats::counters().protocol_ns);
  if (mode == Mode::write_all) {
    // Pages entirely inside the range need neither their old contents nor a twin.
    auto begin = reinterpret_cast<std::uintptr_t>(addr), end = begin + bytes;
    auto base = reinterpret_cast<std::uintptr_t>(s.region->app());
    std::vector<std::uint32_t> whole, partial;
    for (std::uint32_t p = first; p < last; ++p) {
      auto lo = base + std::uintptr_t(p) * mem::page_size;
      (lo >= begin && lo + mem::page_size <= end ? whole : partial).push_back(p);
    }
    {
      std::lock_guard lk(s.mu);
      if (!whole.empty()) proto::take_whole(whole.front(), whole.back() + 1);
      for (auto p : whole)
        if (!s.heap.pages[p].valid) {
          s.heap.pages[p].pending.clear();
          s.heap.pages[p].valid = true;
        }
    }
    proto::make_valid(partial, 0, partial);
    proto::open_for_write(partial, false);
    proto::open_for_write(whole, true);
    return;
  }
  if (mode == Mode::write_exclusive) {
    auto [inner_first, inner_last] = inner_pages(addr, bytes);
    proto::claim(s.me, inner_first, inner_last, false);  // this rank's promise only: not held
  }
  const detail::ByteRun run{addr, bytes};
  if (mode == Mode::read) detail::prefetch_runs({&run, 1}, {});
  else detail::prefetch_runs({}, {&run, 1});
}

void own(int owner, const void* addr, std::size_t bytes) {
  require_init("dsm::own");
  auto& s = state();
  if (owner < 0 || owner >= s.nprocs) proto::fatal("dsm::own(%d, ...): ranks run from 0 to %d", owner, s.nprocs - 1);
  if (s.nprocs == 1) return;
  auto [inner_first, inner_last] = inner_pages(addr, bytes);
  proto::claim(owner, inner_first, inner_last, true);
  if (owner == s.me) prefetch(addr, bytes, Mode::write);  // opens its partial pages too
}

ReadsWithin::ReadsWithin(const void* addr, std::size_t bytes) : addr_(addr), bytes_(bytes) {
  require_init("dsm::ReadsWithin");
  if (state().nprocs > 1) proto::add_within(within_edges(addr, bytes));
}

ReadsWithin::~ReadsWithin() {
  if (g_initialized && state().nprocs > 1) proto::remove_within(within_edges(addr_, bytes_));
}

double wtime() { return stats::now_ns() * 1e-9; }

namespace detail {

bool joined() { return g_initialized; }

void* alloc_bytes(std::size_t count, std::size_t size) {
  require_init("dsm::alloc");
  auto& s = state();
  const std::uint32_t first = s.heap.allocated.load();
  // A negative count arrives as a huge one: refused here, never wrapped to a few pages.
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes) || bytes > s.region->capacity() ||
      std::size_t(first) + (bytes + page_size - 1) / page_size > s.region->pages()) {
    std::fprintf(stderr,
                 "dsm: rank %d: dsm::alloc of %zu objects of %zu bytes does not fit in the shared region "
                 "(%zu MiB, %zu MiB used; a negative count?); set DSM_REGION_SIZE\n",
                 s.me, count, size, s.region->capacity() >> 20, std::size_t(first) * page_size >> 20);
    std::exit(1);
  }
  const auto npages = std::uint32_t((bytes + page_size - 1) / page_size);
  {
    std::lock_guard lk(s.mu);
    s.heap.pages.resize(first + npages);
    s.holds.claims.resize(first + npages);
    s.heap.allocations.push_back({first, npages, bytes});
    s.heap.allocated.store(first + npages);
  }
  // Fresh pages are zero on every rank: valid and read-only, so the first write faults.
  const auto prot = s.nprocs > 1 ? mem::Prot::read : mem::Prot::read_write;
  if (!s.heap.populate || !s.region->populate(first, npages, prot)) s.region->protect(first, npages, prot);
  if (s.nprocs > 1) proto::barrier_with(bytes);
  return s.region->app() + std::size_t(first) * page_size;
}

void note_outside_access(const void* addr, std::size_t bytes) {
  if (!g_initialized || state().nprocs == 1) return;
  auto [first, last] = heap_pages_of(addr, bytes);
  proto::keep_before_change(first, last);
}

void set_barrier_blob(std::vector<std::byte> blob) { state().balancer.my_blob = std::move(blob); }

void set_barrier_hook(void (*hook)()) { state().balancer.hook = hook; }

void set_stats_section_hook(std::string (*section)()) { g_stats_section = section; }

const std::vector<std::vector<std::byte>>& barrier_blobs() {
  auto& s = state();
  if (s.nprocs == 1) s.balancer.blobs[0] = s.balancer.my_blob;
  return s.balancer.blobs;
}

std::uint64_t barrier_count() { return state().sync.epoch; }

void claim_exclusive_write(int owner, const void* addr, std::size_t bytes) {
  auto& s = state();
  if (s.nprocs == 1) return;
  auto [first, last] = heap_pages_of(addr, bytes);
  proto::claim(owner, first, last, true);
}

void prefetch_runs(std::span<const ByteRun> reads, std::span<const ByteRun> writes, bool rereads) {
  auto& s = state();
  if (s.nprocs == 1) return;
  stats::Timer timer(stats::counters().protocol_ns);
  // Pages to fetch (invalid ones) and, of writes, to open.
  std::vector<std::uint32_t> fetch, open;
  for (const auto* runs : {&reads, &writes}) {
    const bool opening = runs == &writes;
    for (const ByteRun& run : *runs) {
      auto [first, last] = heap_pages_of(run.addr, run.bytes);
      // Held pages are valid and writable already: a loop over its own block touches no page.
      if (first < last)
        proto::split_held(first, last, [&](std::uint32_t a, std::uint32_t b, bool held) {
          if (held) {
            if (opening) proto::renew_holds(a, b);
            return;
          }
          for (std::uint32_t p = a; p < b; ++p) {
            proto::prefetch_page(s.heap.pages, p + proto::prefetch_distance);
            // Invalid yet readable: what a dsm::ReadsWithin promise reads of it is up to date.
            const auto& pg = s.heap.pages[p];
            if (!pg.valid && (opening || pg.prot == mem::Prot::none)) fetch.push_back(p);
            if (opening) open.push_back(p);
          }
        });
    }
  }
  // Runs of a strided section may share a page (two columns' blocks in one), and a stencil's
  // read and write share most: each page is fetched once and opened once.
  std::sort(open.begin(), open.end());
  open.erase(std::unique(open.begin(), open.end()), open.end());
  proto::make_valid(std::move(fetch), rereads ? proto::rereads : 0, open);
  proto::open_for_write(open, false);
}

void expect_reader(const void* addr, std::size_t bytes, int rank) {
  auto& s = state();
  if (s.nprocs == 1 || rank == s.me || rank < 0 || rank >= s.nprocs) return;
  auto [first, last] = heap_pages_of(addr, bytes);
  std::lock_guard lk(s.mu);
  proto::expect_reader(first, last, std::uint32_t(rank));
}

std::vector<int> page_writers(const void* addr, std::size_t bytes) {
  auto& s = state();
  auto [first, last] = heap_pages_of(addr, bytes);
  std::vector<int> out;
  for (std::uint32_t p = first; p < last; ++p) out.push_back(s.nprocs == 1 ? 0 : s.heap.pages[p].last_writer);
  return out;
}

bool changed_since(const void* addr, std::size_t bytes, std::uint64_t epoch) {
  auto& s = state();
  if (s.nprocs == 1) return true;  // no page is tracked: anything may have changed
  const auto since = [&](std::uint64_t e) { return e != ~0ull && e >= epoch; };
  auto [first, last] = heap_pages_of(addr, bytes);
  for (std::uint32_t p = first; p < last; ++p) {
    const auto& pg = s.heap.pages[p];
    if (!pg.valid || pg.dirty || pg.held || since(pg.noticed_epoch) || since(pg.written_epoch)) return true;
  }
  return false;
}

bool pages_cross_network() {
  const auto& s = state();
  return s.net && s.net->provider() != "shm";
}

double page_transfer_seconds() { return state().balancer.page_seconds.value(); }

double shared_page_seconds() {
  auto& s = state();
  // Over a network the diff of such a page comes in a fetch of its own at every execution
  // (pushes carry the pages one rank writes), a round trip that the bulk rate of
  // page_transfer_seconds leaves out: over tcp hosts a cut of Jacobi's rows off the page
  // edge cost 0.1-0.3 ms an execution, several times the faults and mprotects alone.
  if (s.balancer.fetch_round_trip < 0) {
    s.balancer.fetch_round_trip = 0;
    if (pages_cross_network()) {
      const int peer = (s.me + 1) % s.nprocs;
      round_trip_seconds(peer);  // the first message to a peer may set up its connection
      std::vector<double> trips(5);
      for (double& t : trips) t = round_trip_seconds(peer);
      std::nth_element(trips.begin(), trips.begin() + 2, trips.end());
      s.balancer.fetch_round_trip = trips[2];
    }
  }
  return s.balancer.protect_seconds + s.balancer.fetch_round_trip;
}

void send_to(int rank, std::span<const std::byte> data) {
  require_init("dsm::detail::send_to");
  proto::send_channel(rank, data);
}

std::vector<std::byte> receive_from(int rank) {
  require_init("dsm::detail::receive_from");
  auto& s = state();
  if (rank < 0 || rank >= s.nprocs || rank == s.me) proto::fatal("a channel message from rank %d", rank);
  stats::Timer wait(stats::counters().comm_wait_ns);
  return proto::wait_channel(rank);
}

void write_received(void* addr, std::span<const std::byte> bytes) {
  require_init("dsm::detail::write_received");
  auto& s = state();
  if (bytes.empty()) return;
  if (!s.region->contains(addr) || !s.region->contains(static_cast<const std::byte*>(addr) + bytes.size() - 1))
    proto::fatal("received bytes for %p, outside the shared region", addr);
  stats::Timer timer(stats::counters().protocol_ns);
  proto::write_received(std::size_t(static_cast<std::byte*>(addr) - s.region->app()), bytes);
}

double round_trip_seconds(int rank) {
  require_init("dsm::detail::round_trip_seconds");
  const std::byte ping[8]{};
  const std::uint64_t t0 = stats::now_ns();
  proto::echo(rank, ping);
  return (stats::now_ns() - t0) * 1e-9;
}

void set_core_shared(bool shared) {
  auto& s = state();
  const std::uint64_t poll_ns = shared ? 0 : s.configured_poll_ns;
  if (!s.net || poll_ns == s.poll_ns) return;
  s.poll_ns = poll_ns;
  // A rank that does not poll counts as waiting at all times (as dsm::init sets it up), and
  // looks once for lazy messages that came before it said so.
  s.net->set_waiting(poll_ns == 0);
  if (poll_ns == 0) s.net->poll();
}

std::optional<std::vector<int>> host_peer_pids() {
  auto& s = state();
  if (!s.board) return std::nullopt;
  std::vector<int> out;
  for (int r = 0; r < s.nprocs; ++r)
    if (const auto pid = s.board->slot(r).pid.load(std::memory_order_relaxed); r != s.me && pid != 0)
      out.push_back(static_cast<int>(pid));
  return out;
}

std::atomic<std::uint64_t>* chunk_word(int r) {
  auto& s = state();
  if (!s.board || r < 0 || r >= s.nprocs) return nullptr;
  board::Slot& slot = s.board->slot(r);
  if (r != s.me && slot.pid.load(std::memory_order_relaxed) == 0) return nullptr;
  return &slot.chunks;
}

bool unheld(const void* addr, std::size_t bytes) {
  auto& s = state();
  if (s.nprocs == 1) return true;
  auto [first, last] = heap_pages_of(addr, bytes);
  for (std::uint32_t p = first; p < last; ++p)
    if (s.holds.claims.holder(p) != -1 || s.holds.claims.owner(p, s.sync.epoch) != -1) return false;
  return true;
}

Extent allocation_of(const void* addr) {
  auto& s = state();
  if (!s.region || !s.region->contains(addr)) return {nullptr, 0};
  auto page = page_index(addr);
  for (const auto& a : s.heap.allocations)
    if (page >= a.first && page < a.first + a.count)
      return {s.region->app() + std::size_t(a.first) * page_size, a.bytes};
  return {nullptr, 0};
}

}  // namespace detail
}  // namespace dsm
