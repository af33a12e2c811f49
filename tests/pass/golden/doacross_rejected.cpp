// What a doacross nest may not be: each marked nest is refused, naming the line.
#include <dsm/dsm.hpp>

void nests(double* sh_a, double* sh_b, long n) {
  long last = 0;
#pragma dsm parallel for ordered(3)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) sh_a[i * n + j] = sh_a[(i - 1) * n + j];

#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n; ++i) {
    sh_a[i * n] = 0;
    for (long j = 1; j < n; ++j) sh_a[i * n + j] = sh_a[(i - 1) * n + j];
  }

#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) sh_a[i * n + j] = sh_a[(i - 1) * n + j % 5];

#pragma dsm parallel for ordered(2)
  for (long i = 2; i < n; ++i)
    for (long j = 1; j < n; ++j) {
#pragma dsm ordered depend(sink: i - 1, j)
      sh_a[i * n + j] = sh_a[(i - 2) * n + j];
#pragma dsm ordered depend(source)
    }

#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) {
      sh_a[i * n + j] = 1;
      sh_a[(i - 1) * n + j] += 1;
    }

#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) {
#pragma dsm ordered depend(sink: i - 2, j)
      sh_a[i * n + j] = sh_a[(i - 2) * n + j];
#pragma dsm ordered depend(source)
    }

#pragma dsm parallel for ordered(2)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) {
#pragma dsm ordered depend(sink: i - 1, j)
      sh_a[i * n + j] = sh_a[(i - 1) * n + j];
      sh_b[i * n + j] = 1;
#pragma dsm ordered depend(source)
    }

#pragma dsm parallel for ordered(2) lastprivate(last)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; ++j) {
      sh_a[i * n + j] = sh_a[(i - 1) * n + j];
      last = j;
    }

#pragma dsm parallel for ordered(2) policy(shift)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < n; j += 2) {
#pragma dsm ordered depend(sink: i - 1, j)
      sh_a[i * n + j] = sh_a[(i - 1) * n + j];
    }

#pragma dsm parallel for
  for (long i = 1; i < n; ++i) {
#pragma dsm ordered depend(sink: i - 1)
    sh_b[i] = sh_b[i - 1];
  }

#pragma dsm ordered depend(sink i - 1)
  sh_b[0] = 1;
}
