// Loop counters declared before the loops (C89 style): the marked loop and its inner loops
// are canonical, the inner counters are private (no error for writing them), and the
// sections are those of counters declared in the headers. A counter the body also writes is
// private as well; the subscripts it is in are then not affine (whole array, a warning).
#include <dsm/dsm.hpp>

void stencil(long n, const double* sh_in, double* sh_out) {
  long i, j, k;
#pragma dsm parallel for
  for (i = 1; i < n - 1; i++)
    for (j = 1; j < n - 1; j += 1) {
      double s = 0;
      for (k = 0; k < 3; ++k) s += sh_in[(i - 1 + k) * n + j];
      sh_out[i * n + j] = s / 3;
    }
}

void skips(long n, double* sh_out) {
  long i, j;
#pragma dsm parallel for
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      sh_out[i * n + j] = 0;
      if (sh_out[j] > 1) j += 2;
    }
}
