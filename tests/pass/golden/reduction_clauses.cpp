// reduction(op: list) clauses: each operator of OpenMP's, several variables in one clause and
// several clauses on one loop; the variables may be written by the loop. Malformed clauses,
// unknown operators and a variable named in two clauses are refused.
#include <dsm/dsm.hpp>

void f(double* sh_a, long n) {
  double sum = 0, lo = 1e9, hi = -1e9, prod = 1;
  long bits = 0, mask = -1, flip = 0;
  bool all = true, any = false;
#pragma dsm parallel for reduction(+: sum) reduction(min: lo) reduction(max : hi) reduction(*:prod)
  for (long i = 0; i < n; ++i) {
    sum += sh_a[i];
    lo = sh_a[i] < lo ? sh_a[i] : lo;
    hi = sh_a[i] > hi ? sh_a[i] : hi;
    prod *= sh_a[i];
  }
#pragma dsm parallel for reduction(|: bits) reduction(^: flip) reduction(&: mask) reduction(&&: all) reduction(||: any)
  for (long i = 0; i < n; ++i) {
    bits |= i;
    flip ^= i;
    mask &= i;
    all = all && sh_a[i] > 0;
    any = any || sh_a[i] > 0;
  }
#pragma dsm parallel for reduction(-: sum) private(lo)
  for (long i = 0; i < n; ++i) {
    lo = sh_a[i];
    sum -= lo;
  }
#pragma dsm parallel for reduction(/: sum)
  for (long i = 0; i < n; ++i) sum /= 2;
#pragma dsm parallel for reduction(+ sum)
  for (long i = 0; i < n; ++i) sum += 1;
#pragma dsm parallel for reduction(+: sum) private(sum)
  for (long i = 0; i < n; ++i) sum += 1;
#pragma dsm parallel for reduction(+: sum,)
  for (long i = 0; i < n; ++i) sum += 1;
}
