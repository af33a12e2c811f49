// Inner loops of a marked loop: a descending one (for (j = n - 2; j >= 1; j--), a back
// substitution) has the range it visits, and a counter that several inner loops reuse
// (C89 style) spans the ranges of all of them, so the sections cover every element written.
#include <dsm/dsm.hpp>

void f(double* sh_a, double* sh_x, long n) {
  long i, j;
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    for (j = 0; j < 3; j++) sh_a[i * n + j] = 0;
    for (j = 3; j < n; j++) sh_a[i * n + j] = sh_x[j];
  }
#pragma dsm parallel for
  for (i = 0; i < n; i++) {
    for (j = n - 2; j >= 1; j--) sh_a[i * n + j] = sh_a[i * n + j + 1] * 0.5;
    for (j = n - 1; j > 0; j -= 2) sh_a[i * n + j] += sh_x[j];
  }
}
