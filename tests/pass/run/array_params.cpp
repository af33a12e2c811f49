// Kernels written as OpenMP code writes them: plain parameter names, 2-D arrays as
// `double a[][N]`, the arrays passed on through a second function. The pass traces each
// parameter to the sh_ arrays of every call. Small integers in doubles, so results are exact.
// Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

constexpr long N = 120;

void init(long n, double a[][N], double* x) {
  long i, j;
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    x[i] = static_cast<double>(i % 13);
    for (j = 0; j < n; j++) a[i][j] = static_cast<double>((i * j + 3) % 17);
  }
}

void matvec(long n, const double a[][N], const double* x, double* y) {
#pragma dsm parallel for
  for (long i = 0; i < n; i++) {
    double s = 0;
    for (long j = 0; j < n; j++) s += a[i][j] * x[j];
    y[i] = s;
  }
}

void smooth(long n, double* in, double* out) {
#pragma dsm parallel for
  for (long i = 1; i < n - 1; i++) out[i] = in[i - 1] + 2 * in[i] + in[i + 1];
}

void step(long n, const double a[][N], double* x, double* y, double* z) {
  matvec(n, a, x, y);
  dsm::barrier();
  smooth(n, y, z);
  dsm::barrier();
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  auto sh_a = dsm::alloc<double[N]>(N);
  double* sh_x = dsm::alloc<double>(N);
  double* sh_y = dsm::alloc<double>(N);
  double* sh_z = dsm::alloc<double>(N);
  init(N, sh_a, sh_x);
  dsm::barrier();
  step(N, sh_a, sh_x, sh_y, sh_z);
  step(N, sh_a, sh_z, sh_x, sh_y);
  if (dsm::rank() == 0) {
    double sum = 0;
    for (long i = 0; i < N; i++) sum += sh_y[i] * static_cast<double>(i % 7 + 1);
    std::printf("weighted sum %.1f\n", sum);
  }
  dsm::finalize();
}
