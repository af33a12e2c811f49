// PolyBench/C 4.2.1 adi (alternating direction implicit solver), ported: each time step's
// column sweep and row sweep are parallel over i (each iteration solves its own line), with
// a barrier after each sweep, whose writes the other reads.
#include "polybench.hpp"

#ifdef MINI_DATASET
#define TSTEPS 20
#define N 20
#endif
#ifdef SMALL_DATASET
#define TSTEPS 40
#define N 60
#endif
#ifdef MEDIUM_DATASET
#define TSTEPS 100
#define N 200
#endif
#ifdef LARGE_DATASET
#define TSTEPS 500
#define N 1000
#endif

static void init_array(int n, double u[][N]) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      u[i][j] = (double)(i + n - j) / n;
    }
}

static void print_array(int n, double u[][N]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("u");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, u[i][j]);
    }
  POLYBENCH_DUMP_END("u");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_adi(int tsteps, int n, double u[][N], double v[][N], double p[][N], double q[][N]) {
  int t, i, j;
  double DX, DY, DT;
  double B1, B2;
  double mul1, mul2;
  double a, b, c, d, e, f;

  DX = 1.0 / (double)n;
  DY = 1.0 / (double)n;
  DT = 1.0 / (double)tsteps;
  B1 = 2.0;
  B2 = 1.0;
  mul1 = B1 * DT / (DX * DX);
  mul2 = B2 * DT / (DY * DY);

  a = -mul1 / 2.0;
  b = 1.0 + mul1;
  c = a;
  d = -mul2 / 2.0;
  e = 1.0 + mul2;
  f = d;

  for (t = 1; t <= tsteps; t++) {
    // Column Sweep
#pragma omp parallel for
#pragma dsm parallel for
    for (i = 1; i < n - 1; i++) {
      v[0][i] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = v[0][i];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -c / (a * p[i][j - 1] + b);
        q[i][j] = (-d * u[j][i - 1] + (1.0 + 2.0 * d) * u[j][i] - f * u[j][i + 1] - a * q[i][j - 1]) /
                  (a * p[i][j - 1] + b);
      }
      v[n - 1][i] = 1.0;
      for (j = n - 2; j >= 1; j--) {
        v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
      }
    }
    dsm::barrier();
    // Row Sweep
#pragma omp parallel for
#pragma dsm parallel for
    for (i = 1; i < n - 1; i++) {
      u[i][0] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -f / (d * p[i][j - 1] + e);
        q[i][j] = (-a * v[i - 1][j] + (1.0 + 2.0 * a) * v[i][j] - c * v[i + 1][j] - d * q[i][j - 1]) /
                  (d * p[i][j - 1] + e);
      }
      u[i][n - 1] = 1.0;
      for (j = n - 2; j >= 1; j--) {
        u[i][j] = p[i][j] * u[i][j + 1] + q[i][j];
      }
    }
    dsm::barrier();
  }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;
  int tsteps = TSTEPS;

  auto sh_u = dsm::alloc<double[N]>(N);
  auto sh_v = dsm::alloc<double[N]>(N);
  auto sh_p = dsm::alloc<double[N]>(N);
  auto sh_q = dsm::alloc<double[N]>(N);

  init_array(n, sh_u);
  {
    polybench::KernelTimer timer;
    kernel_adi(tsteps, n, sh_u, sh_v, sh_p, sh_q);
  }
  if (dsm::rank() == 0) print_array(n, sh_u);
  dsm::finalize();
  return 0;
}
