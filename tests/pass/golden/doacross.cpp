// Doacross nests: ordered(2) with OpenMP's depend clauses, run as a pipeline. A 9-point
// Gauss-Seidel on a flat array (lookahead 1), a 5-point one on a 2-D array (lookahead 0),
// an unsigned counter declared before the nest; a 9-point SOR without depend clauses,
// whose lookahead (1) the pass derives, with a reduction, and a nest whose clauses miss the read two columns
// ahead in the row above (warned of; lookahead 2).
#include <dsm/dsm.hpp>

constexpr long N = 64;

void gs9(double* sh_a, long n) {
#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 1; ++j) {
#pragma dsm ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)
      sh_a[i * n + j] = (sh_a[(i - 1) * n + j - 1] + sh_a[(i - 1) * n + j] + sh_a[(i - 1) * n + j + 1] +
                         sh_a[i * n + j - 1] + sh_a[i * n + j] + sh_a[i * n + j + 1] + sh_a[(i + 1) * n + j - 1] +
                         sh_a[(i + 1) * n + j] + sh_a[(i + 1) * n + j + 1]) / 9.0;
#pragma dsm ordered depend(source)
    }
}

void gs5(double (*sh_g)[N]) {
#pragma dsm parallel for ordered(2)
  for (long i = 1; i < N - 1; ++i)
    for (long j = 1; j <= N - 2; ++j) {
#pragma dsm ordered depend(sink: i - 1, j) depend(sink: i, j - 1)
      sh_g[i][j] = 0.25 * (sh_g[i - 1][j] + sh_g[i + 1][j] + sh_g[i][j - 1] + sh_g[i][j + 1]);
#pragma dsm ordered depend(source)
    }
}

void wavefront(long* sh_w, unsigned n) {
  unsigned i, j;
#pragma dsm parallel for ordered(2)
  for (i = 1; i < n; ++i)
    for (j = 1; j < n; ++j) {
#pragma dsm ordered depend(sink: i - 1, j) depend(sink: i, j - 1)
      sh_w[i * n + j] = sh_w[(i - 1) * n + j] + sh_w[i * n + j - 1];
#pragma dsm ordered depend(source)
    }
}

double sor9(double* sh_a, long n, double w) {
  double moved = 0;
#pragma dsm parallel for ordered(2) reduction(+: moved)
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 1; ++j) {
      const double d = w * ((sh_a[(i - 1) * n + j - 1] + sh_a[(i - 1) * n + j] + sh_a[(i - 1) * n + j + 1] +
                             sh_a[i * n + j - 1] + sh_a[i * n + j + 1] + sh_a[(i + 1) * n + j - 1] +
                             sh_a[(i + 1) * n + j] + sh_a[(i + 1) * n + j + 1]) / 8.0 - sh_a[i * n + j]);
      sh_a[i * n + j] += d;
      moved += d * d;
    }
  return moved;
}

void far(double* sh_a, long n) {
#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 3; ++j) {
#pragma dsm ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)
      sh_a[i * n + j] = 0.5 * (sh_a[(i - 1) * n + j + 2] + sh_a[i * n + j - 1]);
#pragma dsm ordered depend(source)
    }
}
