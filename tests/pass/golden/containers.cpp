// Reading std::vector and std::array elements: v[i] calls a member operator[] whose
// argument 0 is the object, so i is its parameter 0 and not modified; j stays affine too.
#include <dsm/dsm.hpp>

#include <array>
#include <vector>

void scale(double* sh_a, double* sh_b, std::vector<double>& v, const std::vector<double>& cv,
           const std::array<double, 8>& w, long n) {
  std::array<long, 8> u{};
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i] = v[i] * cv[i] + w[i % 8] + static_cast<double>(u[i % 8]) + v.at(i);
    for (long j = 0; j < n; ++j) sh_b[i * n + j] = v[j] + cv[i];
  }
}
