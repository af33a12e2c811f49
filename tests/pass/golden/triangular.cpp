// Triangular inner loops: bounds that depend on i are widened over i's whole range.
#include <dsm/dsm.hpp>

void lower(double* sh_l, const double* sh_a, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j <= i; ++j) sh_l[i * n + j] = sh_a[i * n + j];
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = i + 1; j < n; ++j) sh_l[i * n + j] = 0.0;
}
