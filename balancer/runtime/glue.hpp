// The balancer's runtime glue inside libdsm (balancer/runtime), shared by its parts: what a
// site and the glue keep between executions, and the steps redistribute() takes. Not a
// public header: of libdsm's sources only the glue sees the decision code's headers.
#pragma once

#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include "blob.hpp"
#include "decide.hpp"
#include "runtime/runtime_hooks.hpp"

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dsm::lb {
namespace runtime {

// Pages (inclusive runs) a rank writes in one execution of a loop.
struct Run {
  long first, last;
  int rank;
};

// Bytes [first, last) of the address space.
struct Bytes {
  std::int64_t first, last;
};

// What a loop that writes a leader's rows (or the leader itself) wrote last.
struct Member {
  std::vector<Section> writes;  // its affine write sections (followers only)
  long lb = 0, ub = 0, step = 1, n = 0;  // bounds of its last execution (followers only)
  std::vector<Run> runs;        // every rank's written pages in its last execution
};

// What the inspector found for a sparse loop's read through an index array (sparse.cpp):
// the pages of the array that this rank's ranges read, while they stay the same.
struct Positions {
  long first = 0, last = 0;  // of the index array, excluded
};
struct Inspection {
  std::size_t section = 0;  // its place among the site's sections
  const void* base = nullptr;
  const void* index = nullptr;
  std::vector<Range> ranges;         // this rank's, when it was made
  std::vector<Positions> positions;  // what each range reads of the index array
  std::uint64_t epoch = 0;           // barrier_count() when it was made
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // byte runs of the array's pages
  long made = 0;                     // inspections of this section so far
};

// What a loop over CSR rows costs, as row_costs last read it from the row bounds (sparse.cpp).
struct RowCosts {
  const void* bounds = nullptr;
  long first = 0, stride = 0, n = 0;  // bounds[first + k * stride]: where iteration k's row starts
  long cells = 0;
  std::uint64_t epoch = 0;  // barrier_count() when read
  std::vector<std::pair<Span, double>> pieces;
};

// What makes loops write "the same rows": equal step, equal bytes advanced per iteration by
// the written sections, and the same first row at the loop's start, a row being what one
// iteration advances (the element index over |coef|, the least over the written arrays).
struct FollowKey {
  long step;
  std::int64_t stride;
  std::int64_t first_row;
  auto operator<=>(const FollowKey&) const = default;
};

// Every rank's spans of an execution cut into chunks on one grid of whole pages of the
// written array, for ranks to take from each other (take.cpp); tail[r]: rank r's first chunk
// that may change hands (the second half).
struct Chunks {
  std::vector<std::vector<Span>> of;
  std::vector<std::uint32_t> tail;
};

}  // namespace runtime

struct Site::State {
  std::string name;
  std::uint64_t id = 0;
  std::optional<Policy> requested;  // the loop's own policy, if it has one
  bool resolved = false;
  SiteModel model;
  std::uint64_t execution = 0;         // executions started
  long lb = 0, ub = 0, step = 1;       // bounds of the last execution
  State* follows = nullptr;            // the loop whose rows this one's ranges follow, if any
  std::deque<runtime::FollowKey> led;  // rows this loop leads others in, newest last (follow.cpp)
  // A leader's group, by site id, itself included: its followers' pages change hands with
  // its own, so its decisions count their writes too, and a page is claimed for one rank
  // only when no other rank writes it in any loop of the group (a boundary loop writing
  // one element of a page the sweep's rank holds would otherwise take the whole page over
  // at every time step, and the sweep take it back).
  std::map<std::uint64_t, runtime::Member> group;
  std::vector<runtime::Inspection> inspections;  // of its reads through index arrays
  std::vector<Range> spans_fetched;              // this rank's ranges when it last fetched its CSR rows
  std::vector<detail::ByteRun> reads_fetched;    // what its sections read at its last execution here
  std::vector<std::vector<runtime::Bytes>> reads_of;  // what they read on each rank then (expect_moving_reads)
  runtime::RowCosts row_costs;                   // of its iterations, over CSR rows
  double started = 0;                  // wtime() at the start of the last execution
  // Glue::starts at the start of its last two executions (0: none), in the program's order.
  std::uint64_t started_at = 0, started_before = 0;
  double period = 0;                   // from the start of the execution before to `started`
  double step_cpu = 0;                 // CPU seconds inside every loop's ranges over `period`
  double cpu_at_start = 0;             // Glue::cpu_in_ranges at `started`
  double in_ranges = 0;                // this rank's wall time inside its ranges, every execution
  bool took = false;                   // its last execution had ranks take work (take.cpp)
  long takes = 0, iterations_taken = 0;  // chunks this rank took, over every execution
};

struct Plan::Taking {
  int me = 0;
  std::uint32_t tag = 0;
  long lb = 0, ub = 0, step = 1;
  runtime::Chunks chunks;
  std::vector<std::uint32_t> limit;                // per rank: its chunks from here on may be taken
  std::vector<std::atomic<std::uint64_t>*> words;  // per rank; nullptr: not takeable from here
  std::vector<Section> accesses;                   // to fetch a taken chunk's pages in bulk
  Options opts;
  bool takes_from_others = true;  // false: runs its own chunks only
  std::vector<Span> handed;  // the span of every range handed out, in order
  long takes = 0, iterations_taken = 0;
};

namespace runtime {

// CPU time of the calling thread (its CPU clock) and the time it spent runnable but waiting
// for its core (another program's load); measure.cpp.
struct SchedTimes {
  double cpu = 0, waiting = 0;
};
SchedTimes sched_times(bool with_waiting);
// Byte hull [first, last) a section touches over the iterations of one range (empty:
// first >= last); apply.cpp.
Bytes hull(const Section& s, const Range& r);
// `runs` in address order, merged where they meet or overlap; apply.cpp.
std::vector<Bytes> merged(std::vector<Bytes> runs);

// The promises of a ReadsInLoops region (read_promises.cpp): disjoint byte runs in address
// order, each a dsm::ReadsWithin.
struct ReadPromises {
  int depth = 0;        // regions open (a function with its own may run inside another's)
  bool blind = false;   // a loop read what no descriptor says: nothing promised until the end
  std::vector<std::pair<Bytes, std::unique_ptr<ReadsWithin>>> runs;
};

// Glue state: the sites alive (for statistics) and the figures not yet carried by a barrier.
struct Glue {
  std::vector<Site::State*> sites;
  std::vector<const Pipeline*> pipelines;
  WriterRuns writers;  // pages written by earlier executions of every site
  std::vector<SiteFigures> pending;
  std::uint64_t starts = 0;  // executions of every site started so far
  double cpu_in_ranges = 0;  // CPU seconds of the application thread inside every loop's ranges so far
  std::vector<std::byte> reduction;  // this rank's part of a reduction finishing at the next barrier
  std::uint64_t pending_barrier = 0;
  // Figures that arrived with barriers, per site and rank: a site's figures travel with the
  // barrier after its loop, and other sites' barriers may follow before it runs again.
  std::map<std::uint64_t, std::vector<SiteFigures>> received;
  std::uint64_t harvested_barrier = 0;
  double page_seconds = 0;     // the median page cost the ranks published last
  double shared_seconds = 0;  // ... and the median cost besides of a page two ranks write
  SchedTimes last_sched;    // of the application thread, at the end of its last loop
  // Its CPU and core-waiting time since it began, each older second weighing e times less
  // (per half second of its running): the share of its core it gets over a time that holds
  // many time slices, where one short loop's reading is all or little.
  SchedTimes got_recent;
  // Whether to read the time spent waiting for the core (a system call at the start and end
  // of every range and at every loop's end): not while the core share says nobody else runs
  // there.
  bool read_waiting = true;
  // Sites that write the same rows of their arrays decide together: the first one decides
  // (the leader) and the later ones give each iteration to the rank that runs the leader's
  // iteration of the same value. So a sweep, its copy-back and the boundary loop over the
  // same rows keep their pages on one rank instead of pulling them back and forth.
  std::map<FollowKey, Site::State*> leaders;
  bool lastprivate = false;  // a reduction with a lastprivate variable precedes the next loop
  std::uint32_t last_take_tag = 0;  // the tag of the last execution where ranks took work (take.cpp)
  // The site whose range the application thread is in: a loop started there (from a function
  // its iterations call) would run only this rank's part of itself for this rank's part of
  // the outer loop.
  const Site::State* running = nullptr;
  ReadPromises promises;
};
Glue& glue();

// The run's balancer options (DSM_LB and friends); a bad setting ends the program.
const Options& run_options();
// Collective, a barrier: every rank's bytes, by rank (this rank's alone at one rank). A
// rank at another barrier shows as an empty part.
std::vector<std::vector<std::byte>> gather(std::vector<std::byte> mine);

inline std::int64_t address(const void* p) { return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p)); }
inline bool writes(const Section& s) { return s.access != Access::read; }

