// A sparse matrix-vector product in CSR form, x read through the column indices: the pass
// describes those reads as sparse ones (over CSR rows, through the index), and before each
// execution a rank fetches the pages its rows read, as its inspector found them.
// Rank 0 builds the matrix (a 5-point Laplacian) and, half way, a new one (its columns
// shifted, a 9-point pattern) between executions, so the pages of the index arrays change
// too. Rank 0 prints x's hash after every product: bit for bit the sequential ones.
#include <dsm/dsm.hpp>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr long g = 70, n = g * g, max_nonzeros = 9 * n;

std::uint64_t hash(const double* x) {
  std::uint64_t h = 1469598103934665603ull;
  for (long r = 0; r < n; ++r) {
    std::uint64_t b;
    std::memcpy(&b, &x[r], 8);
    h = (h ^ b) * 1099511628211ull;
  }
  return h;
}

// Rows of the g x g grid's points: the neighbours within `reach` (1: 5-point, 2: 9-point
// along the axes), each at weight -1, the point itself at 4 * reach.
void build(long* sh_p, long* sh_col, double* sh_v, long reach) {
  long k = 0;
  for (long r = 0; r < n; ++r) {
    sh_p[r] = k;
    const long i = r / g, j = r % g;
    for (long d = -reach; d <= reach; ++d) {
      if (d != 0 && i + d >= 0 && i + d < g) {
        sh_col[k] = r + d * g;
        sh_v[k++] = -1;
      }
      if (d != 0 && j + d >= 0 && j + d < g) {
        sh_col[k] = r + d;
        sh_v[k++] = -1;
      }
    }
    sh_col[k] = r;
    sh_v[k++] = double(4 * reach);
  }
  sh_p[n] = k;
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  long* sh_p = dsm::alloc<long>(n + 1);
  long* sh_col = dsm::alloc<long>(max_nonzeros);
  double* sh_v = dsm::alloc<double>(max_nonzeros);
  double* sh_x = dsm::alloc<double>(n);
  double* sh_y = dsm::alloc<double>(n);
  if (dsm::rank() == 0) {
    build(sh_p, sh_col, sh_v, 1);
    for (long r = 0; r < n; ++r) sh_x[r] = double((r * 7) % 13);
  }
  dsm::barrier();
  for (long it = 0; it < 8; ++it) {
    if (it == 4) {
      if (dsm::rank() == 0) build(sh_p, sh_col, sh_v, 2);
      dsm::barrier();
    }
#pragma dsm parallel for
    for (long r = 0; r < n; ++r) {
      double s = 0;
      for (long k = sh_p[r]; k < sh_p[r + 1]; ++k) s += sh_v[k] * sh_x[sh_col[k]];
      sh_y[r] = s;
    }
    dsm::barrier();
#pragma dsm parallel for
    for (long r = 0; r < n; ++r) sh_x[r] = sh_y[r] / 8;
    dsm::barrier();
    if (dsm::rank() == 0) std::printf("%ld %016llx\n", it, static_cast<unsigned long long>(hash(sh_x)));
  }
  // A gather whose index holds entries that name no element, which the loop skips (a padded
  // format's sentinels): the inspector reads them too and must pass them by.
  long* sh_at = dsm::alloc<long>(n);
  if (dsm::rank() == 0)
    for (long r = 0; r < n; ++r) sh_at[r] = r % 5 ? (r * 13) % n : r % 2 ? LONG_MAX : -(1L << 50);
  dsm::barrier();
#pragma dsm parallel for
  for (long r = 0; r < n; ++r) sh_y[r] = sh_at[r] >= 0 && sh_at[r] < n ? sh_x[sh_at[r]] : 0;
  dsm::barrier();
  if (dsm::rank() == 0) std::printf("gather %016llx\n", static_cast<unsigned long long>(hash(sh_y)));
  dsm::finalize();
  return 0;
}
