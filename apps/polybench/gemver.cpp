// PolyBench/C 4.2.1 gemver (vector multiplication and matrix addition), ported. Each of its
// four loops is parallel over i as written, with a barrier after each loop whose writes the
// next reads (OpenMP's implicit one); every element keeps the original's order of
// operations, so the result is the original's to the bit.
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

static void init_array(int n, double* alpha, double* beta, double A[][N], double* u1, double* v1, double* u2,
                       double* v2, double* w, double* x, double* y, double* z) {
  int i, j;

  *alpha = 1.5;
  *beta = 1.2;

  double fn = (double)n;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (j = 0; j < n; j++) A[i][j] = (double)(i * j % n) / n;
  }
}

static void print_array(int n, double* w) {
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("w");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, w[i]);
  }
  POLYBENCH_DUMP_END("w");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_gemver(int n, double alpha, double beta, double A[][N], double* u1, double* v1, double* u2,
                          double* v2, double* w, double* x, double* y, double* z) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) x[i] = x[i] + beta * A[j][i] * y[j];
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) x[i] = x[i] + z[i];
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) w[i] = w[i] + alpha * A[i][j] * x[j];
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;

  double alpha;
  double beta;
  auto sh_A = dsm::alloc<double[N]>(N);
  double* sh_u1 = dsm::alloc<double>(N);
  double* sh_v1 = dsm::alloc<double>(N);
  double* sh_u2 = dsm::alloc<double>(N);
  double* sh_v2 = dsm::alloc<double>(N);
  double* sh_w = dsm::alloc<double>(N);
  double* sh_x = dsm::alloc<double>(N);
  double* sh_y = dsm::alloc<double>(N);
  double* sh_z = dsm::alloc<double>(N);

  init_array(n, &alpha, &beta, sh_A, sh_u1, sh_v1, sh_u2, sh_v2, sh_w, sh_x, sh_y, sh_z);
  {
    polybench::KernelTimer timer;
    kernel_gemver(n, alpha, beta, sh_A, sh_u1, sh_v1, sh_u2, sh_v2, sh_w, sh_x, sh_y, sh_z);
  }
  if (dsm::rank() == 0) print_array(n, sh_w);
  dsm::finalize();
  return 0;
}
