// The balancing decision: relative power (paper Fig. 1) with hysteresis, rate filtering and a
// cost/benefit check, and the policies that turn powers into new spans. One SiteModel per
// loop site; every rank feeds it the same figures and so computes the same assignment.
#pragma once

#include "filter.hpp"
#include "model.hpp"
#include "pages.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace dsm::lb {

// Executions whose figures make one rate sample.
inline constexpr std::size_t rate_window = 8;

// Beginnings of lasting imbalances remembered per site.
inline constexpr std::size_t kept_breaks = 4;

// Changes whose measured cost is remembered, and executions after a change that measure it.
inline constexpr std::size_t kept_change_costs = 5;
inline constexpr int change_watch = 4;

// A streak out of balance this long is evidence enough however short the executions (five
// rate windows): Options::evidence in seconds would hold back a loop of fine executions for
// hundreds of them. Under new bounds (a factorization's steps, whose work drifts between the
// ranks as the bounds shrink).
inline constexpr int evidence_executions = 5 * static_cast<int>(rate_window);
// ... and under the same bounds, where an imbalance with no known cause is most often a swing
// of the cores' speeds: across two unloaded tcp hosts they swung by 10-60 % for up to a few
// tenths of a second, and Jacobi's 3.5 ms executions passed 40 of them within each swing.
inline constexpr int steady_evidence_executions = 20 * static_cast<int>(rate_window);

// A load that turns (another program begins or ceases to share a rank's core) at intervals
// shorter than this many times the balancer's reaction (decide.cpp, reaction_seconds) is
// not followed: each turn would run most of its time on the last turn's split, and pay the
// pages of two changes.
inline constexpr double turning_reactions = 4;
// ... where changes have measured to cost more than this many times their pages' estimate
// (where they cost what their pages say, following short turns pays).
inline constexpr double turning_change_cost = 2;

// Executions for which what a change against an imbalance with no known cause saved is
// remembered (SiteModel::change_savings): one that saved nothing holds such changes back
// this long, after which one may be tried again.
inline constexpr long saving_memory = 4096;

// Executions whose rates give a rank's speed with its core its own (SiteModel::own_recent),
// and the share of its time in its ranges that its thread must have run for one to count.
inline constexpr std::size_t own_window = 32 * rate_window;
inline constexpr double own_cpu_share = 0.9;

// Most a change's saving is scaled by the periods' stretch over the ranks' times
// (SiteModel::stretches).
inline constexpr double max_stretch = 4;

// Page cost assumed until the runtime has measured one (seconds).
inline constexpr double default_page_seconds = 20e-6;

// One rank alone (SiteModel::Solo): tried where the median of the split's last solo_window
// periods is more than solo_ratio times the work all ranks did in them and that excess, over
// the executions the
// split is expected to last, would pay for the trial's pages there and back (decide.cpp,
// trial_pays), judged over solo_trial periods after
// solo_lag executions (the figures come two late, then the first execution fetches the
// pages), kept where their median is below solo_gain of the split's, given up at once on a
// period above solo_losing times the split's; a trial that lost comes again after
// solo_retry executions, twice as many after each loss.
inline constexpr double solo_ratio = 2;
// A median over this many periods, so that the machine's stalls do not put a loop on trial:
// across two hosts, Jacobi's periods ran 11-24 ms for a few dozen executions where its work
// took 3 ms, and a median of 8 sent the arrays to one rank and back (the bytes per iteration
// of a run of 4000 doubled), or kept them there when the stall ended during the trial.
inline constexpr std::size_t solo_window = 8 * rate_window;
inline constexpr std::size_t solo_trial = 6;
inline constexpr long solo_lag = 3;
inline constexpr double solo_gain = 0.8;
inline constexpr double solo_losing = 4;
inline constexpr long solo_retry = 512;

// What the last execution's decision came to, for DSM_LB_TRACE=2.
enum class Verdict {
  idle,      // nothing to decide: static, new bounds, no figures yet, or a loop of few pages
  balanced,  // within the threshold, and no written page to gain
  waiting,   // out of balance, not yet for long enough (warm-up, settle, evidence)
  declined,  // a proposal for the same powers was declined before
  kept,      // the proposal is the present spans (moving pages would not pay over the horizon)
  futile,    // the proposal saves nothing, or moves less than min_move
  dear,      // its pages cost more than it saves over the horizon (cost/benefit)
  turning,   // a load turns faster than changes follow it: the split stays at the ranks' own speeds
  changed,
  undone,    // back to the spans before the last change, which saved nothing and shares more pages
  trying,    // one rank runs the loop alone, to measure whether that is faster than the split
  alone,     // one rank runs the loop alone: measured faster than the split
};
const char* verdict_name(Verdict v);

