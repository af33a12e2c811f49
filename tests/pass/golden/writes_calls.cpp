// Writes made by the functions a marked loop calls are the loop's writes: a global, a static
// variable, a variable captured by a lambda declared before the loop (or a member through its
// captured `this`), also two calls deep, through a forwarding reference or an iterator, in a
// destructor. A callee's parameters and object are what the call passes; its own variables,
// a lambda's captures of them, and sh_ arrays are fine.
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

template <class T>
void set(T&& x, double v) {
  x = v;
}
template <class It>
void fill_all(It first, It last, double v) {
  for (; first != last; ++first) *first = v;
}
struct Timer {
  ~Timer() { calls += 1; }
};
long next_id;
struct Tagged {
  long id = next_id++;
};
struct Solver {
  double residual = 0;
  void step(double* sh_a, long n) {
    auto add = [this](double x) { residual += x; };
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) add(sh_a[i]);
  }
};

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
  double last = 0;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    set(last, sh_a[i]);
    fill_all(history.begin(), history.end(), sh_a[i]);
    Timer t;
    Tagged tag;
    sh_a[i] += static_cast<double>(tag.id);
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
double smooth(const double* sh_a, long i) {
  double acc = 0;
  auto add = [&](double v) { acc += v; };
  add(sh_a[i]);
  add(sh_a[i + 1]);
  return acc;
}
struct Sum {
  double s = 0;
  void add_all(const double* a, long n) {
    auto f = [this](double v) { s += v; };
    for (long k = 0; k < n; ++k) f(a[k]);
  }
};
void clamp_row(double* sh_row, long n) {
  auto clamp = [](double& x) {
    if (x < 0) x = 0;
  };
  for (long j = 0; j < n; ++j) clamp(sh_row[j]);
}
struct Point {
  double x = 0, y = 0;
  Point(double a, double b) : x(a) { y = b; }
  void shift(double d) { x += d; }
};
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
    Sum total_of_row;
    total_of_row.add_all(sh_a + i, 1);
    clamp_row(sh_b + i, 1);
    Point p(x + total_of_row.s, 1.0);
    p.shift(smooth(sh_a, i));
    double local[4] = {};
    set(local[0], p.x);
    fill_all(local, local + 4, p.y);
    store(sh_b, i, hit(acc.v) + biggest(v) + static_cast<double>(hits) + local[3]);
    if (i == 0) report(i);
  }
}
