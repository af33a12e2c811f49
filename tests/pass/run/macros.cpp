// Loop headers and subscripts as scientific codes write them: bounds and steps that are
// macros (also -D style), accessor macros around the shared arrays, a brace-initialized or
// `auto` loop variable, an inner loop reusing the marked loop's name, a signed variable
// against an unsigned bound, a pragma continued over two lines (the lines after it must keep
// their numbers: __LINE__ is checked). The result must equal the sequential one, and every
// iteration must run exactly once (sh_hits counts the executions of each, per rank).
#include <dsm/dsm.hpp>

#include <cstdio>

#pragma GCC diagnostic ignored "-Wsign-compare"  // the signed-against-unsigned loop is the point

#define START 1
#define STEP 2
#define N 97
#define NX (n - 2)
#define A(r, c) sh_a[(r) * n + (c)]
#define SET(k) sh_v[k] = 3 * (k)

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = N;
  const unsigned long un = N;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long* sh_v = dsm::alloc<long>(n);
  long* sh_hits = dsm::alloc<long>(8 * n);
  const long me = dsm::rank();

#pragma dsm parallel for
  for (long i = START; i < N; i += STEP) {
    sh_v[i] = i * i;
    sh_hits[i * 8 + me] += 1;
  }
  dsm::barrier();
#pragma dsm parallel for
  for (long i{0}; i < n; ++i)
    for (long j = 0; j < n; ++j) A(i, j) = i * 1000 + j + sh_v[j];
  dsm::barrier();
#pragma dsm parallel for
  for (auto i = 0; i < NX; ++i)
    for (long j = 0; j < NX; ++j) sh_b[i * NX + j] = A(i + 1, j + 1) - A(i, j);
  dsm::barrier();
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    const long row = i;
    for (long i = 0; i < 4; ++i) sh_b[row * n + n - 1 - i] = row + i;  // this i is the inner loop's
  }
  dsm::barrier();
#pragma dsm parallel for
  for (int i = 0; i < un; ++i) {
    SET(i);
    sh_hits[i * 8 + me] += 1;
  }
  dsm::barrier();
#pragma dsm parallel \
    for
  for (long i = 0; i < n; ++i) {
    static_assert(__LINE__ == 59, "the rewritten loop keeps its line");
    sh_v[i] += 1;
  }
  dsm::barrier();

  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    auto mix = [&](long x) { h = (h ^ static_cast<unsigned long>(x)) * 1099511628211ul; };
    for (long k = 0; k < n * n; ++k) mix(sh_a[k] + 7 * sh_b[k]);
    for (long i = 0; i < n; ++i) {
      long runs = 0;
      for (long r = 0; r < 8; ++r) runs += sh_hits[i * 8 + r];
      mix(sh_v[i]);
      mix(runs);
    }
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
  return 0;
}
