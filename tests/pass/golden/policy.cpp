// policy(NAME) clauses: the loop's JSON names the policy, and its Site gets the enumerator
// (the rewritten file compiles). A loop without a clause has no "policy".
#include <dsm/dsm.hpp>

void policies(double* sh_a, long n) {
#pragma dsm parallel for policy(static)
  for (long i = 0; i < n; ++i) sh_a[i] = 0.0;
#pragma dsm parallel for policy(shift)
  for (long i = 0; i < n; ++i) sh_a[i] += 1.0;
#pragma dsm parallel for policy(multi)
  for (long i = 0; i < n; ++i) sh_a[i] += 2.0;
#pragma dsm parallel for policy(locality)
  for (long i = 0; i < n; ++i) sh_a[i] += 3.0;
#pragma dsm parallel for policy( fgdls )
  for (long i = 0; i < n; ++i) sh_a[i] += 4.0;
#pragma dsm parallel for policy(auto)
  for (long i = 0; i < n; ++i) sh_a[i] += 5.0;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_a[i] += 6.0;
}
