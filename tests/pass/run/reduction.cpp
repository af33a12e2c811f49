// reduction(op: list) on marked loops, as OpenMP code has them: every operator, variables
// that start from a value of their own, several in one clause, a loop with fewer iterations
// than ranks, and a convergence test on the combined value that every rank must take the
// same way. Integer data and sums of small integers in doubles, so results are exact. Rank
// 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 1000;
  long* sh_a = dsm::alloc<long>(n);
  double* sh_x = dsm::alloc<double>(n);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_a[i] = (i * 37) % 101 - 50;
  dsm::barrier();

  long sum = 7, diff = 0, lo = 1000, hi = -1000;
  unsigned long prod = 1, all = ~0ul, any = 0, parity = 0;
  bool every = true, some = false;
#pragma dsm parallel for reduction(+: sum) reduction(-: diff) reduction(min: lo) reduction(max: hi)
  for (long i = 0; i < n; ++i) {
    sum += sh_a[i];
    diff -= sh_a[i] * 2;
    lo = sh_a[i] < lo ? sh_a[i] : lo;
    hi = sh_a[i] > hi ? sh_a[i] : hi;
  }
#pragma dsm parallel for reduction(*: prod) reduction(&: all) reduction(|: any) reduction(^: parity) \
    reduction(&&: every) reduction(||: some)
  for (long i = 0; i < n; ++i) {
    prod *= static_cast<unsigned long>(sh_a[i] % 7 == 0 ? 3 : 1);
    all &= static_cast<unsigned long>(sh_a[i] + 64) | 0xf0f0ul;
    any |= static_cast<unsigned long>(sh_a[i] + 64);
    parity ^= static_cast<unsigned long>(sh_a[i] + 64) << (i % 40);
    every = every && sh_a[i] > -51;
    some = some || sh_a[i] == 1000;
  }

  // Fewer iterations than ranks: the ranks without one contribute the identity (below
  // every value here, for max).
  long few = 100;
  double few_max = -1000;
#pragma dsm parallel for reduction(+: few) reduction(max: few_max)
  for (long i = 0; i < 3; ++i) {
    few += sh_a[i];
    few_max = few_max > sh_a[i] - 100 ? few_max : static_cast<double>(sh_a[i] - 100);
  }

  // Relaxation to a fixed point: every rank tests the same combined change, so every rank
  // runs the same number of sweeps (a rank that stopped early would leave the job hanging).
  double change = 1;
  int sweeps = 0;
  while (change > 0) {
    change = 0;
#pragma dsm parallel for reduction(+: change)
    for (long i = 0; i < n; ++i) {
      const double want = static_cast<double>(sh_a[i] > 0 ? sh_a[i] : 0);
      const double next = sh_x[i] + (sh_x[i] < want ? 1 : 0);
      change += next - sh_x[i];
      sh_x[i] = next;
    }
    dsm::barrier();
    ++sweeps;
  }
  double total = 0;
#pragma dsm parallel for reduction(+: total)
  for (long i = 0; i < n; ++i) total += sh_x[i];

  // Every rank has the combined values: each shows its own, rank 0 compares them.
  const long seen[] = {sum, diff, lo, hi, static_cast<long>(prod), static_cast<long>(all), static_cast<long>(any),
                       static_cast<long>(parity), every, some, few, static_cast<long>(few_max), sweeps,
                       static_cast<long>(total)};
  constexpr long k = sizeof seen / sizeof seen[0];
  long* sh_seen = dsm::alloc<long>(static_cast<std::size_t>(k * dsm::nprocs()));
  for (long j = 0; j < k; ++j) sh_seen[dsm::rank() * k + j] = seen[j];
  dsm::barrier();
  if (dsm::rank() == 0) {
    for (long j = 0; j < k; ++j) std::printf("%ld ", seen[j]);
    int agree = 1;
    for (long r = 1; r < dsm::nprocs(); ++r)
      for (long j = 0; j < k; ++j) agree &= sh_seen[r * k + j] == seen[j];
    std::printf("\nevery rank has them: %d\n", agree);
  }
  dsm::finalize();
}
