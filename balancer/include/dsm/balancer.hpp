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

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace dsm::lb {

enum class Access : std::uint8_t { read = 1, write = 2, read_write = 3 };

// Regular section descriptor of one array reference in the loop body: at iteration i the
// reference touches elements [coef*i + lo, coef*i + hi] (inclusive) of the array at `base`.
// whole = true means the pass could not prove an affine subscript: the whole allocation
// holding `base` may be touched.
//
// A sparse loop's read (span, through) is whole for every purpose but one: before the loop
// the runtime fetches what it reads. Its positions at iteration i are coef*i + [lo, hi] or,
// over a CSR row, from bounds[coef*i + lo] to bounds[coef*i + hi] (excluded), + offset; its
// elements are those positions or, through `index`, the elements index[position].
struct Section {
  const void* base = nullptr;
  std::size_t elem_size = 0;
  Access access = Access::read;
  long coef = 0;
  long lo = 0;
  long hi = 0;
  bool whole = false;
  const void* bounds = nullptr;
  const void* index = nullptr;
  std::uint8_t bounds_type = 0, index_type = 0;  // their elements' types, as integer_type<> gives them
  long offset = 0;
  // Within [coef*i + lo, coef*i + hi], only `blocks` blocks `stride` elements apart, the
  // first at coef*i + lo (strided()); blocks = 1: all of it.
  long stride = 0;
  long blocks = 1;
};

// Signedness and size of an integer type, as sparse sections carry their indices' and bounds'.
template <class T>
constexpr std::uint8_t integer_type() {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "a sparse loop's bounds and indices must be integers");
  return static_cast<std::uint8_t>((std::is_signed_v<T> ? 0 : 1) << 5 | sizeof(T));
}

template <class T>
Section section(const T* base, Access access, long coef, long lo, long hi) {
  return Section{base, sizeof(T), access, coef, lo, hi, false};
}
// A reference whose inner loop steps by rows (a column, A[k][j] over k at iteration j):
// iteration i touches the `blocks` blocks coef*i + [lo, hi] + b*stride, b < blocks, and
// nothing between them. Its lo and hi become the hull of the blocks, which is what every
// use but fetching and claiming pages reasons with.
template <class T>
Section strided(const T* base, Access access, long coef, long lo, long hi, long stride, long blocks) {
  if (blocks <= 0) return Section{base, sizeof(T), access, coef, lo, lo - 1, false};  // touches nothing
  if (stride == 0) blocks = 1;
  if (stride < 0) {  // the same blocks, counted from the lowest
    lo += (blocks - 1) * stride;
    hi += (blocks - 1) * stride;
    stride = -stride;
  }
  Section s{base, sizeof(T), access, coef, lo, hi + (blocks - 1) * stride, false};
  s.stride = stride;
  s.blocks = blocks;
  return s;
}
template <class T>
Section whole_array(const T* base, Access access) {
  return Section{base, sizeof(T), access, 0, 0, 0, true};
}
// The elements of a CSR row that iteration i reads: from bounds[coef*i + lo] + offset to
// bounds[coef*i + hi] + offset, excluded (for (k = p[i]; k < p[i + 1]; ++k) ... v[k]).
template <class T, class B>
Section span(const T* base, const B* bounds, long coef, long lo, long hi, long offset) {
  Section s{base, sizeof(T), Access::read, coef, lo, hi, true};
  s.bounds = bounds;
  s.bounds_type = integer_type<B>();
  s.offset = offset;
  return s;
}
// The elements index[p] of `base` that iteration i reads, for its positions p in `index`:
// those of `positions`, a section or span of `index` (x[col[k]]).
template <class T, class I>
Section through(const T* base, const I* index, const Section& positions) {
  Section s = positions;
  s.base = base;
  s.elem_size = sizeof(T);
  s.access = Access::read;
  s.whole = true;
  s.index = index;
  s.index_type = integer_type<I>();
  return s;
}

