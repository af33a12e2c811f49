// Run-time offsets, pointer arithmetic, and a struct holding the shared array.
#include <dsm/dsm.hpp>

struct Field {
  double* sh_v;
  long n;
};

void shift(double* sh_a, const double* sh_b, long off, long n, Field f) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i + off] = *(sh_b + i + 2 * off);
    f.sh_v[i * f.n] += 1.0;
  }
}
