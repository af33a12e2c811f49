// PolyBench/C 4.2.1 bicg (BiCG sub-kernel: s = A^T r, q = A p), ported. The s loop is
// interchanged (j outer) so that it is parallel; each s[j] still adds the r[i] * A[i][j] in
// order of i, so the result is the original's to the bit.
#include "polybench.hpp"

#ifdef MINI_DATASET
#define M 38
#define N 42
#endif
#ifdef SMALL_DATASET
#define M 116
#define N 124
#endif
#ifdef MEDIUM_DATASET
#define M 390
#define N 410
#endif
#ifdef LARGE_DATASET
#define M 1900
#define N 2100
#endif

static void init_array(int m, int n, double A[][M], double* r, double* p) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < m; i++) p[i] = (double)(i % m) / m;
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    r[i] = (double)(i % n) / n;
    for (j = 0; j < m; j++) A[i][j] = (double)(i * (j + 1) % n) / n;
  }
}

static void print_array(int m, int n, double* s, double* q) {
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("s");
  for (i = 0; i < m; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, s[i]);
  }
  POLYBENCH_DUMP_END("s");
  POLYBENCH_DUMP_BEGIN("q");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, q[i]);
  }
  POLYBENCH_DUMP_END("q");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_bicg(int m, int n, double A[][M], double* s, double* q, double* p, double* r) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (j = 0; j < m; j++) {
    s[j] = 0;
    for (i = 0; i < n; i++) s[j] = s[j] + r[i] * A[i][j];
  }
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) q[i] = q[i] + A[i][j] * p[j];
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;
  int m = M;

  auto sh_A = dsm::alloc<double[M]>(N);
  double* sh_s = dsm::alloc<double>(M);
  double* sh_q = dsm::alloc<double>(N);
  double* sh_p = dsm::alloc<double>(M);
  double* sh_r = dsm::alloc<double>(N);

  init_array(m, n, sh_A, sh_r, sh_p);
  {
    polybench::KernelTimer timer;
    kernel_bicg(m, n, sh_A, sh_s, sh_q, sh_p, sh_r);
  }
  if (dsm::rank() == 0) print_array(m, n, sh_s, sh_q);
  dsm::finalize();
  return 0;
}
