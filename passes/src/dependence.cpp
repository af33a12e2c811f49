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

}  // namespace

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
