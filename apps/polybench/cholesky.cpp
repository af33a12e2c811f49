// PolyBench/C 4.2.1 cholesky, ported. The original (left-looking: row i from the rows before
// it) is sequential over i; the port runs the right-looking order, which a parallel Cholesky
// uses: at step k, column k is scaled, then the rows below update their lower parts, each
// loop parallel over the rows. Every element sees the same subtractions in the same order
// (k ascending) and the same division or square root, so the result is the original's to
// the bit. The initialization's product B = A A^T is parallel over the rows of B.
#include "polybench.hpp"

#include <cmath>

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

static void init_array(int n, double A[][N], double B[][N]) {
  int i, j;

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

static void print_array(int n, double A[][N]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
    }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_cholesky(int n, double A[][N]) {
  int i, j, k;

  for (k = 0; k < n; k++) {
    // A[k][k] has had all its subtractions: its square root scales column k.
    const double diagonal = std::sqrt(A[k][k]);
#pragma omp parallel for
#pragma dsm parallel for
    for (i = k; i < n; i++) A[i][k] = i == k ? diagonal : A[i][k] / diagonal;
    dsm::barrier();
#pragma omp parallel for
#pragma dsm parallel for
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j <= i; j++) A[i][j] -= A[i][k] * A[j][k];
    dsm::barrier();
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;

  auto sh_A = dsm::alloc<double[N]>(N);
  auto sh_B = dsm::alloc<double[N]>(N);

  init_array(n, sh_A, sh_B);
  {
    polybench::KernelTimer timer;
    kernel_cholesky(n, sh_A);
  }
  if (dsm::rank() == 0) print_array(n, sh_A);
  dsm::finalize();
  return 0;
}
