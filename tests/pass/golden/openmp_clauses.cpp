// OpenMP's other loop clauses: schedule(KIND[, chunk]) chooses the loop's policy (static:
// equal blocks; dynamic, guided: the balancer; auto, runtime: the run's), nowait is
// accepted, collapse(N) needs N perfectly nested loops, lastprivate(list) names variables the
// loop writes, and commas may separate clauses.
// Malformed ones, and a schedule beside a policy, are refused.
#include <dsm/dsm.hpp>

#define CHUNK 8

void f(double* sh_a, long n) {
#pragma dsm parallel for schedule(static)
  for (long i = 0; i < n; ++i) sh_a[i] = 1;
#pragma dsm parallel for schedule(dynamic, CHUNK * 2) nowait
  for (long i = 0; i < n; ++i) sh_a[i] = 2;
#pragma dsm parallel for schedule(guided), nowait
  for (long i = 0; i < n; ++i) sh_a[i] = 3;
#pragma dsm parallel for schedule(runtime)
  for (long i = 0; i < n; ++i) sh_a[i] = 4;
#pragma dsm parallel for collapse(2) schedule(auto)
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < n; ++j) sh_a[i * n + j] = 5;
  }
#pragma dsm parallel for collapse(2)
  for (long i = 0; i < n; ++i) {
    sh_a[i] = 0;
    for (long j = 0; j < n; ++j) sh_a[i * n + j] = 6;
  }
#pragma dsm parallel for schedule(fastest)
  for (long i = 0; i < n; ++i) sh_a[i] = 7;
#pragma dsm parallel for schedule(static,)
  for (long i = 0; i < n; ++i) sh_a[i] = 8;
#pragma dsm parallel for schedule(static) policy(shift)
  for (long i = 0; i < n; ++i) sh_a[i] = 9;
#pragma dsm parallel for collapse(0)
  for (long i = 0; i < n; ++i) sh_a[i] = 10;
  double last = 0;
#pragma dsm parallel for firstprivate(last) lastprivate(last)
  for (long i = 0; i < n; ++i) last = last + sh_a[i];
#pragma dsm parallel for lastprivate(last) reduction(+: last)
  for (long i = 0; i < n; ++i) last = sh_a[i];
#pragma dsm parallel for ordered
  for (long i = 0; i < n; ++i) sh_a[i] = 11;
}
