// Columns: an inner loop that steps by rows touches a block of each row, not the rows whole.
// The blocks are described where the rest of the subscript spans less than a row.
#include <dsm/dsm.hpp>

constexpr int N = 1200;

// A column per iteration, over every row (k steps by N): blocks of one element.
void norms(double (*sh_a)[N], double* sh_r, int m) {
#pragma dsm parallel for
  for (int j = 0; j < N; j++) {
    double s = 0;
    for (int k = 0; k < m; k++) s += sh_a[k][j] * sh_a[k][j];
    sh_r[j] = s;
  }
}

// Column k of the rows below i, read at every row (cholesky): one element a row, from k + 1.
void update(double (*sh_a)[N], int n, int k) {
#pragma dsm parallel for
  for (int i = k + 1; i < n; i++)
    for (int j = k + 1; j <= i; j++) sh_a[i][j] -= sh_a[i][k] * sh_a[j][k];
}

// Rows read backwards, four elements of each: the first block is the last row's.
void backwards(double (*sh_a)[N], double* sh_x, int n) {
#pragma dsm parallel for
  for (int j = 0; j < N / 4; j++)
    for (int k = 0; k < n; k++)
      for (int c = 0; c < 4; c++) sh_x[4 * j + c] += sh_a[n - 1 - k][4 * j + c];
}

// Not blocks: the rest spans a whole row (every element of every row), and a row length
// that is not a constant.
void not_blocks(double (*sh_a)[N], double* sh_b, double* sh_c, int n) {
#pragma dsm parallel for
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++)
      for (int j = 0; j < N; j++) sh_c[i] += sh_a[k][j];
#pragma dsm parallel for
  for (int j = 0; j < n; j++)
    for (int k = 0; k < n; k++) sh_c[j] += sh_b[k * n + j];
}