struct SiteModel {
  Options opt;  // opt.policy is resolved (never automatic)
  long n = -1;
  Assignment assign;
  std::vector<RateFilter> filters;  // per rank
  std::vector<double> speed;        // filtered work per second, 0 = never measured
  // Per rank, (work, seconds) of the last executions since the last change (at most
  // rate_window): a rank sharing its core gets it at once in some executions and waits a
  // time slice for it in others, so one execution says little and their sum says more.
  std::vector<std::vector<std::pair<double, double>>> recent;
  // fgdls: CPU seconds measured inside each span of `assign`, summed over `window` executions.
  std::vector<std::vector<double>> span_cpu;
  int window = 0;
  int observed = 0;  // usable executions since the start or the last change
  int streak = 0;    // consecutive usable executions that found the ranks out of balance
  // The slowest rank's period (all ranks sent one) and its time in its ranges, per execution
  // of the present spans, at most rate_window: a period runs longer than the ranges of its
  // slowest rank by the loops that follow the site's split and by that rank's waits for its
  // core, which shrink with its share where another program shares the core.
  std::vector<std::pair<double, double>> stretches;
  double clock = 0;         // seconds of the site's executions so far (periods, or the slowest
                            // rank's time in its ranges where no period came)
  double streak_began = 0;  // `clock` when the present streak began
  int skip = 1;      // executions still to discard (cold pages after a start or a change)
  // Powers at the last proposal that changed nothing (the same spans, too small a move, or
  // not worth its pages) and `observed` then: the same powers give the same proposal, so
  // none is made (a scan of the loop's pages) until they move by more than half the
  // threshold or `observed` doubles (the cost/benefit check counts on it).
  std::vector<double> declined;
  int declined_at = 0;
  // Executions at which the last lasting imbalances began (a streak out of balance long
  // enough to act on), at most kept_breaks: how often the system changes (Siegell's thesis, section 5.6.2).
  std::vector<long> breaks;
  // An imbalance that goes on from a change that fell short (a loaded rank's rate falls
  // with its share) is the same state, not a break: counted as one, it made a constant load
  // look like it turned every few executions. It is a break when the ranks were found in
  // balance since the last change or break (`calm`), or when the slowest rank is now
  // another than the one the last change gave less (`short_rank`; a load that left).
  bool calm = true;
  int short_rank = -1;
  // What changes really cost: the page cost the check estimates (pages at the bulk fetch's
  // cost) leaves out the ranks waiting for each other while pages move, the diffs, twins and
  // protections that follow. So the first change_watch executions after a change are timed
  // whole (the slowest rank's period, start to start) against the median of the rate_window
  // periods that follow them, the new spans settled: the periods before a change ran under
  // other spans and often another load (the load that made the change worth it, biting
  // harder since), and taken as the baseline they charged the load to the change. A change
  // is judged at the median ratio of measured to estimated cost of the last few (at least 1).
  double change_estimate = 0;      // estimated cost of the change being watched (0: none)
  long change_at = 0;              // execution (executions' count) its spans first ran in
  std::vector<double> after;       // periods since then, oldest first
  std::vector<double> change_costs;  // measured / estimated, last kept_change_costs changes
  // What changes made against an imbalance with no known cause (no other program shares the
  // slowest rank's core) really saved: the median period before the change less the settled
  // one after it, over the saving it counted on (in [0, 1]), last kept_change_costs such
  // changes. Over tcp, core 0 also takes the network's soft interrupts and measures slower
  // per row; after a change its speed moved with its rows and the periods stayed where they
  // were, and the next change chased the same noise.
  double saving_counted = 0;  // per period, by the change being watched (0: not judged)
  double period_before = 0;   // median period of the spans it replaced
  std::vector<std::pair<double, long>> change_savings;  // (saved / counted, `executions` then)
  // The spans such a change replaced, and whether it measured to save nothing: where they
  // share fewer written pages, the split goes back to them. Across two unloaded tcp hosts,
  // Jacobi's rows moved off the page edge for a swing of the cores' speeds (10-15 % for a few
  // tenths of a second); the periods after ran longer, not shorter, and the page both ranks
  // then wrote cost a page of diff an execution (14 % more bytes) for the rest of the run.
  Assignment replaced;
  long replaced_n = -1;
  bool undo = false;
  long undone_at = -1;  // `executions` at the last undo: such changes are held back saving_memory
  // The page facts of the geometry last decided on, and that geometry: a loop that runs in
  // place writes the same pages, last written by the same ranks, execution after execution.
  std::optional<std::pair<Geometry, IterationPages>> pages;
  // Per rank, the rates of its last executions (at most own_window) in which no other
  // program shared its core: under a load that turns faster than changes follow it, the
  // split follows their medians (decide.cpp, own_speeds).
  std::vector<std::vector<double>> own_recent;
  std::vector<double> own_clock;  // `clock` at each rank's last such execution
  // `clock` when the figures last said another program began or ceased to share some
  // rank's core (at most kept_breaks): the load's own turns, which imbalances of noise
  // inside a long turn do not add to.
  std::vector<double> turns;
  bool turning = false;  // such a load comes and goes (decide.cpp, update_turning)
  long turning_since = 0;  // execution of the first turn it was found from
  // What iterations cost relative to each other where the runtime can tell (a CSR row by its
  // nonzeros): pieces covering [0, n) in order, each with its work; empty: one unit an
  // iteration (the paper's model). Speeds are work per second, and cuts share the work.
  std::vector<std::pair<Span, double>> costs;
  // New costs from set_costs, in force from the next execution, which splits anew (the
  // figures it receives were measured under the old ones).
  std::optional<std::vector<std::pair<Span, double>>> new_costs;
  Verdict verdict = Verdict::idle;
  double horizon = 0;  // executions the last proposal was judged over (expected stability; read by propose)
  // What an execution's time in ranges saved is worth in its period for the last proposal
  // (decide.cpp, period_stretch, where the slowest rank shares its core; else 1; read by
  // propose).
  double stretch = 1;
  // Statistics.
  long executions = 0, redistributions = 0, iterations_moved = 0, pages_moved = 0;
  std::vector<double> last_wall, last_cpu;  // per rank, last execution with figures
  std::vector<char> core_shared;            // per rank, from the last figures
  std::vector<double> core_got;             // per rank, RankFigures::share of the last figures
  // Per rank: out of the computation while another program shares its core and it is far
  // slower than the fastest (opt.leave): no iterations until its core is its own again.
  std::vector<char> left;
  // Loop values of index 0 and between indices of `assign` (the geometry's, under locality):
  // under new bounds an iteration value stays with the rank that ran it.
  long lb = 0, step = 1;
  // A loop whose periods cost far more than the work of all ranks in them (the pages and
  // waits of the split: a factorization's column read by every rank, a tiny loop between
  // barriers) may run faster on one rank alone, which only measuring tells: it is tried there.
  struct Solo {
    enum class Stage { watching, trying, alone, split } stage = Stage::watching;
    int rank = 0;
    // The rank other loops run alone on (-1: none), which a trial takes: loops that share a
    // column go to one rank, or every step moves it between them (gramschmidt's Q column
    // written alone on one rank and read alone on the other: 49 s against 4.8).
    int prefer = -1;
    long since = 0;    // `executions` when the stage began
    int failures = 0;  // trials lost
    // The split's last periods (the slowest rank's) and the ranks' work over each (their CPU
    // inside every loop's ranges), at most solo_window; the trial's periods.
    std::vector<double> periods, work, tried;
    // The split a trial left and what the ranks' speeds were then: a trial's executions
    // measure one rank fetching every page, and taken for its speed they sent a split of
    // Jacobi back at 82 % and 18 % of the rows (over tcp), then changes to undo it.
    Assignment split;
    std::vector<double> speed;
    std::vector<RateFilter> filters;
  } solo;
};

