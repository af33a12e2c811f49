// Subscripts that are not affine in i give whole-array descriptors and a warning.
#include <dsm/dsm.hpp>

void irregular(double* sh_a, double* sh_b, double* sh_c, double* sh_d, const long* idx, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i * i] = 1.0;
    sh_b[idx[i]] = 2.0;
    long k = i;
    k = k * 3 % n;
    sh_c[k] = 3.0;
    sh_d[i / 2] += sh_d[i];
  }
}
