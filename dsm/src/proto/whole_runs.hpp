// Pages whose one pending change is another rank's whole page, kept as runs per writer.
//
// A rank that holds a block announces it whole at every barrier, so every other rank would
// renew the pending notice of each of its thousands of pages, barrier after barrier (a miss
// to memory per page). Kept here, a renewal costs
// one update per run; the page's own notice gets the interval again only when something
// looks at it (take).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace dsm::proto {

class WholeRuns {
 public:
  explicit WholeRuns(std::uint32_t nprocs) : per_(nprocs) {}

  // Pages [first, end) changed whole in interval idx of `proc`: the parts already listed for
  // `proc` take idx; the others are passed to `other(first, end)` in page order.
  void renew(std::uint32_t proc, std::uint32_t first, std::uint32_t end, std::uint32_t idx,
             const std::function<void(std::uint32_t, std::uint32_t)>& other);
  // Lists [first, end) (listed for no rank) as pending whole from interval idx of `proc`.
  void add(std::uint32_t proc, std::uint32_t first, std::uint32_t end, std::uint32_t idx);
  // Unlists [first, end) for every rank, calling `listed(page, proc, idx)` for each page
  // that was listed, with the interval it was listed at.
  void take(std::uint32_t first, std::uint32_t end,
            const std::function<void(std::uint32_t, std::uint32_t, std::uint32_t)>& listed);
  bool empty() const;
  // Runs listed, over all ranks: a run renewed whole again and again stays one run.
  std::size_t run_count() const;

 private:
  struct Run {
    std::uint32_t end, idx;
  };
  using Runs = std::map<std::uint32_t, Run>;  // by first page; disjoint
  // Splits the run containing `page` (if any) so that a run starts at `page`.
  static void split_at(Runs& runs, std::uint32_t page);
  // Joins the runs around [first, end) with equal neighbours.
  static void join(Runs& runs, std::uint32_t first, std::uint32_t end);
  std::vector<Runs> per_;
};

}  // namespace dsm::proto