// auto: locality when every written array has an affine descriptor (pages are known),
// fgdls otherwise (nothing to keep local; costs may be irregular).
Policy resolve_policy(Policy requested, bool affine_writes, bool whole_writes);

// One execution of a site with n iterations over nranks ranks. `figures` are the previous
// execution's (one per rank; nullptr if none arrived: nothing changes then). Every input
// must be the same on every rank (page_seconds and the holders in g included).
// `page_seconds`: what fetching a page in bulk costs (0: not measured yet);
// `shared_seconds`: what a page two ranks write costs each at every barrier besides moving
// its diff (detail::shared_page_seconds). Returns the spans of every rank.
const Assignment& next_execution(SiteModel& m, long n, int nranks, const std::vector<RankFigures>* figures,
                                 const Geometry& g, double page_seconds, double shared_seconds = 0);

// Gives the site what its iterations cost (SiteModel::costs), before next_execution. Costs
// that differ from the last ones split the loop anew at the next execution, at the ranks'
// powers once they are measured: the work moved, not the ranks' speeds.
void set_costs(SiteModel& m, std::vector<std::pair<Span, double>> costs);

// Spans each rank ran where work was taken inside the execution (a rank that ran out took
// iterations from another's tail): they become the site's spans, so that the pages stay
// with the rank that wrote them last and what was taken is not taken again; the figures of
// the next call describe them. A split learnt from what ran, as affinity scheduling keeps
// a processor's last iterations (Markatos and LeBlanc).
void adopt_ran(SiteModel& m, Assignment ran);

// Measured cost of a change over its page estimate (median of the last few; 1 before any).
double change_cost_factor(const SiteModel& m);

// What changes against imbalances with no known cause saved over what they counted on
// (median of the last few of the last saving_memory executions; 1 before any).
double change_saving_factor(const SiteModel& m);

// Normalized relative power of every rank (sums to 1); equal before any measurement.
std::vector<double> relative_power(const SiteModel& m);

}  // namespace dsm::lb
