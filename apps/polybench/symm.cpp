// PolyBench/C 4.2.1 symm (C = alpha A B + beta C, A symmetric, its lower triangle stored),
// ported. The original's i loop carries a dependence through C[k][j], k < i; its j loop does
// not: the port runs j outermost, parallel, and keeps for each column the original's order
// of operations, so the result is the original's to the bit.
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

static void init_array(int m, int n, double* alpha, double* beta, double C[][N], double A[][M], double B[][N]) {
  int i, j;

  *alpha = 1.5;
  *beta = 1.2;
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = (double)((i + j) % 100) / m;
      B[i][j] = (double)((n + i - j) % 100) / m;
    }
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < m; i++) {
    for (j = 0; j <= i; j++) A[i][j] = (double)((i + j) % 100) / m;
    for (j = i + 1; j < m; j++) A[i][j] = -999;  // regions of arrays that should not be used
  }
}

static void print_array(int m, int n, double C[][N]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("C");
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      if ((i * m + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
    }
  POLYBENCH_DUMP_END("C");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_symm(int m, int n, double alpha, double beta, double C[][N], double A[][M], double B[][N]) {
  int i, j, k;
  double temp2;

#pragma omp parallel for private(temp2)
#pragma dsm parallel for private(temp2)
  for (j = 0; j < n; j++)
    for (i = 0; i < m; i++) {
      temp2 = 0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int m = M;
  int n = N;

  double alpha;
  double beta;
  auto sh_C = dsm::alloc<double[N]>(M);
  auto sh_A = dsm::alloc<double[M]>(M);
  auto sh_B = dsm::alloc<double[N]>(M);

  init_array(m, n, &alpha, &beta, sh_C, sh_A, sh_B);
  {
    polybench::KernelTimer timer;
    kernel_symm(m, n, alpha, beta, sh_C, sh_A, sh_B);
  }
  if (dsm::rank() == 0) print_array(m, n, sh_C);
  dsm::finalize();
  return 0;
}
