// PolyBench/C 4.2.1 correlation (the correlation matrix of M variables over N samples),
// ported: the column means and deviations are parallel over the columns, the centring over
// the rows, and the matrix over its rows (iteration i writes row i's upper part and column
// i's lower part, which no other iteration writes); one barrier after each loop whose writes
// the next reads. Each element keeps the original's order of operations.
#include "polybench.hpp"

#include <cmath>

#ifdef MINI_DATASET
#define M 28
#define N 32
#endif
#ifdef SMALL_DATASET
#define M 80
#define N 100
#endif
#ifdef MEDIUM_DATASET
#define M 240
#define N 260
#endif
#ifdef LARGE_DATASET
#define M 1200
#define N 1400
#endif

static void init_array(int m, int n, double* float_n, double data[][M]) {
  int i, j;

  *float_n = (double)N;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) data[i][j] = (double)(i * j) / M + i;
}

static void print_array(int m, double corr[][M]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("corr");
  for (i = 0; i < m; i++)
    for (j = 0; j < m; j++) {
      if ((i * m + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, corr[i][j]);
    }
  POLYBENCH_DUMP_END("corr");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_correlation(int m, int n, double float_n, double data[][M], double corr[][M], double* mean,
                               double* stddev) {
  int i, j, k;

  double eps = 0.1;

#pragma omp parallel for
#pragma dsm parallel for
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++) mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < n; i++) stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = std::sqrt(stddev[j]);
    /* The following in an inelegant but usual way to handle
       near-zero std. dev. values, which below would cause a zero-
       divide. */
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
  dsm::barrier();

  /* Center and reduce the column vectors. */
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= std::sqrt(float_n) * stddev[j];
    }
  dsm::barrier();

  /* Calculate the m * m correlation matrix. */
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < m - 1; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (k = 0; k < n; k++) corr[i][j] += (data[k][i] * data[k][j]);
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = 1.0;
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int n = N;
  int m = M;

  double float_n;
  auto sh_data = dsm::alloc<double[M]>(N);
  auto sh_corr = dsm::alloc<double[M]>(M);
  double* sh_mean = dsm::alloc<double>(M);
  double* sh_stddev = dsm::alloc<double>(M);

  init_array(m, n, &float_n, sh_data);
  {
    polybench::KernelTimer timer;
    kernel_correlation(m, n, float_n, sh_data, sh_corr, sh_mean, sh_stddev);
  }
  if (dsm::rank() == 0) print_array(m, sh_corr);
  dsm::finalize();
  return 0;
}