// Loops that write the same rows (follow.cpp).
// The follow key of a loop; none when it has no affine write that advances with the loop.
std::optional<FollowKey> follow_key(std::span<const Section> accesses, long lb, long step);
// The loop that decides for the rows of `key`: the first loop seen to write them, `st`
// itself when it is the first or has no key.
Site::State* leader_of(Site::State& st, const std::optional<FollowKey>& key);
// Whether `st` takes the leader's ranges in this execution instead of deciding itself: it must run
// over the leader's loop values (all but 2 % of them).
bool takes_leaders_ranges(const Site::State& st, const Site::State& leader, int nranks);
// Gives `st` the leader's ranges for the same rows and joins its writes to the leader's group.
void follow_leader(Site::State& st, Site::State& leader, std::span<const Section> accesses, long lb, long step, long n);
// After the leader `st` changed its ranges: its followers' pages as they will write them under
// the new ranges. A follower that runs rarely (a first time step's copy) would otherwise
// keep, until it ran again, the pages of ranges long gone, and no rank could claim them.
void refresh_followers(Site::State& st);
// The geometry a site decides on: its accesses' and its followers' affine writes.
Geometry decision_geometry(const Site::State& st, std::span<const Section> accesses, long n, bool with_holders);

// Ends this rank (status 1) with `dsm: rank R: why` on standard error: the program ran
// differently on different ranks (figures.cpp).
[[noreturn]] void stop_rank(const std::string& why);

