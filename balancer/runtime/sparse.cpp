// The reads of sparse loops: before an execution, this rank fetches in bulk the elements of
// the CSR rows its ranges visit (span sections: from the row starts, which are read
// sections of the loop and fetched with them) and then the pages of an array its ranges read
// through an index array (through sections). Which pages those are, the inspector finds by
// reading the index array over the positions the ranges visit (a CSR row's, for a span),
// once its elements are here; it keeps them for the executions that follow,
// as long as the ranges are the same and neither the index array nor the row bounds changed
// on this rank (write notices, own writes). Faults still serve whatever it misses, so a
// stale or wrong answer costs time, never a result.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cstring>

namespace dsm::lb::runtime {
namespace {

// Indices and bounds are the program's data: beyond this (2^40 elements) they name no
// shared memory, and their products with an element's size could overflow.
constexpr long farthest = 1L << 40;
bool plausible(long e) { return e > -farthest && e < farthest; }

long integer_at(const void* array, long i, std::uint8_t type) {
  const std::size_t size = type & 0x1f;
  const bool is_unsigned = type >> 5;
  const auto* p = static_cast<const std::byte*>(array) + i * static_cast<long>(size);
  std::uint64_t u = 0;
  std::memcpy(&u, p, size);  // little-endian: the low bytes first
  if (size < 8 && !is_unsigned && (u >> (8 * size - 1)) & 1) u |= ~0ull << (8 * size);
  return static_cast<long>(u);
}

// The elements of the shared allocation that holds `array`, counted from `array`: what may
// be read there. None outside the shared heap.
Positions entries_of(const void* array, std::size_t size) {
  const detail::Extent a = detail::allocation_of(array);
  if (!a.start || size == 0) return {};
  const auto elem = static_cast<std::int64_t>(size);
  return {(address(a.start) - address(array)) / elem,
          (address(a.start) + static_cast<std::int64_t>(a.bytes) - address(array)) / elem};
}
Positions clamp(Positions p, Positions to) { return {std::max(p.first, to.first), std::min(p.last, to.last)}; }

// The least and the greatest of coef*i over the iterations i of `r`.
struct Hull {
  long a, b;
};
Hull hull_of(const Section& s, const Range& r) {
  const long i1 = iteration_at(r.lb, r.ub, r.step, iteration_count(r.lb, r.ub, r.step) - 1);
  return {std::min(s.coef * r.lb, s.coef * i1), std::max(s.coef * r.lb, s.coef * i1)};
}

// Positions [first, last) that the iterations of `r` visit, in s's index array or, for a
// span, in its own array. A CSR row's bounds grow with the row; where they do not, the hull
// is wrong and the faults make up for it.
Positions positions(const Section& s, const Range& r) {
  const auto [a, b] = hull_of(s, r);
  const Positions allowed = s.index ? entries_of(s.index, s.index_type & 0x1f) : entries_of(s.base, s.elem_size);
  if (!s.bounds) return clamp({a + s.lo + s.offset, b + s.hi + 1 + s.offset}, allowed);
  const Positions rows = entries_of(s.bounds, s.bounds_type & 0x1f);
  if (a + s.lo < rows.first || b + s.hi >= rows.last) return {};
  const long first = integer_at(s.bounds, a + s.lo, s.bounds_type), last = integer_at(s.bounds, b + s.hi, s.bounds_type);
  if (!plausible(first) || !plausible(last)) return {};
  return clamp({first + s.offset, std::max(first, last) + s.offset}, allowed);
}

using Runs = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Marks in `read` the pages of an allocation of `elems` elements of `elem` bytes at `base`
// (the first `skip` bytes of its first page belong to something else) that index entries
// [first, last) of type I name; entries that name no element of it are passed by.
template <class I>
void mark(const void* index, Positions p, std::int64_t skip, std::int64_t elem, std::int64_t elems, std::vector<std::uint8_t>& read) {
  const I* at = static_cast<const I*>(index);
  for (long k = p.first; k < p.last; ++k) {
    const auto e = static_cast<std::int64_t>(at[k]);
    if (e >= 0 && e < elems) read[static_cast<std::size_t>((skip + e * elem) / page_bytes)] = 1;
  }
}

// The pages of `s.base` that index[p] names for p in `ps`, as byte runs: one pass over the
// index entries, at the speed of reading them.
Runs inspect(const Section& s, const std::vector<Positions>& ps) {
  const Positions elems = entries_of(s.base, s.elem_size);
  if (elems.last <= 0) return {};
  const std::int64_t base = address(s.base), elem = static_cast<std::int64_t>(s.elem_size);
  const std::int64_t first_page = base / page_bytes, skip = base - first_page * page_bytes;
  std::vector<std::uint8_t> read(static_cast<std::size_t>((skip + elems.last * elem + page_bytes - 1) / page_bytes));
  const bool is_unsigned = s.index_type >> 5;
  for (const Positions& p : ps) {
    switch (s.index_type & 0x1f) {
      case 8: is_unsigned ? mark<std::uint64_t>(s.index, p, skip, elem, elems.last, read) : mark<std::int64_t>(s.index, p, skip, elem, elems.last, read); break;
      case 4: is_unsigned ? mark<std::uint32_t>(s.index, p, skip, elem, elems.last, read) : mark<std::int32_t>(s.index, p, skip, elem, elems.last, read); break;
      case 2: is_unsigned ? mark<std::uint16_t>(s.index, p, skip, elem, elems.last, read) : mark<std::int16_t>(s.index, p, skip, elem, elems.last, read); break;
      default: is_unsigned ? mark<std::uint8_t>(s.index, p, skip, elem, elems.last, read) : mark<std::int8_t>(s.index, p, skip, elem, elems.last, read); break;
    }
  }
  Runs runs;
  for (std::size_t i = 0; i < read.size(); ++i) {
    if (!read[i]) continue;
    const std::int64_t at = (first_page + static_cast<std::int64_t>(i)) * page_bytes;
    if (!runs.empty() && runs.back().second == at)
      runs.back().second += page_bytes;
    else
      runs.push_back({at, at + page_bytes});
  }
  return runs;
}

// Whether the inspection still holds: the same ranges, and neither the index entries it read
// nor the row bounds that chose them changed here since.
bool still_holds(const Inspection& in, const Section& s, const std::vector<Range>& mine) {
  if (in.index != s.index || in.base != s.base || in.ranges != mine) return false;
  const std::size_t index_size = s.index_type & 0x1f;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const Positions& p = in.positions[k];
    if (p.last > p.first &&
        detail::changed_since(reinterpret_cast<const void*>(address(s.index) + p.first * static_cast<std::int64_t>(index_size)),
                              static_cast<std::size_t>(p.last - p.first) * index_size, in.epoch))
      return false;
    if (s.bounds) {
      const std::size_t bound_size = s.bounds_type & 0x1f;
      const auto [a, b] = hull_of(s, mine[k]);
      if (detail::changed_since(
              reinterpret_cast<const void*>(address(s.bounds) + (a + s.lo) * static_cast<std::int64_t>(bound_size)),
              static_cast<std::size_t>(b + s.hi - a - s.lo + 1) * bound_size, in.epoch))
        return false;
    }
  }
  return true;
}

// Where bounds[first + k * stride] lies in the bounds array for k = 0 ... n: false when
// some of those elements are outside its allocation (or the products overflow).
bool rows_inside(const Section& s, long lb, long step, long n, long& first, long& stride) {
  long last = 0;
  if (__builtin_mul_overflow(s.coef, lb, &first) || __builtin_add_overflow(first, s.lo, &first) ||
      __builtin_mul_overflow(s.coef, step, &stride) || __builtin_mul_overflow(stride, n, &last) ||
      __builtin_add_overflow(last, first, &last))
    return false;
  const Positions rows = entries_of(s.bounds, s.bounds_type & 0x1f);
  return first >= rows.first && last < rows.last;
}

// Where the bound that cell j of `c` starts at lies (j = c.cells: where the last one ends).
const void* cell_bound(const RowCosts& c, long j, std::size_t size) {
  return reinterpret_cast<const void*>(address(c.bounds) + (c.first + c.n * j / c.cells * c.stride) * static_cast<long>(size));
}

// Whether the bounds read for `c` may have changed here since.
bool bounds_changed(const RowCosts& c, std::uint8_t type) {
  const std::size_t size = type & 0x1f;
  for (long j = 0; j <= c.cells; ++j)
    if (detail::changed_since(cell_bound(c, j, size), size, c.epoch)) return true;
  return false;
}

// The cells' bounds lie a page or more apart in a large matrix, each on a page another rank
// may have written: fetched together, in one request per writer, rather than a fault each.
void fetch_bounds(const RowCosts& c, std::uint8_t type) {
  const std::size_t size = type & 0x1f;
  std::vector<detail::ByteRun> runs;
  for (long j = 0; j <= c.cells; ++j) runs.push_back({cell_bound(c, j, size), size});
  detail::prefetch_runs(runs, {});
}

}  // namespace

