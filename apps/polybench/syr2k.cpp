// PolyBench/C 4.2.1 syr2k (symmetric rank-2k update of the lower triangle of C), ported:
// parallel over the rows of C, which each iteration alone writes, in the original's order.
#include "polybench.hpp"

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

static void init_array(int n, int m, double* alpha, double* beta, double C[][N], double A[][M], double B[][M]) {
  int i, j;

  *alpha = 1.5;
  *beta = 1.2;
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % m) / m;
    }
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = (double)((i * j + 3) % n) / m;
    }
}

static void print_array(int n, double C[][N]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("C");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
    }
  POLYBENCH_DUMP_END("C");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_syr2k(int n, int m, double alpha, double beta, double C[][N], double A[][M], double B[][M]) {
  int i, j, k;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) {
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
      }
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;
  int m = M;

  double alpha;
  double beta;
  auto sh_C = dsm::alloc<double[N]>(N);
  auto sh_A = dsm::alloc<double[M]>(N);
  auto sh_B = dsm::alloc<double[M]>(N);

  init_array(n, m, &alpha, &beta, sh_C, sh_A, sh_B);
  {
    polybench::KernelTimer timer;
    kernel_syr2k(n, m, alpha, beta, sh_C, sh_A, sh_B);
  }
  if (dsm::rank() == 0) print_array(n, sh_C);
  dsm::finalize();
  return 0;
}
