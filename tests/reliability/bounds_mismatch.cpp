// Marked loops that the ranks do not run alike (a user's mistakes): the job stops at the
// barrier after the loop, naming it, instead of running part of it twice and part never.
//   bounds_mismatch bounds N  its bound differs between ranks; the loop runs N times
//   bounds_mismatch rank0 N   it sits inside `if (dsm::rank() == 0)`
//   bounds_mismatch times     rank 1 runs it twice between two barriers, the others once
//   bounds_mismatch early     a marked loop runs before dsm::init
#include <dsm/dsm.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "bounds";
  if (mode == "early") {
    double early[64];
    double* sh_early = early;
#pragma dsm parallel for
    for (long i = 0; i < 64; ++i) sh_early[i] = i;
    std::printf("%g\n", sh_early[63]);
  }
  dsm::init(argc, argv);
  const int runs = argc > 2 ? std::atoi(argv[2]) : 1;
  const long n = 4096;
  double* sh_a = dsm::alloc<double>(n);
  const long m = mode == "bounds" ? n - dsm::rank() : n;
  for (int it = 0; it < runs; ++it) {
    const int times = mode == "times" && dsm::rank() == 1 ? 2 : 1;
    for (int t = 0; t < times; ++t)
      if (mode != "rank0" || dsm::rank() == 0) {
#pragma dsm parallel for
        for (long i = 0; i < m; ++i) sh_a[i] = 2.0 * i;
      }
    dsm::barrier();
  }
  if (dsm::rank() == 0) std::printf("%g\n", sh_a[n - 1]);
  dsm::finalize();
}