// Iterations lb, lb+step, ... below ub.
struct Range {
  long lb;
  long ub;
  long step;
  bool operator==(const Range&) const = default;
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
// inside each range (not waiting); the figures travel with the next barrier. Where ranks
// take work from each other (DSM_LB_TAKE), the ranges are chunks handed out as the
// iteration goes: this rank's own first, then chunks taken from the tails of ranks of its
// host that lag, and ranges() lists those handed out so far.
class Plan {
 public:
  class iterator;
  struct Taking;  // the chunks of an execution where work is taken (balancer/runtime/take.cpp)
  Plan(Site& site, std::vector<Range> ranges);
  Plan(Site& site, std::unique_ptr<Taking> taking);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  iterator begin();
  iterator end();
  static constexpr std::size_t done = ~std::size_t{0};  // index of the end iterator
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
  // The index of the range after `index` (done: none), handing out the next chunk if the plan
  // takes work.
  std::size_t next(std::size_t index);
  void publish();
  Site* site_;  // nullptr once moved from
  std::vector<Range> ranges_;
  std::unique_ptr<Taking> taking_;
  // Seconds inside each range: wall, CPU of this thread, and runnable but waiting for a core.
  std::vector<double> wall_, cpu_, waiting_;
  double started_ = 0, cpu_started_ = 0, waiting_started_ = 0;
  bool open_ = false;
};

Plan redistribute(Site& site, long lb, long ub, long step, std::span<const Section> accesses);

// What dsm-pass puts around a loop (a time loop) whose body reads shared arrays only inside
// marked loops. While it lives, what each marked loop reads by its descriptors becomes this
// rank's promise (dsm::ReadsWithin over each run of them, widened as later loops read more),
// so that a halo row starting and ending inside pages travels as its bytes. The code inside
// it but outside marked loops must read no shared array; a pipelined nest, or a loop whose
// reads no descriptor bounds, ends the promises until the region's end.
class ReadsInLoops {
 public:
  ReadsInLoops();
  ~ReadsInLoops();
  ReadsInLoops(const ReadsInLoops&) = delete;
  ReadsInLoops& operator=(const ReadsInLoops&) = delete;
};

// Reductions: what dsm-pass generates for reduction(op: list) on a marked loop, OpenMP's
// clause and meaning, and what a person may use by hand:
//
//   dsm::lb::Reduction red{dsm::lb::reduced<dsm::lb::Op::plus>(sum)};  // sum = 0 here
//   for (const dsm::lb::Range& r : dsm::lb::redistribute(...)) ... sum += ...;
//   red.finish();  // collective: sum = its value before + every rank's part, on every rank
//
// The operators of OpenMP's clause: + and - (both add the parts), *, min, max, &, |, ^, &&, ||;
// and `last`, OpenMP's lastprivate: the value the loop's last iteration left, from the rank
// that ran it (the plan goes through Reduction::track so that the rank knows).
enum class Op : std::uint8_t { plus, times, min, max, bit_and, bit_or, bit_xor, logical_and, logical_or, last };

// One variable of a reduction: where it is, its type (as the runtime combines it) and the
// value it had before the loop.
struct Reduced {
  void* var = nullptr;
  std::uint8_t type = 0;  // reduction_type
  Op op = Op::plus;
  std::array<std::byte, 16> before{};
};

// Kind and size of an arithmetic type: the runtime combines bytes by it.
// `bytes`: any other trivially copyable type, which only Op::last takes.
enum : std::uint8_t { signed_int = 0, unsigned_int = 1, floating = 2, boolean = 3, bytes = 4 };
template <class T>
constexpr std::uint8_t reduction_type() {
  const std::uint8_t kind = !std::is_arithmetic_v<T>     ? bytes
                            : std::is_same_v<T, bool>     ? boolean
                            : std::is_floating_point_v<T> ? floating
                            : std::is_signed_v<T>         ? signed_int
                                                          : unsigned_int;
  return static_cast<std::uint8_t>(kind << 5 | sizeof(T));
}
template <Op op, class T>
constexpr T reduction_identity() {
  using limits = std::numeric_limits<T>;
  if constexpr (op == Op::times || op == Op::logical_and) return T(1);
  else if constexpr (op == Op::bit_and) return static_cast<T>(~0ull);
  else if constexpr (op == Op::min && limits::has_infinity) return limits::infinity();
  else if constexpr (op == Op::min) return limits::max();
  else if constexpr (op == Op::max && limits::has_infinity) return -limits::infinity();
  else if constexpr (op == Op::max) return limits::lowest();
  else return T(0);
}

// Keeps `var`'s value and sets it to the identity of `op` (0 for +, 1 for *, the largest
// value for min, ...), so that this rank's iterations accumulate their part in it.
// (Op::last keeps the value.)
template <Op op, class T>
Reduced reduced(T& var) {
  if constexpr (op == Op::last) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                  "lastprivate(...): the variable must be a scalar or a pointer (at most 16 bytes, trivially copyable)");
  } else {
    static_assert(std::is_arithmetic_v<T> && (sizeof(T) <= 8 || std::is_floating_point_v<T>),
                  "reduction(...): the variable must be an arithmetic scalar");
    static_assert(std::is_integral_v<T> || (op != Op::bit_and && op != Op::bit_or && op != Op::bit_xor),
                  "reduction(&, |, ^: ...): the variable must be an integer");
  }
  Reduced r{&var, reduction_type<T>(), op, {}};
  std::memcpy(r.before.data(), &var, sizeof var);
  if constexpr (op != Op::last) var = reduction_identity<op, T>();
  return r;
}

// The variables of one execution's reduction clause.
class Reduction {
 public:
  Reduction(std::initializer_list<Reduced> vars);
  // Collective, a barrier: every variable then holds its value before the loop combined with
  // every rank's part, in rank order, so that every rank has the same value (floating-point
  // parts add up in another order than the sequential loop's). Ranks whose variables differ
  // in number or type stop the job with an error.
  void finish();
  // Notes the last iteration this rank runs in `plan` (an Op::last variable needs it) and
  // hands the plan on: `for (const Range& r : red.track(redistribute(...)))`.
  Plan track(Plan plan);

 private:
  std::vector<Reduced> vars_;
  std::optional<long> last_;  // the greatest iteration of this rank's ranges
};

}  // namespace dsm::lb

namespace dsm::detail {
void note_outside_access(const void* addr, std::size_t bytes);  // in libdsm (runtime.cpp)
}

namespace dsm::lb {

// dsm-pass wraps each access to an sh_ array outside marked loops (code that every rank
// runs): written(sh_a[i]) = ... for a write, read(sh_a[i]) for a read. The element is
// returned unchanged once the runtime has kept what other ranks must still read there. A
// rank holding a page across barriers writes it without a fault, there or in the loop that
// follows; without this, a rank fetching the page before its next acquire would see those
// writes (an update run on every rank applied twice, a pivot read after its loop scaled
// it).
template <class T>
T& written(T& element) {
  detail::note_outside_access(&element, sizeof element);
  return element;
}
template <class T>
const T& read(const T& element) {
  detail::note_outside_access(&element, sizeof element);
  return element;
}

}  // namespace dsm::lb
