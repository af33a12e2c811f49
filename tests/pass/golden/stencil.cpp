// A 1-D three-point stencil: reads at i-1, i, i+1 merge into one section.
#include <dsm/dsm.hpp>

void smooth(double* sh_out, const double* sh_in, long n) {
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) sh_out[i] = (sh_in[i - 1] + sh_in[i] + sh_in[i + 1]) / 3.0;
}
