// Loops whose meaning the ranks would change: each gets an error (or, where a single
// iteration may be the one that writes, a warning) with its line.
#include <dsm/dsm.hpp>

#include <stdexcept>

#define FOR_EACH(v, n) for (long v = 0; v < n; ++v)

void semantics(long* sh_a, long* sh_sum, long* sh_col, long n, long lo, double frac, unsigned long un) {
#pragma dsm parallel for
  for (long i = 0; i < n * frac + 0.5; ++i) sh_a[i] = 1;  // a floating-point bound
#pragma dsm parallel for
  for (long i = lo; i < un + 1; ++i) sh_a[i] = 1;  // -1 < un + 1 is false in unsigned
#pragma dsm parallel for
  for (long i = 0; i < n; i += 0.5 * n) sh_a[i] = 1;  // a floating-point step
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    if (sh_a[i] < 0) throw std::runtime_error("negative");
    sh_a[i] = 2 * i;
  }
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    try {
      if (sh_a[i] < 0) throw std::runtime_error("negative");  // caught inside: fine
    } catch (const std::exception&) {
      sh_a[i] = 0;
    }
  }
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_sum[0] += sh_a[i];  // a reduction into one element
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < 8; ++j) sh_col[j] += sh_a[i * 8 + j];  // column sums
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = i * 8; j < i * 8 + 8; ++j) sh_a[j] = j;  // moves with i through j: fine
#pragma dsm parallel for
  FOR_EACH(i, n) sh_a[i] = 0;
}

// In a template the callee of acc.add depends on Acc: its instantiation shows the write.
template <class T, class Acc>
void total(const T* sh_x, long n, Acc& acc) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) acc.add(sh_x[i]);
}
struct Sum {
  long s = 0;
  void add(long v) { s += v; }
};
long use_total(const long* sh_x, long n) {
  Sum acc;
  total(sh_x, n, acc);
  return acc.s;
}
