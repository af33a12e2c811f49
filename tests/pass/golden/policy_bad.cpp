// Clauses the pragma does not take: each is an error on its line.
#include <dsm/dsm.hpp>

void bad(double* sh_a, long n) {
#pragma dsm parallel for policy(fastest)
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
#pragma dsm parallel for policy shift
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
#pragma dsm parallel for policy(shift
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
#pragma dsm parallel for policy(shift) policy(multi)
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
#pragma dsm parallel for ordered
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
}
