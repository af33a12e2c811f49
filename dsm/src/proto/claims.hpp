// Claims of pages for exclusive writing (dsm::own, the balancer's exclusive writes) and the
// epochs in which this rank last renewed its holds: one entry per page of the heap.
//
// dsm::own is collective, so every rank records every rank's claims: page by page, every
// step of a loop would walk the whole arrays it claims, a cost that stays the same at any
// number of ranks while each rank's share of the work shrinks. A loop claims the same
// blocks at every execution, so a claim that ended the same on every page of a long stretch
// (one owner, also its holder) is kept as a run: claiming the run again for that owner, or
// renewing holds over all of it, is one update. Only claims that change owners, or cover
// pages no run lists, go page by page. The entries lie apart from Page: a walk over them
// streams, where one over Page's second cache lines waits on a miss to memory per page.
// Application thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace dsm::proto {

class ClaimTable {
 public:
  // Entries for pages [0, pages) at least (the table never shrinks): new ones unclaimed, unheld.
  void resize(std::uint32_t pages);

  // Records `owner`'s claim of [first, last) for barrier epoch `epoch`. A page claimed for
  // another owner in `epoch`, or (first claim in `epoch`) whose holder is another rank, is
  // contested: no owner in `epoch`, no holder. `contested(page, holder)` is called for each
  // page that becomes contested, in page order, with the holder it had. A collective claim
  // (dsm::own) makes `owner` the holder of the pages it does not contest.
  void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective, std::uint64_t epoch,
             const std::function<void(std::uint32_t, int)>& contested);
  // The owner of `page` in `epoch`: -1 unclaimed, -2 contested.
  int owner(std::uint32_t page, std::uint64_t epoch) const {
    const Entry& e = pages_[page];
    return (e.run == no_run ? e.epoch : runs_[e.run].epoch) == epoch ? e.owner : -1;
  }
  // The owner of the last collective claim of `page`, while uncontested (-1: none).
  int holder(std::uint32_t page) const { return pages_[page].holder; }

  // The last epoch in which this rank renewed its hold of `page` (0: never).
  std::uint64_t held_epoch(std::uint32_t page) const {
    const Entry& e = pages_[page];
    return e.run == no_run ? e.held_epoch : std::max(e.held_epoch, runs_[e.run].held_epoch);
  }
  // Renews holds of `page`, or of [first, last), in `epoch` (epochs only grow).
  void renew(std::uint32_t page, std::uint64_t epoch) { pages_[page].held_epoch = epoch; }
  void renew(std::uint32_t first, std::uint32_t last, std::uint64_t epoch);

  // For tests: the runs kept, and the pages the claims walked one at a time so far (those
  // they claimed or detached from a run; not the second step over a stretch that becomes one).
  std::size_t run_count() const { return by_first_.size(); }
  std::uint64_t pages_walked() const { return walked_; }

 private:
  static constexpr std::uint32_t no_run = ~0u;
  struct Entry {
    std::uint64_t epoch = ~0ull;  // the epoch `owner` is for (while in no run)
    std::int32_t owner = -1;
    std::int32_t holder = -1;
    std::uint64_t held_epoch = 0;  // in a run: the run's held_epoch counts too
    std::uint32_t run = no_run;    // index in runs_
  };
  // Pages [first, last), each with Entry::run pointing here and owner == holder == owner.
  struct Run {
    std::uint32_t first, last;
    std::int32_t owner;
    std::uint64_t epoch;       // stands for the pages' Entry::epoch
    std::uint64_t held_epoch;  // renewed for all its pages at once
  };
  using RunMap = std::map<std::uint32_t, std::uint32_t>;  // first page -> run index; runs are disjoint
  // The first run that ends after `page` (it may begin after it too).
  RunMap::const_iterator first_ending_after(std::uint32_t page) const;
  // The run indices of the runs overlapping [first, last), in page order.
  std::vector<std::uint32_t> overlapping(std::uint32_t first, std::uint32_t last) const;
  // Takes [first, last) out of run r: those pages get the run's values in their entries.
  void detach(std::uint32_t r, std::uint32_t first, std::uint32_t last);
  // Leaves run r outside [first, last): keeps its larger part outside, detaches the rest.
  void trim(std::uint32_t r, std::uint32_t first, std::uint32_t last);
  // Claims [first, last) of pages in no run page by page; stretches it leaves uniform become runs.
  void claim_pages(int owner, std::uint32_t first, std::uint32_t last, bool collective, std::uint64_t epoch,
                   const std::function<void(std::uint32_t, int)>& contested);
  void add_run(std::uint32_t first, std::uint32_t last, int owner, std::uint64_t epoch);

  std::vector<Entry> pages_;
  std::vector<Run> runs_;  // slots; freed ones are reused
  std::vector<std::uint32_t> free_;
  RunMap by_first_;
  std::uint64_t walked_ = 0;
};

}  // namespace dsm::proto
