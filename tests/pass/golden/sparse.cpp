// Sparse loops: reads over CSR rows and through index arrays are described as such (whole
// for every purpose but fetching), not as whole arrays with a warning. Writes through an
// index, reads through an index that is itself computed, and rows whose bounds come from two
// arrays stay whole arrays.
#include <dsm/dsm.hpp>

void product(const long* sh_p, const long* sh_col, const double* sh_v, const double* sh_x, double* sh_y, long n) {
#pragma dsm parallel for
  for (long r = 0; r < n; ++r) {
    double s = 0;
    for (long k = sh_p[r]; k < sh_p[r + 1]; ++k) s += sh_v[k] * sh_x[sh_col[k]];
    sh_y[r] = s;
  }
}

// The positions of a gather are affine in i; a CSR row of int bounds, read one past its
// start; every other row's span.
void gathers(const int* sh_idx, const int* sh_q, const float* sh_a, const float* sh_b, float* sh_out, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    float s = sh_a[sh_idx[2 * i + 1]];
    for (int k = sh_q[2 * i]; k < sh_q[2 * i + 2]; ++k) s += sh_b[k + 1];
    sh_out[i] = s;
  }
}

void not_sparse(const long* sh_p, const long* sh_e, const long* sh_col, double* sh_x, const double* sh_z, long n) {
#pragma dsm parallel for
  for (long r = 0; r < n; ++r) {
    for (long k = sh_p[r]; k < sh_e[r]; ++k) sh_x[sh_col[k]] += sh_z[sh_col[k] + 1];
  }
}
