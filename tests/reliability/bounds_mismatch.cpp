// A marked loop whose bound differs between ranks (a user's mistake): the job stops with
// both ranges named instead of running part of the loop twice and part never.
#include <dsm/dsm.hpp>

#include <cstdio>
int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 4096;
  double* sh_a = dsm::alloc<double>(n);
  const long m = n - dsm::rank();
  for (int it = 0; it < 3; ++it) {
#pragma dsm parallel for
    for (long i = 0; i < m; ++i) sh_a[i] = 2.0 * i;
    dsm::barrier();
  }
  if (dsm::rank() == 0) std::printf("%g\n", sh_a[n - 1]);
  dsm::finalize();
}
