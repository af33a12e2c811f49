// Array parameters that receive an sh_ array at every call in the file stand for it: the
// loops inside their functions are described through them, with no renaming. One traced
// through another function's parameter, one given an ordinary array at a call, and one
// whose function's address is taken stay unshared (the write through them is an error).
#include <dsm/dsm.hpp>

void scale(double* out, const double* in, long n) {
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) out[i] = in[i - 1] + in[i + 1];
}

void twice(double* x, double* y, long n) {
  scale(x, y, n);
  scale(y + 1, x, n - 1);
}

void fill(double* a, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) a[i] = 0;
}

void pointed(double* a, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) a[i] = 1;
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 1000;
  double* sh_u = dsm::alloc<double>(n);
  double* sh_v = dsm::alloc<double>(n);
  scale(sh_u, &sh_v[0], n);
  twice(sh_v, sh_u, n);
  double local[8];
  fill(sh_u, n);
  fill(local, 8);
  void (*f)(double*, long) = pointed;
  pointed(sh_u, n);
  f(sh_v, n);
  dsm::finalize();
}
