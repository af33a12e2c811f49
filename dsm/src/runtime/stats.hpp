// Per-rank protocol statistics, reported to dsmrun at finalize (dsmrun --stats) and, while
// the job runs, published on the host's statistics board (board.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace dsm::stats {

// X-macro so that the counter list, the JSON names and the reset stay one list.
// `diffs_deferred`: changes of pages written from zero kept as the page instead of a diff
// larger than it, diffed only when asked for (then counted in diffs_created). `sleeps`:
// waits for a message that slept, after the poll budget (DSM_POLL_US) or at once;
// `shared_core_waits`: those of them that slept at once because other programs took CPU time
// the rank needed (set_core_shared). `pages_pushed_in_part`: pushes of the bytes alone that
// their reader reads (dsm::ReadsWithin), counted in pages_pushed too; `pages_pushed_direct`:
// those that went straight to their reader in a message of their own (DSM_DIRECT_PUSH).
#define DSM_COUNTERS(X)                                                          \
  X(read_faults) X(write_faults) X(twins) X(diffs_created) X(diff_bytes_created) \
  X(diffs_deferred) X(diffs_applied) X(diff_bytes_applied) X(whole_pages_sent)   \
  X(pages_fetched) X(fetch_requests) X(lock_acquires) X(barriers) X(gcs)         \
  X(protocol_bytes_peak) X(pages_pushed) X(pages_pushed_in_part)                 \
  X(pages_pushed_direct) X(sleeps) X(shared_core_waits)
#define DSM_TIMERS(X) X(protocol) X(comm_wait) X(lock_wait) X(barrier_wait)

struct Counters {
#define DSM_DECLARE(name) std::atomic<std::uint64_t> name{0};
  DSM_COUNTERS(DSM_DECLARE)
#undef DSM_DECLARE
#define DSM_DECLARE(name) std::atomic<std::uint64_t> name##_ns{0};
  DSM_TIMERS(DSM_DECLARE)
#undef DSM_DECLARE
};

// The rank's counters: its own, or the ones publish_into() moved them to.
Counters& counters();
// Moves the rank's counters to `into` (its board slot, which must outlive every use of
// them): copies what was counted so far; everything after counts there.
void publish_into(Counters& into);
void copy(const Counters& from, Counters& to);

std::uint64_t now_ns();

// Adds the time from construction to destruction to one timer, minus the time spent in
// timers nested inside it on the same thread, so the timers never count a moment twice.
class Timer {
 public:
  explicit Timer(std::atomic<std::uint64_t>& into);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  std::atomic<std::uint64_t>& into_;
  Timer* parent_;
  std::uint64_t start_;
};

// {"name": value, ...} of every counter, with times in seconds and `extra` fields appended
// (extra: text of further "key": value pairs, or empty).
std::string counters_json(const Counters&, double total_seconds, const std::string& extra);

}  // namespace dsm::stats
