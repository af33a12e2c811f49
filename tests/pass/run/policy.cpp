// Per-site policies: each loop's policy(NAME) clause reaches its dsm::lb::Site, whatever the
// run's policy (pass.policy_stats runs it with --lb static and reads --stats), and the result
// is the sequential one. The loop without a clause takes the run's policy; policy(auto)
// chooses from its own descriptors even under --lb static. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 4096;
  long* sh_a = dsm::alloc<long>(n);
  long* sh_b = dsm::alloc<long>(n);
  long* sh_c = dsm::alloc<long>(n);
  if (dsm::rank() == 0)
    for (long k = 0; k < n; ++k) sh_a[k] = (k * 7919) % 1009;
  dsm::barrier();
  for (int it = 0; it < 4; ++it) {
#pragma dsm parallel for policy(shift)
    for (long i = 1; i < n - 1; ++i) sh_b[i] = sh_a[i - 1] + 2 * sh_a[i] + sh_a[i + 1];
    dsm::barrier();
#pragma dsm parallel for policy(fgdls)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < 4; ++j) sh_a[i] = (sh_a[i] + sh_b[i] + j) % 100003;
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_b[i] = sh_a[n - 1 - i];
    dsm::barrier();
#pragma dsm parallel for policy(auto)
    for (long i = 0; i < n; i += 2) sh_c[i] = sh_b[i] + 1;
    dsm::barrier();
  }
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long k = 0; k < n; ++k) h = (h ^ static_cast<unsigned long>(sh_a[k] + 3 * sh_b[k] + 5 * sh_c[k])) * 1099511628211ul;
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
  return 0;
}
