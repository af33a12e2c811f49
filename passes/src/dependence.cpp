#include "dependence.hpp"

#include <cstdlib>

namespace dsmpass {
namespace {

bool at_least_zero(const Poly& p) {
  const auto s = sign_when_large(p);
  return s && *s >= 0;
}

bool writes(const Section& s) { return s.access != Access::read; }

// Both sections advance by c elements per iteration: iteration i of `w` and i + d of `x`
// touch a common element when c·d lies in [w.lo - x.hi, w.hi - x.lo].
std::optional<long> same_stride_distance(const Section& w, const Section& x, long step) {
  const Poly a = *w.lo.large - *x.hi.large, b = *w.hi.large - *x.lo.large;
  const Poly g = w.coef * Poly::constant(step);
  const auto ga = g.as_constant(), ca = a.as_constant(), cb = b.as_constant();
  if (ga && ca && cb) {  // exact: the nonzero multiples of |g| in [a, b]
    const long m = std::labs(*ga);
    long first = *ca >= 0 ? (*ca + m - 1) / m : -((-*ca) / m);
    if (first == 0) first = 1;
    if (first * m <= *cb) return first * (*ga > 0 ? 1 : -1);
    if (*ca <= -m && -m <= *cb) return *ga > 0 ? -1 : 1;
    return std::nullopt;
  }
  // A constant stride against symbolic extents (a row of N elements, n of them used) says
  // nothing: the symbols may be small.
  if (ga) return std::nullopt;
  for (long d = 1; d <= 8; ++d)
    for (long signed_d : {d, -d})
      if (at_least_zero(g * Poly::constant(signed_d) - a) && at_least_zero(b - g * Poly::constant(signed_d)))
        return signed_d;
  return std::nullopt;
}

// `x` touches [x.lo, x.hi] in every iteration; some iteration of `w` writes in there (one of
// the first or last three: the iterations that do form a range).
bool written_where_all_touch(const Section& w, const Section& x, const Bound& first, const Bound& last) {
  if (!first.large || !last.large) return false;
  if (w.coef.as_constant())  // as for equal strides: only constants compare with a constant stride
    for (const Poly* p : {&*first.large, &*last.large, &*w.lo.large, &*w.hi.large, &*x.lo.large, &*x.hi.large})
      if (!p->as_constant()) return false;
  for (long off = 0; off <= 2; ++off)
    for (const Poly& i : {*first.large + Poly::constant(off), *last.large - Poly::constant(off)}) {
      const Poly at = w.coef * i;
      if (at_least_zero(*x.hi.large - at - *w.lo.large) && at_least_zero(at + *w.hi.large - *x.lo.large)) return true;
    }
  return false;
}

// `index` as row_length * row + col + offset.
struct RowIndex {
  Poly row_length, offset;
};
std::optional<RowIndex> row_index(const Use& u, const std::string& row, const std::string& col) {
  if (!u.index) return std::nullopt;
  for (const auto& [var, c] : u.index->parts)
    if (!var.empty() && var != row && var != col && !c.is_zero()) return std::nullopt;
  if (u.index->coef(col).as_constant() != 1) return std::nullopt;
  return RowIndex{u.index->coef(row), u.index->coef("")};
}

// `diff` as rows * row_length + cols, the row the nearest one.
std::optional<std::pair<long, long>> rows_and_columns(const Poly& diff, const Poly& row_length) {
  if (const auto r = row_length.as_constant()) {
    const auto d = diff.as_constant();
    if (!d || *r <= 0) return std::nullopt;
    const long rows = (*d >= 0 ? *d + *r / 2 : *d - *r / 2) / *r;
    return std::pair{rows, *d - rows * *r};
  }
  // A symbolic row length is large: only a few rows apart can be told, and those exactly.
  for (long rows = -8; rows <= 8; ++rows)
    if (const auto cols = (diff - Poly::constant(rows) * row_length).as_constant()) return std::pair{rows, *cols};
  return std::nullopt;
}

std::string iteration(const std::string& row, long rows, const std::string& col, long cols) {
  const auto plus = [](const std::string& v, long d) {
    return d == 0 ? v : v + (d > 0 ? " + " : " - ") + std::to_string(std::labs(d));
  };
  return std::string("(").append(plus(row, rows)).append(", ").append(plus(col, cols)).append(")");  // not "(" + s: GCC 12's false -Wrestrict
}

}  // namespace

NestNeeds nest_needs(const std::vector<Use>& uses, const std::string& base, const std::string& row,
                     const std::string& col) {
  NestNeeds out;
  const auto stop = [](NestNeeds::Kind kind, std::string why, const Use* at) {
    NestNeeds n;
    n.kind = kind;
    n.why = std::move(why);
    n.use = at;
    return n;
  };
  std::vector<std::pair<const Use*, RowIndex>> mine;
  for (const Use& u : uses) {
    if (u.base != base) continue;
    const auto at = row_index(u, row, col);
    if (!at || (!mine.empty() && !(at->row_length == mine.front().second.row_length)))
      return stop(NestNeeds::Kind::unknown, "this use of '" + u.array + "' is not " + u.array + "[" + row + " + a][" + col + " + b]", &u);
    mine.emplace_back(&u, *at);
  }
  for (const auto& [w, wi] : mine) {
    if (w->access == Access::read) continue;
    for (const auto& [u, ui] : mine) {
      const auto d = rows_and_columns(ui.offset - wi.offset, wi.row_length);
      if (!d)
        return stop(NestNeeds::Kind::unknown, "the rows this use of '" + u->array + "' and a write of it touch cannot be told apart", u);
      const auto [rows, cols] = *d;
      if (rows == 0) continue;  // the same row: the inner loop's order keeps it
      const std::string other = iteration(row, rows, col, cols);
      if (u->access != Access::read)
        return stop(NestNeeds::Kind::refused, "iterations " + iteration(row, 0, col, 0) + " and " + other + " both write this element of '" +
                                                  u->array + "'; a pipeline's rows write only their own row", u);
      if (rows <= -2)
        return stop(NestNeeds::Kind::refused, "this read of '" + u->array + "' needs what iteration " + other +
                                                  " writes; a pipeline passes only the row above on to the next rank", u);
      // Row i + 1 reaches column j + cols only after row i reached j + cols + lookahead; row i - 1
      // must reach j + cols before row i reaches j.
      const long need = rows < 0 ? cols : (-cols + rows - 1) / rows;
      if (need > out.lookahead) {
        out.lookahead = need;
        out.use = u;
        out.writer = other;
      }
    }
  }
  return out;
}

std::optional<Dependence> carried_dependence(const std::vector<Section>& sections, const Bound& first, const Bound& last,
                                             long step) {
  // Fewer than two iterations carry nothing.
  if (first.large && last.large && !at_least_zero(*last.large - *first.large - Poly::constant(1))) return std::nullopt;
  for (const Section& w : sections) {
    if (!writes(w) || w.whole || !w.dense || !w.lo.large || !w.hi.large || w.coef.is_zero()) continue;
    for (const Section& x : sections) {
      if (x.base != w.base || x.whole || !x.dense || !x.lo.large || !x.hi.large) continue;
      if (x.coef == w.coef) {
        if (const auto d = same_stride_distance(w, x, step)) return Dependence{w.array, x.access, *d};
      } else if (x.coef.is_zero() && written_where_all_touch(w, x, first, last)) {
        return Dependence{w.array, x.access, 0};
      }
    }
  }
  return std::nullopt;
}

}  // namespace dsmpass