std::vector<std::pair<Span, double>> row_costs(Site::State& st, std::span<const Section> accesses, long lb, long step,
                                               long n, int nranks) {
  // A row's cost counts only where the rows follow one another: iteration i's row ends where
  // the next iteration's begins (coef * step == hi - lo), so a cell's nonzeros are the
  // difference of two bounds.
  const auto tiles = [step](const Section& s) { return s.bounds && s.coef > 0 && s.hi - s.lo == s.coef * step; };
  const auto s = std::find_if(accesses.begin(), accesses.end(), tiles);
  RowCosts& c = st.row_costs;
  long first = 0, stride = 0;
  if (s == accesses.end() || n <= 0 || !rows_inside(*s, lb, step, n, first, stride)) {
    c = {};
    return {};
  }
  const long cells = std::min(n, 64L * nranks);
  if (c.bounds == s->bounds && c.first == first && c.stride == stride && c.n == n && c.cells == cells &&
      !bounds_changed(c, s->bounds_type))
    return c.pieces;
  c = {s->bounds, first, stride, n, cells, detail::barrier_count(), {}};
  fetch_bounds(c, s->bounds_type);
  long before = integer_at(s->bounds, first, s->bounds_type);
  for (long j = 0; j < cells; ++j) {
    const long begin = n * j / cells, end = n * (j + 1) / cells;
    const long at = integer_at(s->bounds, first + end * stride, s->bounds_type);
    if (!plausible(before) || !plausible(at) || at < before) {
      c.pieces.clear();
      break;
    }
    c.pieces.push_back({Span{begin, end}, static_cast<double>(at - before + (end - begin))});
    before = at;
  }
  return c.pieces;
}

