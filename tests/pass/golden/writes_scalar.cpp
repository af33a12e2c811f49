// Writes of variables declared outside the loop: each rank runs only some iterations, so a
// sum, a counter or a member would end with this rank's part of the work.
#include <dsm/dsm.hpp>

void bump(double& v);

struct Counter {
  long count = 0;
  void run(double* sh_a, long n) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) {
      sh_a[i] = 1.0;
      ++count;
    }
  }
};

void reductions(double* sh_a, double& total, long n) {
  double sum = 0;
  long k = 0;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i] = static_cast<double>(i);
    sum += sh_a[i];
    k = k + 1;
    total += 1.0;
  }
  double alias = 0;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    double& r = alias;
    r = sh_a[i];
    static long calls = 0;
    ++calls;
    bump(sum);
  }
}