// What this rank attaches to the next barrier (measure.cpp).
// Forgets the figures and reduction part that an earlier barrier carried already.
void drop_departed(Glue& g);
// Attaches the figures and the reduction part not yet carried to the next barrier.
void attach_to_barrier(const Glue& g);

// The figures the barriers carry (figures.cpp).
// Keeps what the barriers since the last call carried, after checking that the ranks ran
// the same loops.
void harvest(Glue& g);
// Every rank's figures for the last execution of `st`, when they have all arrived, and the
// page cost every rank will use.
bool gather_figures(const Site::State& st, std::vector<RankFigures>& out, double& page_seconds, double& shared_seconds);

// What an assignment means for the pages (apply.cpp).
// Every rank's written pages in its ranges; none when a write has no descriptor.
std::optional<std::vector<Run>> written_runs(std::span<const Section> accesses, const Assignment& a, long lb, long ub,
                                             long step);
// The pages of `mine` that no other rank writes, in `mine` or in the other members of its
// group (`self` is this loop's entry), as runs per rank.
std::vector<Run> exclusive_runs(const std::vector<Run>& mine, const std::map<std::uint64_t, Member>& group,
                                std::uint64_t self);
// `runs` without the pages of `out_pages` (runs of any ranks).
std::vector<Run> without_pages(const std::vector<Run>& runs, std::vector<Run> out_pages);
// Remembers who writes which pages, for the locality policy of every site.
void record_writes(const std::vector<Run>& exclusive);
// Claims, for every rank, the pages it alone writes in this execution.
void claim_exclusive(const std::vector<Run>& exclusive);
// Bulk fetch of what rank `me`'s ranges under `a` read, bulk opening of what they write: per-page
// faults cost more than the loops (docs/design.md, "What the hardware costs"). `last_reads`:
// what the loop read at its last execution here, replaced by what it reads now; reads equal
// to them ask the writers to push their next changes.
void prefetch_sections(std::span<const Section> accesses, const Assignment& a, long lb, long ub, long step, int me,
                       const Options& o, std::vector<detail::ByteRun>& last_reads);
// Registers the other ranks as readers of the pages this rank writes (`written`, every
// rank's runs) that their reads, moving by the same bytes at every execution, will read at
// the next one; `last_reads`: each rank's read runs at the last execution. Up to
// max_predicting_ranks ranks: every rank computes every rank's reads.
inline constexpr std::size_t max_predicting_ranks = 16;
void expect_moving_reads(std::span<const Section> accesses, const Assignment& a, long lb, long ub, long step, int me,
                         const Options& o, std::span<const Run> written, std::vector<std::vector<Bytes>>& last_reads);
