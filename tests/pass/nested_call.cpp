// A marked loop whose iterations call a function with a marked loop of its own: the pass
// sees no nesting in the text, the runtime stops the job with a message naming both loops.
#include <dsm/dsm.hpp>

#include <cstdio>

void row(long* sh_a, long i, long n) {
#pragma dsm parallel for
  for (long j = 0; j < n; ++j) sh_a[i * n + j] = i + j;
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 16;
  long* sh_a = dsm::alloc<long>(n * n);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) row(sh_a, i, n);
  dsm::barrier();
  if (dsm::rank() == 0) std::printf("sh_a[n * n - 1] = %ld\n", sh_a[n * n - 1]);
  dsm::finalize();
  return 0;
}
