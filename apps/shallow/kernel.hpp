// Shallow: the SWM shallow-water model (Sadourny's scheme, as in SPEC swm256 and the
// TreadMarks papers) on n x n doubles (the paper's 514 x 514), M = N = n - 1.
//
// One time step is calc1 (mass fluxes cu, cv, vorticity z, height h), calc2 (new u, v, p)
// and calc3 (time smoothing; plain copies on the first step), each an interior loop over
// rows followed by the periodic continuation. The continuation is written as row copies
// (rows 0 and N, which every rank would share if they were split naively) followed by
// column copies over all rows, which then also fill the four corners; the values are
// exactly those of the original order (columns, rows, corners).
//
// The phases take row/column ranges; an executor decides who runs which part:
//   ex.rows(lo, hi, written, f)  runs f(l, h) on its share of rows [lo, hi)
//   ex.edge(row, lo, hi, written, f) runs f(lo, hi) for a loop over columns writing `row`
//   ex.sync()                    separates phases (a barrier in the DSM)
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "../common/app.hpp"

namespace shallow {

inline const app::Options defaults{514, 100, false, false};

struct Grid {
  long n = 0;  // rows and columns; M = N = n - 1
  double *u, *v, *p, *unew, *vnew, *pnew, *uold, *vold, *pold, *cu, *cv, *z, *h;
};
using Written = std::initializer_list<double*>;

// The 13 arrays from `alloc(count)` (each called in the same order on every rank).
template <class Alloc>
Grid make_grid(long n, Alloc alloc) {
  Grid g;
  g.n = n;
  for (double** a : {&g.u, &g.v, &g.p, &g.unew, &g.vnew, &g.pnew, &g.uold, &g.vold, &g.pold, &g.cu, &g.cv, &g.z, &g.h})
    *a = alloc(n * n);
  return g;
}

constexpr double dt = 90.0, dx = 1.0e5, dy = 1.0e5, alpha = 0.001, a_ = 1.0e6;

// Time-step constants: tdt is dt on the first step and 2 dt afterwards (leapfrog).
struct Step {
  double fsdx = 4.0 / dx, fsdy = 4.0 / dy, tdts8, tdtsdx, tdtsdy;
  explicit Step(long cycle) {
    const double tdt = cycle == 0 ? dt : dt + dt;
    tdts8 = tdt / 8.0;
    tdtsdx = tdt / dx;
    tdtsdy = tdt / dy;
  }
};

// --- calc1 ---
inline void calc1(const Grid& g, const Step& s, long lo, long hi) {
  const long n = g.n, m = n - 1;
  for (long j = lo; j < hi; ++j)
    for (long i = 0; i < m; ++i) {
      g.cu[j * n + i + 1] = 0.5 * (g.p[j * n + i + 1] + g.p[j * n + i]) * g.u[j * n + i + 1];
      g.cv[(j + 1) * n + i] = 0.5 * (g.p[(j + 1) * n + i] + g.p[j * n + i]) * g.v[(j + 1) * n + i];
      g.z[(j + 1) * n + i + 1] = (s.fsdx * (g.v[(j + 1) * n + i + 1] - g.v[(j + 1) * n + i]) -
                                  s.fsdy * (g.u[(j + 1) * n + i + 1] - g.u[j * n + i + 1])) /
                                 (g.p[j * n + i] + g.p[j * n + i + 1] + g.p[(j + 1) * n + i + 1] + g.p[(j + 1) * n + i]);
      g.h[j * n + i] = g.p[j * n + i] + 0.25 * (g.u[j * n + i + 1] * g.u[j * n + i + 1] + g.u[j * n + i] * g.u[j * n + i] +
                                                g.v[(j + 1) * n + i] * g.v[(j + 1) * n + i] + g.v[j * n + i] * g.v[j * n + i]);
    }
}
inline void calc1_top(const Grid& g, long lo, long hi) {  // row 0 from row N
  const long n = g.n, N = n - 1;
  for (long i = lo; i < hi; ++i) {
    g.cv[i] = g.cv[N * n + i];
    g.z[i + 1] = g.z[N * n + i + 1];
  }
}
inline void calc1_bottom(const Grid& g, long lo, long hi) {  // row N from row 0
  const long n = g.n, N = n - 1;
  for (long i = lo; i < hi; ++i) {
    g.cu[N * n + i + 1] = g.cu[i + 1];
    g.h[N * n + i] = g.h[i];
  }
}
inline void calc1_sides(const Grid& g, long lo, long hi) {
  const long n = g.n, M = n - 1;
  for (long j = lo; j < hi; ++j) {
    g.cu[j * n] = g.cu[j * n + M];
    g.cv[j * n + M] = g.cv[j * n];
    g.z[j * n] = g.z[j * n + M];
    g.h[j * n + M] = g.h[j * n];
  }
}

// --- calc2 ---
inline void calc2(const Grid& g, const Step& s, long lo, long hi) {
  const long n = g.n, m = n - 1;
  for (long j = lo; j < hi; ++j)
    for (long i = 0; i < m; ++i) {
      g.unew[j * n + i + 1] = g.uold[j * n + i + 1] +
                              s.tdts8 * (g.z[(j + 1) * n + i + 1] + g.z[j * n + i + 1]) *
                                  (g.cv[(j + 1) * n + i + 1] + g.cv[(j + 1) * n + i] + g.cv[j * n + i] + g.cv[j * n + i + 1]) -
                              s.tdtsdx * (g.h[j * n + i + 1] - g.h[j * n + i]);
      g.vnew[(j + 1) * n + i] = g.vold[(j + 1) * n + i] -
                                s.tdts8 * (g.z[(j + 1) * n + i + 1] + g.z[(j + 1) * n + i]) *
                                    (g.cu[(j + 1) * n + i + 1] + g.cu[(j + 1) * n + i] + g.cu[j * n + i] + g.cu[j * n + i + 1]) -
                                s.tdtsdy * (g.h[(j + 1) * n + i] - g.h[j * n + i]);
      g.pnew[j * n + i] = g.pold[j * n + i] - s.tdtsdx * (g.cu[j * n + i + 1] - g.cu[j * n + i]) -
                          s.tdtsdy * (g.cv[(j + 1) * n + i] - g.cv[j * n + i]);
    }
}
inline void calc2_top(const Grid& g, long lo, long hi) {
  const long n = g.n, N = n - 1;
  for (long i = lo; i < hi; ++i) g.vnew[i] = g.vnew[N * n + i];
}
inline void calc2_bottom(const Grid& g, long lo, long hi) {
  const long n = g.n, N = n - 1;
  for (long i = lo; i < hi; ++i) {
    g.unew[N * n + i + 1] = g.unew[i + 1];
    g.pnew[N * n + i] = g.pnew[i];
  }
}
inline void calc2_sides(const Grid& g, long lo, long hi) {
  const long n = g.n, M = n - 1;
  for (long j = lo; j < hi; ++j) {
    g.unew[j * n] = g.unew[j * n + M];
    g.vnew[j * n + M] = g.vnew[j * n];
    g.pnew[j * n + M] = g.pnew[j * n];
  }
}

// --- calc3 (cycles after the first) ---
inline void calc3(const Grid& g, long lo, long hi) {
  const long n = g.n, m = n - 1;
  for (long j = lo; j < hi; ++j)
    for (long i = 0; i < m; ++i) {
      const long k = j * n + i;
      g.uold[k] = g.u[k] + alpha * (g.unew[k] - 2.0 * g.u[k] + g.uold[k]);
      g.vold[k] = g.v[k] + alpha * (g.vnew[k] - 2.0 * g.v[k] + g.vold[k]);
      g.pold[k] = g.p[k] + alpha * (g.pnew[k] - 2.0 * g.p[k] + g.pold[k]);
      g.u[k] = g.unew[k];
      g.v[k] = g.vnew[k];
      g.p[k] = g.pnew[k];
    }
}
inline void calc3_bottom(const Grid& g, long lo, long hi) {
  const long n = g.n, N = n - 1;
  for (long i = lo; i < hi; ++i)
    for (double* a : {g.uold, g.vold, g.pold, g.u, g.v, g.p}) a[N * n + i] = a[i];
}
inline void calc3_sides(const Grid& g, long lo, long hi) {
  const long n = g.n, M = n - 1;
  for (long j = lo; j < hi; ++j)
    for (double* a : {g.uold, g.vold, g.pold, g.u, g.v, g.p}) a[j * n + M] = a[j * n];
}

// First cycle: old = current, current = new, over whole rows.
inline void first_copy(const Grid& g, long lo, long hi) {
  const long n = g.n;
  for (long k = lo * n; k < hi * n; ++k) {
    g.uold[k] = g.u[k];
    g.vold[k] = g.v[k];
    g.pold[k] = g.p[k];
    g.u[k] = g.unew[k];
    g.v[k] = g.vnew[k];
    g.p[k] = g.pnew[k];
  }
}

// One time step (cycle 0 is the first).
template <class Exec>
void timestep(const Grid& g, long cycle, Exec& ex) {
  const long n = g.n, N = n - 1, M = n - 1;
  const Step s(cycle);
  ex.rows(0, N, {g.cu, g.cv, g.z, g.h}, [&](long lo, long hi) { calc1(g, s, lo, hi); });
  ex.sync();
  ex.edge(0, 0, M, {g.cv, g.z}, [&](long lo, long hi) { calc1_top(g, lo, hi); });
  ex.edge(N, 0, M, {g.cu, g.h}, [&](long lo, long hi) { calc1_bottom(g, lo, hi); });
  ex.sync();
  ex.rows(0, N + 1, {g.cu, g.cv, g.z, g.h}, [&](long lo, long hi) { calc1_sides(g, lo, hi); });
  ex.sync();
  ex.rows(0, N, {g.unew, g.vnew, g.pnew}, [&](long lo, long hi) { calc2(g, s, lo, hi); });
  ex.sync();
  ex.edge(0, 0, M, {g.vnew}, [&](long lo, long hi) { calc2_top(g, lo, hi); });
  ex.edge(N, 0, M, {g.unew, g.pnew}, [&](long lo, long hi) { calc2_bottom(g, lo, hi); });
  ex.sync();
  ex.rows(0, N + 1, {g.unew, g.vnew, g.pnew}, [&](long lo, long hi) { calc2_sides(g, lo, hi); });
  ex.sync();
  if (cycle == 0) {
    ex.rows(0, N + 1, {g.uold, g.vold, g.pold, g.u, g.v, g.p}, [&](long lo, long hi) { first_copy(g, lo, hi); });
    ex.sync();
    return;
  }
  ex.rows(0, N, {g.uold, g.vold, g.pold, g.u, g.v, g.p}, [&](long lo, long hi) { calc3(g, lo, hi); });
  ex.sync();
  ex.edge(N, 0, M, {g.uold, g.vold, g.pold, g.u, g.v, g.p}, [&](long lo, long hi) { calc3_bottom(g, lo, hi); });
  ex.sync();
  ex.rows(0, N + 1, {g.uold, g.vold, g.pold, g.u, g.v, g.p}, [&](long lo, long hi) { calc3_sides(g, lo, hi); });
  ex.sync();
}

// Runs everything itself (the sequential version and the initialization).
struct Serial {
  void rows(long lo, long hi, Written, auto f) { f(lo, hi); }
  void edge(long, long lo, long hi, Written, auto f) { f(lo, hi); }
  void sync() {}
};

// Initial state (stream function psi -> u, v; pressure p), sequential.
inline void init(const Grid& g) {
  const long n = g.n, M = n - 1, N = n - 1;
  const double pi = 4.0 * std::atan(1.0), tpi = pi + pi, di = tpi / M, dj = tpi / N;
  const double el = N * dx, pcf = pi * pi * a_ * a_ / (el * el);
  std::vector<double> psi(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) {
      psi[j * n + i] = a_ * std::sin((i + 0.5) * di) * std::sin((j + 0.5) * dj);
      g.p[j * n + i] = pcf * (std::cos(2.0 * i * di) + std::cos(2.0 * j * dj)) + 50000.0;
    }
  for (long j = 0; j < N; ++j)
    for (long i = 0; i < M; ++i) {
      g.u[j * n + i + 1] = -(psi[(j + 1) * n + i + 1] - psi[j * n + i + 1]) / dy;
      g.v[(j + 1) * n + i] = (psi[(j + 1) * n + i + 1] - psi[(j + 1) * n + i]) / dx;
    }
  for (long i = 0; i < M; ++i) {
    g.u[N * n + i + 1] = g.u[i + 1];
    g.v[i] = g.v[N * n + i];
  }
  for (long j = 0; j <= N; ++j) {
    g.u[j * n] = g.u[j * n + M];
    g.v[j * n + M] = g.v[j * n];
  }
  for (long k = 0; k < n * n; ++k) {
    g.uold[k] = g.u[k];
    g.vold[k] = g.v[k];
    g.pold[k] = g.p[k];
  }
}

inline std::uint64_t sum(const Grid& g) {
  const std::size_t bytes = sizeof(double) * g.n * g.n;
  return app::checksum(g.p, bytes, app::checksum(g.v, bytes, app::checksum(g.u, bytes)));
}

inline std::uint64_t reference(const app::Options& o) {
  std::vector<std::vector<double>> store;
  const Grid g = make_grid(o.n, [&](long count) { return store.emplace_back(count).data(); });
  init(g);
  Serial ex;
  for (long c = 0; c < o.iters; ++c) timestep(g, c, ex);
  return sum(g);
}

}  // namespace shallow
