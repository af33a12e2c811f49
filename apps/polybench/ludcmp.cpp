// PolyBench/C 4.2.1 ludcmp (LU decomposition, then the two triangular solves), ported. The
// original computes row i of L and U from the rows before it (left-looking), a chain over
// the rows. The port runs the right-looking order a parallel LU uses: at step k, each row
// below k divides its entry in column k by the pivot and subtracts its multiple of row k,
// parallel over the rows. Every entry sees the same subtractions in the same order (k
// ascending) and the same division, so the result is the original's to the bit. The forward
// solve runs by columns the same way (trisolv's port); the backward solve sums each row in
// order of ascending columns, which only a row at a time keeps, so rank 0 runs it alone.
#include "polybench.hpp"

#ifdef MINI_DATASET
#define N 40
#endif
#ifdef SMALL_DATASET
#define N 120
#endif
#ifdef MEDIUM_DATASET
#define N 400
#endif
#ifdef LARGE_DATASET
#define N 2000
#endif

static void init_array(int n, double A[][N], double B[][N], double* b, double* x, double* y) {
  int i, j;
  double fn = (double)n;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    x[i] = 0;
    y[i] = 0;
    b[i] = (i + 1) / fn / 2.0 + 4;
  }

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) A[i][j] = (double)(-j % n) / n + 1;
    for (j = i + 1; j < n; j++) {
      A[i][j] = 0;
    }
    A[i][i] = 1;
  }
  dsm::barrier();

  /* Make the matrix positive semi-definite. */
  /* not necessary for LU, but using same code as cholesky */
  int r, s, t;
#pragma omp parallel for
#pragma dsm parallel for
  for (r = 0; r < n; ++r) {
    for (s = 0; s < n; ++s) B[r][s] = 0;
    for (t = 0; t < n; ++t)
      for (s = 0; s < n; ++s) B[r][s] += A[r][t] * A[s][t];
  }
  dsm::barrier();
#pragma omp parallel for
#pragma dsm parallel for
  for (r = 0; r < n; ++r)
    for (s = 0; s < n; ++s) A[r][s] = B[r][s];
}

static void print_array(int n, double* x) {
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("x");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
  }
  POLYBENCH_DUMP_END("x");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_ludcmp(int n, double A[][N], double* b, double* x, double* y) {
  int i, j, k;

  double w;

  for (k = 0; k < n; k++) {
#pragma omp parallel for
#pragma dsm parallel for
    for (i = k + 1; i < n; i++) {
      A[i][k] = A[i][k] / A[k][k];
      for (j = k + 1; j < n; j++) A[i][j] -= A[i][k] * A[k][j];
    }
    dsm::barrier();
  }

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) y[i] = b[i];
  dsm::barrier();
  for (j = 0; j < n; j++) {
    const double yj = y[j];
#pragma omp parallel for
#pragma dsm parallel for
    for (i = j + 1; i < n; i++) y[i] -= A[i][j] * yj;
    dsm::barrier();
  }

#pragma dsm single
  for (i = n - 1; i >= 0; i--) {
    w = y[i];
    for (j = i + 1; j < n; j++) w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;

  auto sh_A = dsm::alloc<double[N]>(N);
  auto sh_B = dsm::alloc<double[N]>(N);
  double* sh_b = dsm::alloc<double>(N);
  double* sh_x = dsm::alloc<double>(N);
  double* sh_y = dsm::alloc<double>(N);

  init_array(n, sh_A, sh_B, sh_b, sh_x, sh_y);
  {
    polybench::KernelTimer timer;
    kernel_ludcmp(n, sh_A, sh_b, sh_x, sh_y);
  }
  if (dsm::rank() == 0) print_array(n, sh_x);
  dsm::finalize();
  return 0;
}
