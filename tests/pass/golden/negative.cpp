// A negative coefficient: reversing an array, and a flattened row read right to left.
#include <dsm/dsm.hpp>

void reverse(int* sh_dst, const int* sh_src, long n, long m) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_dst[i] = sh_src[n - 1 - i];
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < m; ++j) sh_dst[i * m + j] = sh_src[(n - 1 - i) * m + (m - 1 - j)];
}
