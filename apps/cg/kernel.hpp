// Conjugate gradient on a sparse symmetric positive-definite matrix in CSR form, a fixed
// number of iterations from x = 0 for A x = 1 (as NAS CG times a fixed count). Two problems
// of about 7 g³ nonzeros:
//   laplace  the 7-point Laplacian of a g x g x g grid (g³ rows): a row's columns are its
//            own and its grid neighbours, so a block of rows reads a grid plane of the
//            vector on either side;
//   random   in the manner of NAS CG: g³ / 16 rows with about 113 nonzeros each, at random
//            columns (each row picks `partners` others, and is picked back), with random
//            weights and a diagonal that outweighs them (strictly diagonally dominant, so
//            SPD): every block of rows reads entries from all over the vector.
// The vectors are read through the column indices, which the pass cannot follow.
//
// Every version does the same operations per element in the same order; only the dot
// products' sums are split (by ranks or threads) and added in another order. So at one rank
// or thread every version's x equals the sequential x bit for bit, and otherwise within
// `tolerance` (relative, in the largest entry), which --check tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../common/app.hpp"

namespace cg {

inline const app::Options defaults{100, 25, false, false};
inline const std::vector<std::string> problems{"laplace", "random"};
enum Problem { laplace = 0, random = 1 };
inline Problem problem_of(const app::Options& o) { return static_cast<Problem>(o.problem); }

// Sums in another order change x by about the unit roundoff times the iterations' growth
// of rounding errors (measured: below 1e-13 at 25 iterations on both problems).
constexpr double tolerance = 1e-9;

constexpr long partners = 56;
inline long rows_of(const app::Options& o) {
  const long grid = o.n * o.n * o.n;
  return problem_of(o) == laplace ? grid : std::max(grid / 16, 2L);
}
inline long nonzeros_at_most(const app::Options& o) {
  return rows_of(o) * (problem_of(o) == laplace ? 7 : 2 * partners + 1);
}

// splitmix64: the random problem's columns and weights, the same on every version and rank.
inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline double unit(std::uint64_t key) { return static_cast<double>(mix(key) >> 11) * 0x1.0p-53; }

struct Entry {
  long col;
  double val;
};

// Appends a row's entries, in increasing column order, to col and val from position k.
inline void put_row(std::vector<Entry>& row, long* col, double* val, long& k) {
  std::sort(row.begin(), row.end(), [](const Entry& a, const Entry& b) { return a.col < b.col; });
  for (const Entry& e : row) col[k] = e.col, val[k++] = e.val;
}

inline void build_laplace(long g, long* start, long* col, double* val) {
  const long n = g * g * g;
  std::vector<Entry> row;
  long k = 0;
  for (long m = 0; m < n; ++m) {
    start[m] = k;
    const long i = m / (g * g), j = m / g % g, l = m % g;
    row = {{m, 6}};
    for (long e : {i > 0 ? m - g * g : -1, j > 0 ? m - g : -1, l > 0 ? m - 1 : -1, l < g - 1 ? m + 1 : -1,
                   j < g - 1 ? m + g : -1, i < g - 1 ? m + g * g : -1})
      if (e >= 0) row.push_back({e, -1});
    put_row(row, col, val, k);
  }
  start[n] = k;
}

inline void build_random(long n, long* start, long* col, double* val) {
  // Row m's partners, and the rows that picked m: the pattern is symmetric.
  std::vector<std::vector<long>> near(n);
  for (long m = 0; m < n; ++m)
    for (long t = 0; t < partners; ++t) {
      const long e = static_cast<long>(mix(static_cast<std::uint64_t>(m * partners + t)) % static_cast<std::uint64_t>(n));
      if (e == m) continue;
      near[m].push_back(e);
      near[e].push_back(m);
    }
  std::vector<Entry> row;
  long k = 0;
  for (long m = 0; m < n; ++m) {
    start[m] = k;
    std::sort(near[m].begin(), near[m].end());
    near[m].erase(std::unique(near[m].begin(), near[m].end()), near[m].end());
    row.clear();
    double diagonal = 1 + unit(~static_cast<std::uint64_t>(m));
    for (long e : near[m]) {
      // An edge's weight depends on its two ends alone: the matrix is symmetric.
      const double w = 0.5 + unit(static_cast<std::uint64_t>(std::min(m, e) * n + std::max(m, e)));
      diagonal += w;
      row.push_back({e, -w});
    }
    row.push_back({m, diagonal});
    put_row(row, col, val, k);
  }
  start[n] = k;
}

// Row starts `start` (rows_of + 1), column indices `col` and values `val`
// (nonzeros_at_most each), each row's columns in increasing order.
inline void build(const app::Options& o, long* start, long* col, double* val) {
  if (problem_of(o) == laplace)
    build_laplace(o.n, start, col, val);
  else
    build_random(rows_of(o), start, col, val);
}

// x = 0, r = p = b = 1 on [lo, hi) (so r·r starts at n, exactly).
inline void start_vectors(double* x, double* r, double* p, long lo, long hi) {
  for (long i = lo; i < hi; ++i) x[i] = 0, r[i] = 1, p[i] = 1;
}

// q = A p on rows [lo, hi); returns their part of p·q.
inline double product(const long* start, const long* col, const double* val, const double* p, double* q, long lo,
                      long hi) {
  double pq = 0;
  for (long i = lo; i < hi; ++i) {
    double s = 0;
    for (long k = start[i]; k < start[i + 1]; ++k) s += val[k] * p[col[k]];
    q[i] = s;
    pq += p[i] * s;
  }
  return pq;
}

// x += alpha p, r -= alpha q on [lo, hi); returns their part of the new r·r.
inline double update(double alpha, const double* p, const double* q, double* x, double* r, long lo, long hi) {
  double rr = 0;
  for (long i = lo; i < hi; ++i) {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    rr += r[i] * r[i];
  }
  return rr;
}

// p = r + beta p on [lo, hi).
inline void direction(double beta, const double* r, double* p, long lo, long hi) {
  for (long i = lo; i < hi; ++i) p[i] = r[i] + beta * p[i];
}

inline std::uint64_t sum(const double* x, long n) { return app::checksum(x, sizeof(double) * n); }

// The sequential solution, for --check.
inline std::vector<double> solve(const app::Options& o) {
  const long n = rows_of(o);
  std::vector<long> start(n + 1), col(nonzeros_at_most(o));
  std::vector<double> val(nonzeros_at_most(o)), x(n), r(n), p(n), q(n);
  build(o, start.data(), col.data(), val.data());
  start_vectors(x.data(), r.data(), p.data(), 0, n);
  double rr = static_cast<double>(n);
  for (long it = 0; it < o.iters; ++it) {
    const double alpha = rr / product(start.data(), col.data(), val.data(), p.data(), q.data(), 0, n);
    const double next = update(alpha, p.data(), q.data(), x.data(), r.data(), 0, n);
    direction(next / rr, r.data(), p.data(), 0, n);
    rr = next;
  }
  return x;
}

// The end of a run, in every version (rank 0): prints the checksum of x, the residual's norm
// and the time; with --check, compares x with the sequential solution. Returns the exit code.
inline int conclude(const app::Options& o, const double* x, double rr, double seconds) {
  const long n = rows_of(o);
  std::printf("checksum %016llx\nresidual %.6e\ntime %.6f\n", static_cast<unsigned long long>(sum(x, n)),
              std::sqrt(rr), seconds);
  std::fflush(stdout);
  if (!o.check) return 0;
  const std::vector<double> want = solve(o);
  double largest = 0, off = 0;
  for (long i = 0; i < n; ++i) {
    largest = std::max(largest, std::fabs(want[i]));
    off = std::max(off, std::fabs(want[i] - x[i]));
  }
  const double relative = largest > 0 ? off / largest : off;
  if (relative <= tolerance) {
    std::printf("check ok (relative difference %.1e)\n", relative);
    return 0;
  }
  std::fprintf(stderr, "check FAILED: x differs from the sequential solution by %.3e of its largest entry (tolerance %.0e)\n",
               relative, tolerance);
  return 1;
}

}  // namespace cg
