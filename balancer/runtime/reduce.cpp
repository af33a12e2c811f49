// Reductions (reduction(op: list) on a marked loop): each rank's parts travel with one
// barrier, in the blob that carries the balancer's figures, and every rank folds all parts
// in rank order, so that every rank ends with the same bytes.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <climits>
#include <string>

namespace dsm::lb {
namespace {

template <class T>
T combine(Op op, T a, T b) {
  switch (op) {
    case Op::plus: return static_cast<T>(a + b);
    case Op::times: return static_cast<T>(a * b);
    case Op::min: return b < a ? b : a;
    case Op::max: return a < b ? b : a;
    case Op::logical_and: return static_cast<T>(a && b);
    case Op::logical_or: return static_cast<T>(a || b);
    case Op::last:  // fold() takes it apart
      break;
    case Op::bit_and:
    case Op::bit_or:
    case Op::bit_xor:
      if constexpr (std::is_integral_v<T>) {
        if (op == Op::bit_and) return static_cast<T>(a & b);
        if (op == Op::bit_or) return static_cast<T>(a | b);
        return static_cast<T>(a ^ b);
      }
      break;
  }
  return a;  // reduced<>() refuses the rest at compile time
}

std::size_t value_size(std::uint8_t type) { return type & 31u; }

// A part is the greatest iteration the rank ran (no_iteration: none), then, per variable,
// its type, its operator and its value's bytes.
constexpr std::int64_t no_iteration = INT64_MIN;
constexpr std::size_t part_head = sizeof(std::int64_t);
constexpr std::size_t header_size = 2;

std::int64_t last_iteration(const std::vector<std::byte>& part) {
  std::int64_t last;
  std::memcpy(&last, part.data(), sizeof last);
  return last;
}

template <class T>
void fold_as(const Reduced& v, const std::vector<std::vector<std::byte>>& parts, std::size_t at) {
  T acc;
  std::memcpy(&acc, v.before.data(), sizeof acc);
  for (const auto& part : parts) {
    T x;
    std::memcpy(&x, part.data() + at, sizeof x);
    acc = combine(v.op, acc, x);
  }
  std::memcpy(v.var, &acc, sizeof acc);
}

// Folds the value at `at` of every part into v.var; false for a type no variable can have.
bool fold(const Reduced& v, const std::vector<std::vector<std::byte>>& parts, std::size_t at) {
  if (v.op == Op::last) {  // the value of the rank that ran the loop's last iteration
    const std::vector<std::byte>* from = nullptr;
    for (const auto& part : parts)
      if (last_iteration(part) != no_iteration && (!from || last_iteration(part) > last_iteration(*from))) from = &part;
    if (from) std::memcpy(v.var, from->data() + at, value_size(v.type));
    return true;  // without iterations the variable keeps its value
  }
  switch (v.type) {
    case reduction_type<std::int8_t>(): fold_as<std::int8_t>(v, parts, at); return true;
    case reduction_type<std::int16_t>(): fold_as<std::int16_t>(v, parts, at); return true;
    case reduction_type<std::int32_t>(): fold_as<std::int32_t>(v, parts, at); return true;
    case reduction_type<std::int64_t>(): fold_as<std::int64_t>(v, parts, at); return true;
    case reduction_type<std::uint8_t>(): fold_as<std::uint8_t>(v, parts, at); return true;
    case reduction_type<std::uint16_t>(): fold_as<std::uint16_t>(v, parts, at); return true;
    case reduction_type<std::uint32_t>(): fold_as<std::uint32_t>(v, parts, at); return true;
    case reduction_type<std::uint64_t>(): fold_as<std::uint64_t>(v, parts, at); return true;
    case reduction_type<float>(): fold_as<float>(v, parts, at); return true;
    case reduction_type<double>(): fold_as<double>(v, parts, at); return true;
    case reduction_type<long double>(): fold_as<long double>(v, parts, at); return true;
    case reduction_type<bool>(): fold_as<bool>(v, parts, at); return true;
    default: return false;
  }
}

std::vector<std::byte> part_of(const std::vector<Reduced>& vars, std::optional<long> last) {
  std::vector<std::byte> part(part_head);
  const std::int64_t ran = last ? *last : no_iteration;
  std::memcpy(part.data(), &ran, sizeof ran);
  for (const Reduced& v : vars) {
    part.push_back(std::byte{v.type});
    part.push_back(static_cast<std::byte>(v.op));
    const auto* bytes = static_cast<const std::byte*>(v.var);
    part.insert(part.end(), bytes, bytes + value_size(v.type));
  }
  return part;
}

}  // namespace

std::vector<std::vector<std::byte>> runtime::gather(std::vector<std::byte> mine) {
  if (nprocs() <= 1) return {std::move(mine)};
  runtime::Glue& g = runtime::glue();
  runtime::drop_departed(g);
  g.reduction = std::move(mine);
  runtime::attach_to_barrier(g);
  barrier();
  const auto& blobs = detail::barrier_blobs();
  std::vector<std::vector<std::byte>> parts;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (blobs[r].empty()) {  // that rank was at another barrier: found different below
      parts.emplace_back();
      continue;
    }
    auto published = decode_figures(blobs[r]);
    if (!published) runtime::stop_rank("the part gathered from rank " + std::to_string(r) + " at a barrier arrived malformed");
    parts.push_back(std::move(published->reduction));
  }
  return parts;
}

Reduction::Reduction(std::initializer_list<Reduced> vars) : vars_(vars) {
  // The next loop runs with ranks not taking work: a lastprivate value comes from the rank
  // whose own ranges end with the last iteration.
  for (const Reduced& v : vars_) runtime::glue().lastprivate |= v.op == Op::last;
}

Plan Reduction::track(Plan plan) {
  // A rank's ranges are sorted and disjoint, so its greatest iteration is the last it runs.
  for (const Range& r : plan.ranges())
    if (r.lb < r.ub) {
      const long last = r.lb + (r.ub - 1 - r.lb) / r.step * r.step;
      last_ = last_ ? std::max(*last_, last) : last;
    }
  return plan;
}

void Reduction::finish() {
  std::vector<std::byte> mine = part_of(vars_, last_);
  if (mine.size() > max_reduction_bytes)
    runtime::stop_rank("a reduction of " + std::to_string(vars_.size()) + " variables is more than a barrier carries (" +
                       std::to_string(max_reduction_bytes) + " bytes)");
  std::vector<std::vector<std::byte>> parts = runtime::gather(mine);
  // Ranks that reduce different variables (in number, type or operator) ran different code.
  for (std::size_t r = 0; r < parts.size(); ++r) {
    bool same = parts[r].size() == mine.size();
    for (std::size_t at = part_head; same && at < mine.size(); at += header_size + value_size(std::uint8_t(mine[at])))
      same = parts[r][at] == mine[at] && parts[r][at + 1] == mine[at + 1];
    if (!same)
      runtime::stop_rank("rank " + std::to_string(r) +
                         " finished a reduction of other variables at the same barrier: every rank must run the same loops "
                         "with the same reduction clauses");
  }
  std::size_t at = part_head;
  for (const Reduced& v : vars_) {
    if (!fold(v, parts, at + header_size)) runtime::stop_rank("a reduction variable of a type the runtime does not combine");
    at += header_size + value_size(v.type);
  }
}

}  // namespace dsm::lb
