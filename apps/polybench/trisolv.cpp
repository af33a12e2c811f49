// PolyBench/C 4.2.1 trisolv (forward substitution L x = b), ported. The original computes
// x[i] from the x[j] before it, a chain no loop of it can split. The port runs it by
// columns, as a parallel triangular solve does: at step j, x[j] is final and is divided by
// the diagonal, then the rows below subtract its term, parallel over the rows. Each x[i]
// still sees its subtractions in order of j and then its division, so the result is the
// original's to the bit.
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

static void init_array(int n, double L[][N], double* x, double* b) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    x[i] = -999;
    b[i] = i;
    for (j = 0; j <= i; j++) L[i][j] = (double)(i + n - j + 1) * 2 / n;
  }
}

static void print_array(int n, double* x) {
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("x");
  for (i = 0; i < n; i++) {
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
  }
  POLYBENCH_DUMP_END("x");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_trisolv(int n, double L[][N], double* x, double* b) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) x[i] = b[i];
  dsm::barrier();
  for (j = 0; j < n; j++) {
    // x[j] has had all its subtractions: every rank divides it alike and uses the quotient.
    const double xj = x[j] / L[j][j];
#pragma omp parallel for
#pragma dsm parallel for
    for (i = j; i < n; i++) x[i] = i == j ? xj : x[i] - L[i][j] * xj;
    dsm::barrier();
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;

  auto sh_L = dsm::alloc<double[N]>(N);
  double* sh_x = dsm::alloc<double>(N);
  double* sh_b = dsm::alloc<double>(N);

  init_array(n, sh_L, sh_x, sh_b);
  {
    polybench::KernelTimer timer;
    kernel_trisolv(n, sh_L, sh_x, sh_b);
  }
  if (dsm::rank() == 0) print_array(n, sh_x);
  dsm::finalize();
  return 0;
}
