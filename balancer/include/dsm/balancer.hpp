// Loop balancing API: what dsm-pass generates calls to, and what a person may call by hand.
//
//   static dsm::lb::Site site("jacobi.cpp:23");
//   const dsm::lb::Section acc[] = {
//       dsm::lb::section(sh_b, dsm::lb::Access::write, n, 1, n - 2),
//       dsm::lb::section(sh_a, dsm::lb::Access::read, n, -n + 1, n + n - 2)};
//   for (const dsm::lb::Range& r : dsm::lb::redistribute(site, 1, n - 1, 1, acc))
//     for (long i = r.lb; i < r.ub; i += r.step) body(i);
//
// redistribute() is collective: every rank calls it for the same site in the same order
// with the same bounds and descriptors, and every rank computes the same distribution
// from the statistics carried by the last barrier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dsm::lb {

enum class Access : std::uint8_t { read = 1, write = 2, read_write = 3 };

// Regular section descriptor of one array reference in the loop body: at iteration i the
// reference touches elements [coef*i + lo, coef*i + hi] (inclusive) of the array at `base`.
// whole = true means the pass could not prove an affine subscript: the whole allocation
// holding `base` may be touched.
struct Section {
  const void* base = nullptr;
  std::size_t elem_size = 0;
  Access access = Access::read;
  long coef = 0;
  long lo = 0;
  long hi = 0;
  bool whole = false;
};

template <class T>
Section section(const T* base, Access access, long coef, long lo, long hi) {
  return Section{base, sizeof(T), access, coef, lo, hi, false};
}
template <class T>
Section whole_array(const T* base, Access access) {
  return Section{base, sizeof(T), access, 0, 0, 0, true};
}

// Iterations lb, lb+step, ... below ub.
struct Range {
  long lb;
  long ub;
  long step;
};

enum class Policy { static_blocks, shift, multi, locality, fgdls, automatic };
// Policies by the names dsmrun --lb and DSM_LB take: static, shift, multi, locality, fgdls,
// auto. parse_policy throws std::invalid_argument naming `what` (the option or variable the
// name came from) for any other name; policy_name gives "?" for a value that is no policy.
Policy parse_policy(const std::string& name, const std::string& what);
const char* policy_name(Policy p);

// One marked loop. Created once (a function-local static) and reused by every execution.
class Site {
 public:
  // `policy`: this loop's own policy, which wins over the run's (dsmrun --lb, DSM_LB);
  // without it the run's policy decides.
  explicit Site(std::string name, std::optional<Policy> policy = std::nullopt);
  ~Site();
  Site(const Site&) = delete;
  Site& operator=(const Site&) = delete;
  struct State;
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// The ranges this rank runs in one execution of a site. Iterating it times the work done
// inside each range (not waiting); the figures travel with the next barrier.
class Plan {
 public:
  class iterator;
  Plan(Site& site, std::vector<Range> ranges);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  iterator begin();
  iterator end();
  const std::vector<Range>& ranges() const { return ranges_; }

  class iterator {
   public:
    const Range& operator*() const;
    const Range* operator->() const { return &**this; }
    iterator& operator++();
    bool operator!=(const iterator& o) const { return index_ != o.index_; }
    bool operator==(const iterator& o) const { return index_ == o.index_; }

   private:
    friend class Plan;
    iterator(Plan* plan, std::size_t index) : plan_(plan), index_(index) {}
    Plan* plan_;
    std::size_t index_;
  };

 private:
  friend class iterator;
  void range_started(std::size_t index);
  void range_finished(std::size_t index);
  void publish();
  Site* site_;  // nullptr once moved from
  std::vector<Range> ranges_;
  // Seconds inside each range: wall, CPU of this thread, and runnable but waiting for a core.
  std::vector<double> wall_, cpu_, waiting_;
  double started_ = 0, cpu_started_ = 0, waiting_started_ = 0;
  bool open_ = false;
};

Plan redistribute(Site& site, long lb, long ub, long step, std::span<const Section> accesses);

// dsm-pass wraps each write to an sh_ array outside marked loops (code that every rank
// runs) as written(sh_a[i]) = ...: the element is returned unchanged once the runtime has
// kept what other ranks must still read there. A rank holding a page across barriers
// writes it without a fault; without this, a rank fetching the page before its next
// acquire would see the write (an update run on every rank would be applied twice).
}  // namespace dsm::lb

namespace dsm::detail {
void note_write(const void* addr, std::size_t bytes);  // in libdsm (runtime.cpp)
}

namespace dsm::lb {

template <class T>
T& written(T& element) {
  detail::note_write(&element, sizeof element);
  return element;
}

}  // namespace dsm::lb
