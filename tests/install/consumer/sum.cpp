// A shared-memory program as a user writes it, built against the installed DSM.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 200000;
  double* sh_x = dsm::alloc<double>(n);
  double* sh_y = dsm::alloc<double>(n);
  dsm::barrier();
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_x[i] = 0.5 * static_cast<double>(i % 1000);
  dsm::barrier();
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) sh_y[i] = sh_x[i - 1] + sh_x[i] + sh_x[i + 1];
  dsm::barrier();
  if (dsm::rank() == 0) {
    double sum = 0;
    for (long i = 0; i < n; ++i) sum += sh_y[i];
    std::printf("sum %.1f\n", sum);
  }
  dsm::finalize();
  return 0;
}
