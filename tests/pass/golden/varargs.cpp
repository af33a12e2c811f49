// Arguments that match a C ellipsis are passed by value: printf does not change i or j.
#include <dsm/dsm.hpp>

#include <cstdio>

void show(long* sh_a, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      sh_a[i * n + j] = i + j;
      std::printf("%ld %ld\n", i, j);
    }
}
