// Writes made by the functions a marked loop calls are the loop's writes: a global, a static
// variable, a variable captured by a lambda declared before the loop, also two calls deep.
// What a callee writes through its parameters or of its object is judged at the call, and
// its own variables, those of a lambda declared in the loop body, and sh_ arrays are fine.
#include <dsm/dsm.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

double total;
long calls;
std::vector<double> history;

void add(double x) { total += x; }
void count() { ++calls; }
void twice(double x) {
  count();
  add(x);
}
double memo(long i) {
  static double last = 0;
  last = static_cast<double>(i);
  return last;
}
void record(double x) { history.push_back(x); }

void rejected(double* sh_a, long n) {
  double sum = 0;
  auto accumulate = [&](double x) { sum += x; };
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i] = memo(i);
    twice(sh_a[i]);
    accumulate(sh_a[i]);
    record(sh_a[i]);
  }
}

// Fine: writes through parameters the caller passes from the loop, locals of the callee, an
// object of the iteration changed by its member, sh_ arrays, output, a lambda of the body.
struct Acc {
  double v = 0;
  void put(double x) { v += x; }
};
void store(double* out, long i, double x) { out[i] = x; }
void scale(double& x) {
  double f = 2.0;
  f *= 1.5;
  x *= f;
}
void report(long i) { std::printf("%ld\n", i); }
double biggest(const std::vector<double>& v) {
  std::vector<double> copy = v;
  std::sort(copy.begin(), copy.end());
  return copy.empty() ? 0 : copy.back();
}

void allowed(double* sh_a, double* sh_b, const std::vector<double>& v, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    double x = sh_a[i];
    scale(x);
    Acc acc;
    acc.put(x);
    long hits = 0;
    auto hit = [&](double y) {
      hits += 1;
      return y;
    };
    store(sh_b, i, hit(acc.v) + biggest(v) + static_cast<double>(hits));
    if (i == 0) report(i);
  }
}
