// Loop-carried dependences the descriptors prove get a warning naming the array and the
// iteration that meets the writing one; loops whose iterations touch disjoint elements, or
// whose sections prove nothing, get none.
#include <dsm/dsm.hpp>

void f(double* sh_a, double* sh_b, long n) {
  // In place, reading both neighbours (Gauss-Seidel marked as parallel): a dependence.
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) sh_a[i] = (sh_a[i - 1] + sh_a[i + 1]) / 2;
  // Jacobi: reads one array, writes the other. None.
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) sh_b[i] = (sh_a[i - 1] + sh_a[i + 1]) / 2;
  // Rows: each iteration writes its row and reads the row before (a wavefront). Dependence.
#pragma dsm parallel for
  for (long i = 1; i < n; ++i)
    for (long j = 0; j < n; ++j) sh_a[i * n + j] += sh_a[(i - 1) * n + j];
  // Each iteration updates its own row in place. None.
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 1; j < n; ++j) sh_a[i * n + j] += sh_a[i * n + j - 1];
  // LU's elimination marked at the wrong level: row i is written, rows k > i read. Dependence.
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long k = i + 1; k < n; ++k)
      for (long j = 0; j < n; ++j) sh_a[i * n + j] -= sh_a[k * n + j] * sh_b[k];
  // A step of 2 writes even elements, reads odd ones. None.
#pragma dsm parallel for
  for (long i = 0; i < n - 1; i += 2) sh_a[i] = sh_a[i + 1];
  // Writes the element 100 ahead of the one it reads, constant sizes. Dependence.
#pragma dsm parallel for
  for (long i = 0; i < 1000; ++i) sh_a[i + 100] = sh_a[i] * 2;
  // Rows of a constant length, of which a size not known here is used: nothing proven.
  double(*sh_g)[120] = reinterpret_cast<double(*)[120]>(sh_b);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) sh_g[i][j] = 0;
  // Row i and column i of a square matrix (a correlation matrix's two triangles): disjoint
  // for two iterations, though the column's hull spans many rows. None.
#pragma dsm parallel for
  for (long i = 0; i < 100; ++i)
    for (long j = i + 1; j < 100; ++j) {
      sh_b[i * 100 + j] = sh_a[j];
      sh_b[j * 100 + i] = sh_b[i * 100 + j];
    }
  // Not affine: nothing proven, nothing said.
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_a[(i * i) % n] = 1;
}
