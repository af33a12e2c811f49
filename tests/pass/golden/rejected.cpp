// Loops the pass cannot rewrite: each gets an error with its line.
#include <dsm/dsm.hpp>

long rejected(double* sh_a, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    if (sh_a[i] < 0) break;
  }
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    if (sh_a[i] < 0) return i;
#pragma dsm parallel for
  for (long i = n - 1; i >= 0; --i) sh_a[i] = 0;
#pragma dsm parallel for
  for (long i = 0; i != n; ++i) sh_a[i] = 0;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i] = 0;
    i += 1;
  }
  long m = n;
#pragma dsm parallel for
  for (long i = 0; i < m; ++i) m = m - 1;
#pragma dsm parallel for
  {
  }
#pragma dsm parallel
  for (long i = 0; i < n; ++i) sh_a[i] = 1;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
#pragma dsm parallel for
    for (long j = 0; j < n; ++j) sh_a[j] = 1;
  }
  return 0;
}
