// Doacross nests (ordered(2)) run as pipelines: a 9-point Gauss-Seidel on a flat array and
// a 5-point one on a 2-D array, with depend clauses, several sweeps; and a wavefront over
// integers without them (the pass derives its distances), with unsigned counters declared
// before the nest, in a function called with two sizes (the pipeline is made afresh for the
// second). Rank 0 prints every value's hash: the results must be the sequential ones bit
// for bit.
#include <dsm/dsm.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr long N = 90;

std::uint64_t hash(const void* p, std::size_t bytes, std::uint64_t h = 1469598103934665603ull) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t k = 0; k < bytes; ++k) h = (h ^ b[k]) * 1099511628211ull;
  return h;
}

void wavefront(long* sh_w, unsigned n) {
  unsigned i, j;
#pragma dsm parallel for ordered(2)
  for (i = 1; i < n; ++i)
    for (j = 1; j < n; ++j) sh_w[i * n + j] = (sh_w[(i - 1) * n + j] + sh_w[i * n + j - 1] + long(i * j)) % 1000003;
  dsm::barrier();
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 131;
  double* sh_a = dsm::alloc<double>(n * n);
  double (*sh_g)[N] = dsm::alloc<double[N]>(N);
  long* sh_w = dsm::alloc<long>(200 * 200);
  if (dsm::rank() == 0) {
    for (long k = 0; k < n * n; ++k) sh_a[k] = double((k * 31) % 97) / 97.0;
    for (long i = 0; i < N; ++i)
      for (long j = 0; j < N; ++j) sh_g[i][j] = double((i * 17 + j * 5) % 89);
    for (long k = 0; k < 200 * 200; ++k) sh_w[k] = k % 7;
  }
  dsm::barrier();
  for (int sweep = 0; sweep < 5; ++sweep) {
#pragma dsm parallel for ordered(2)
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) {
#pragma dsm ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)
        sh_a[i * n + j] = (sh_a[(i - 1) * n + j - 1] + sh_a[(i - 1) * n + j] + sh_a[(i - 1) * n + j + 1] +
                           sh_a[i * n + j - 1] + sh_a[i * n + j] + sh_a[i * n + j + 1] + sh_a[(i + 1) * n + j - 1] +
                           sh_a[(i + 1) * n + j] + sh_a[(i + 1) * n + j + 1]) / 9.0;
#pragma dsm ordered depend(source)
      }
    dsm::barrier();
#pragma dsm parallel for ordered(2)
    for (long i = 1; i < N - 1; ++i)
      for (long j = 1; j <= N - 2; ++j) {
#pragma dsm ordered depend(sink: i - 1, j) depend(sink: i, j - 1)
        sh_g[i][j] = 0.25 * (sh_g[i - 1][j] + sh_g[i + 1][j] + sh_g[i][j - 1] + sh_g[i][j + 1]);
#pragma dsm ordered depend(source)
      }
    dsm::barrier();
  }
  wavefront(sh_w, 120);
  wavefront(sh_w, 200);
  if (dsm::rank() == 0) {
    std::printf("gs9 %016llx\n", static_cast<unsigned long long>(hash(sh_a, sizeof(double) * n * n)));
    std::printf("gs5 %016llx\n", static_cast<unsigned long long>(hash(sh_g, sizeof(double) * N * N)));
    std::printf("wave %016llx\n", static_cast<unsigned long long>(hash(sh_w, sizeof(long) * 200 * 200)));
  }
  dsm::finalize();
  return 0;
}
