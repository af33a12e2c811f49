// Marks the pass does not read, each an error rather than a loop left sequential in silence:
// _Pragma (its text is a string, often in a macro), and the name in another case.
#include <dsm/dsm.hpp>

#define PARALLEL _Pragma("dsm parallel for")

void marks(double* sh_a, long n) {
  _Pragma("dsm parallel for")
  for (long i = 0; i < n; ++i) sh_a[i] = 1.0;
  PARALLEL
  for (long i = 0; i < n; ++i) sh_a[i] = 2.0;
#pragma DSM parallel for
  for (long i = 0; i < n; ++i) sh_a[i] = 3.0;
#pragma Dsm parallel for
  for (long i = 0; i < n; ++i) sh_a[i] = 4.0;
#pragma dSM parallel for
  for (long i = 0; i < n; ++i) sh_a[i] = 5.0;
}
