// `#pragma dsm single` where it cannot go: with a clause, before a declaration, inside a
// marked loop, with no statement after it.
#include <dsm/dsm.hpp>

void f(double* sh_a, long n) {
#pragma dsm single nowait
  sh_a[0] = 1;
#pragma dsm single
  double x = sh_a[0];
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
#pragma dsm single
    sh_a[i] = x;
  }
  {
    sh_a[1] = 2;
#pragma dsm single
  }
}
