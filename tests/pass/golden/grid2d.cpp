// Two-dimensional arrays: double (*)[M] from dsm::alloc<double[M]>, and a local row variable.
#include <dsm/dsm.hpp>

constexpr long M = 64;

void copy(double (*sh_g)[M], double (*sh_h)[M], int rows) {
#pragma dsm parallel for
  for (int i = 0; i < rows; i++) {
    const int up = i - 1;
    for (long j = 0; j < M; ++j) sh_h[i][j] = sh_g[i][j] + (i > 0 ? sh_g[up][j] : 0.0);
  }
}
