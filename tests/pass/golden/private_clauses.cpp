// private(...) and firstprivate(...) clauses: the variables they name may be written by the
// loop; another variable declared before the loop may not. Malformed lists are refused.
#include <dsm/dsm.hpp>

void f(double* sh_a, long n) {
  double t = 0, u = 0, sum = 0;
#pragma dsm parallel for private(t) firstprivate(u)
  for (long i = 0; i < n; ++i) {
    t = i * 2.0;
    u += t;
    sum += u;
    sh_a[i] = t + u;
  }
#pragma dsm parallel for private(t,)
  for (long i = 0; i < n; ++i) sh_a[i] = 0;
#pragma dsm parallel for private t
  for (long i = 0; i < n; ++i) sh_a[i] = 0;
#pragma dsm parallel for reduction(+: sum)
  for (long i = 0; i < n; ++i) sh_a[i] = 0;
}
