// PolyBench/C 4.2.1 jacobi-1d (a 3-point stencil, TSTEPS sweeps of two loops), ported. Each
// loop is parallel; a barrier between them makes one's writes visible to the next (OpenMP's
// implicit barrier at the end of a parallel loop).
#include "polybench.hpp"

#ifdef MINI_DATASET
#define TSTEPS 20
#define N 30
#endif
#ifdef SMALL_DATASET
#define TSTEPS 40
#define N 120
#endif
#ifdef MEDIUM_DATASET
#define TSTEPS 100
#define N 400
#endif
#ifdef LARGE_DATASET
#define TSTEPS 500
#define N 2000
#endif

static void init_array(int n, double* A, double* B) {
  int i;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    A[i] = ((double)i + 2) / n;
    B[i] = ((double)i + 3) / n;
  }
}

static void print_array(int n, double* A) {
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i]);
  }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_jacobi_1d(int tsteps, int n, double* A, double* B) {
  int t, i;

  for (t = 0; t < tsteps; t++) {
#pragma omp parallel for
#pragma dsm parallel for
    for (i = 1; i < n - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    dsm::barrier();
#pragma omp parallel for
#pragma dsm parallel for
    for (i = 1; i < n - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
    dsm::barrier();
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;
  int tsteps = TSTEPS;

  double* sh_A = dsm::alloc<double>(N);
  double* sh_B = dsm::alloc<double>(N);

  init_array(n, sh_A, sh_B);
  {
    polybench::KernelTimer timer;
    kernel_jacobi_1d(tsteps, n, sh_A, sh_B);
  }
  if (dsm::rank() == 0) print_array(n, sh_A);
  dsm::finalize();
  return 0;
}