// Whether no rank holds, or has claimed since the last barrier, a page that `r` writes.
bool writes_unheld(std::span<const Section> accesses, const Range& r);
// Inside a ReadsInLoops region, what `ranges` read of `accesses` becomes part of this rank's
// promise before they run (a no-op outside one); a loop whose reads no descriptor bounds, or
// a pipelined nest (forget_reads), ends the region's promises.
void promise_reads(std::span<const Section> accesses, std::span<const Range> ranges);
void forget_reads();
// Bulk fetch and opening of what a chunk taken from another rank reads and writes.
void prefetch_taken(std::span<const Section> accesses, const Range& r, const Options& o);
// The same for a sparse loop's reads through an index (through sections, sparse.cpp): the
// pages its ranges read, as the inspector finds them.
void prefetch_sparse(Site::State& st, std::span<const Section> accesses, const std::vector<Range>& mine);

// What the iterations of a loop over CSR rows cost relative to each other (sparse.cpp): a
// row's nonzeros and one for the row, summed over 64 cells of the loop a rank, read from
// the row bounds of its first span whose rows follow one another. Empty for a loop without
// one, or bounds that leave their allocation or shrink. Every rank reads the same values
// after the same barrier, and so gives its site the same costs.
std::vector<std::pair<Span, double>> row_costs(Site::State& st, std::span<const Section> accesses, long lb, long step,
                                               long n, int nranks);

// Work taken inside an execution (take.cpp).
// Whether this execution of `st` has ranks take work from each other: the run's option, a
// loop that decides its own ranges over affine writes, split over the ranks, and no
// lastprivate variable (the last iteration's value must come from the rank that ran it).
bool takes_work(const Site::State& st, std::span<const Section> accesses, bool follows, int nranks);
// Every rank's spans under `a` cut into chunks (see Chunks).
Chunks cut_chunks(const Assignment& a, std::span<const Section> accesses);
// The spans of every rank's tail chunks.
Assignment tails(const Chunks& c);
// Whether the tails' pages (`tail_pages`), written with twins and diffs at every execution,
// cost little beside the slowest rank's time in the last one: at most a twentieth. Not
// before the loop was measured; always under DSM_LB_TAKE=always; never for more chunks a
// rank than its word counts.
bool take_pays(const SiteModel& m, const Chunks& chunks, const std::vector<Run>& tail_pages);
// Claims the pages of `runs` for two owners: no rank writes them whole, and holds of them end.
void contest(const std::vector<Run>& runs, int nranks);
// This rank's plan state for a taking execution (execution `tag` of every site's, the same
// on every rank) of a site decided by `m`; sets up the words of the host's ranks. Before the execution's claims: a
// tail chunk may be taken only where no rank held its written pages before them.
std::unique_ptr<Plan::Taking> start_taking(Chunks chunks, std::span<const Section> accesses, long lb, long ub, long step,
                                           std::uint64_t tag, const SiteModel& m);
// The next chunk this rank runs: its own, else one taken; false when none is left.
bool take_next(Plan::Taking& t, Range& out);
// At the plan's end: own chunks a loop left early are nobody's to take.
void finish_taking(Plan::Taking& t);
// A taking plan's figures per chunk, in handing-out order, folded into the spans it ran.
void fold_ran(const Plan::Taking& t, std::vector<double>& taken, std::vector<double>& cpu, std::vector<Span>& ran);
// After a taking execution: what every rank ran becomes the site's split, when the figures
// tile its iterations. Returns whether the split changed.
bool adopt_taken(Site::State& st, const std::vector<RankFigures>& figs);

// What the balancer reports (stats.cpp).
// DSM_LB_TRACE=1: rank 0 prints every change of a deciding site; 2: every execution's figures.
int trace_level();
void trace(const Site::State& st, const std::vector<RankFigures>& figs, bool moved);
// DSM_LB_TRACE_CSV=FILE: rank 0 writes a line per rank for every measured execution of every
// deciding loop (followers take their leader's ranges and write none): when it was decided
// on (seconds since the epoch), the loop, the execution measured (from 0), the rank, its
// iterations and seconds inside its ranges then, the execution's period (start to next
// start, barriers included), the rank's power after it, whether the loop's ranges changed
// for the next one, and how many of its iterations it took from other ranks. `ran`: the
// spans the figures measured; `decided`: the split decided for them, where ranks took work
// from each other (else empty).
bool trace_csv_on();
void trace_csv(const Site::State& st, const Assignment& decided, const Assignment& ran,
               const std::vector<RankFigures>& figs, bool moved);
// The balancer's part of the statistics of `dsmrun --stats`.
std::string stats_json();

}  // namespace runtime
}  // namespace dsm::lb