void prefetch_sparse(Site::State& st, std::span<const Section> accesses, const std::vector<Range>& mine) {
  if (nprocs() == 1) return;
  // The rows' elements, when the rows are new to this rank. Later, what changes in them is
  // left to the faults: a walk over every page of the rows at every execution would cost
  // more (0.1 ms of CG's 6 ms iteration) than the rare change it catches.
  if (st.spans_fetched != mine) {
    std::vector<detail::ByteRun> spans;
    for (const Section& s : accesses) {
      if (!s.bounds || s.index) continue;
      for (const Range& r : mine) {
        const Positions p = positions(s, r);
        if (p.last > p.first)
          spans.push_back({reinterpret_cast<const void*>(address(s.base) + p.first * static_cast<std::int64_t>(s.elem_size)),
                           static_cast<std::size_t>(p.last - p.first) * s.elem_size});
      }
    }
    if (!spans.empty()) detail::prefetch_runs(spans, {});
    st.spans_fetched = mine;
  }
  // What all index sections read, fetched together: one request per writer, not one per run
  // (a random matrix's reads are thousands of runs).
  std::vector<detail::ByteRun> read;
  for (std::size_t k = 0; k < accesses.size(); ++k) {
    const Section& s = accesses[k];
    if (!s.index) continue;
    auto in = std::find_if(st.inspections.begin(), st.inspections.end(), [&](const Inspection& i) { return i.section == k; });
    if (in == st.inspections.end()) {
      st.inspections.emplace_back();
      st.inspections.back().section = k;
      in = st.inspections.end() - 1;
    }
    if (!still_holds(*in, s, mine)) {
      in->positions.clear();
      for (const Range& r : mine) in->positions.push_back(positions(s, r));
      in->epoch = detail::barrier_count();
      in->base = s.base;
      in->index = s.index;
      in->ranges = mine;
      in->runs = inspect(s, in->positions);
      ++in->made;
    }
    for (const auto& [first, last] : in->runs)
      read.push_back({reinterpret_cast<const void*>(first), static_cast<std::size_t>(last - first)});
  }
  if (!read.empty()) detail::prefetch_runs(read, {});
}

}  // namespace dsm::lb::runtime
