// Steps above one, `<=` bounds, and a coefficient that is not one.
#include <dsm/dsm.hpp>

void odd(long* sh_a, const long* sh_b, long n, long s) {
#pragma dsm parallel for
  for (long i = 0; i <= n; i += 2) sh_a[2 * i + 1] = sh_b[i];
#pragma dsm parallel for
  for (long i = 0; i < n; i += s) sh_a[i] = 0;
}
