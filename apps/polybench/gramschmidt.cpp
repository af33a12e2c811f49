// PolyBench/C 4.2.1 gramschmidt (QR by modified Gram-Schmidt), ported. At step k one rank
// computes the norm of column k as the original does (a sum in order of the rows), in a
// `single` as OpenMP's serial part: run by every rank, it would have each read a page per row
// for one word of it. The rows of Q's column k are scaled in parallel, and the columns after
// k are projected out in parallel over the columns: each column's dot product and update run
// over the rows in the original's order, so the result is the original's to the bit.
#include "polybench.hpp"

#include <cmath>

#ifdef MINI_DATASET
#define M 20
#define N 30
#endif
#ifdef SMALL_DATASET
#define M 60
#define N 80
#endif
#ifdef MEDIUM_DATASET
#define M 200
#define N 240
#endif
#ifdef LARGE_DATASET
#define M 1000
#define N 1200
#endif

static void init_array(int m, int n, double A[][N], double R[][N], double Q[][N]) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (((double)((i * j) % m) / m) * 100) + 10;
      Q[i][j] = 0.0;
    }
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) R[i][j] = 0.0;
}

static void print_array(int m, int n, double A[][N], double R[][N], double Q[][N]) {
  int i, j;
  (void)A;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("R");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, R[i][j]);
    }
  POLYBENCH_DUMP_END("R");

  POLYBENCH_DUMP_BEGIN("Q");
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, Q[i][j]);
    }
  POLYBENCH_DUMP_END("Q");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_gramschmidt(int m, int n, double A[][N], double R[][N], double Q[][N]) {
  int i, j, k;

  double nrm;

  for (k = 0; k < n; k++) {
#pragma dsm single
    {
      nrm = 0.0;
      for (i = 0; i < m; i++) nrm += A[i][k] * A[i][k];
      R[k][k] = std::sqrt(nrm);
    }
#pragma omp parallel for
#pragma dsm parallel for
    for (i = 0; i < m; i++) Q[i][k] = A[i][k] / R[k][k];
    dsm::barrier();
#pragma omp parallel for
#pragma dsm parallel for
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < m; i++) R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++) A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
    dsm::barrier();
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int m = M;
  int n = N;

  auto sh_A = dsm::alloc<double[N]>(M);
  auto sh_R = dsm::alloc<double[N]>(N);
  auto sh_Q = dsm::alloc<double[N]>(M);

  init_array(m, n, sh_A, sh_R, sh_Q);
  {
    polybench::KernelTimer timer;
    kernel_gramschmidt(m, n, sh_A, sh_R, sh_Q);
  }
  if (dsm::rank() == 0) print_array(m, n, sh_A, sh_R, sh_Q);
  dsm::finalize();
  return 0;
}
