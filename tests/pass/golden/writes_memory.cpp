// Writes of memory that is not an sh_ array: ordinary arrays, pointers that are not sh_
// arrays (also when they point into one), std::vector and std::array, and objects changed
// by their members. Each rank would keep only its own iterations' part.
#include <dsm/dsm.hpp>

#include <array>
#include <random>
#include <utility>
#include <vector>

double g[64], h[64];
double* gp = g;
double* hp = h;
struct Stats {
  double max;
  long n;
};
void fill(double* out, long k);

void ordinary(double* sh_a, long n) {
  double local[64] = {};
  double* p = sh_a;
  Stats stats{};
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    g[i % 64] = sh_a[i];
    local[i % 64] = 1.0;
    p[i] = 2.0;
    *(gp + i % 64) = 3.0;
    double* q = h;
    q[i % 64] = 4.0;
    fill(hp, i);
    stats.n += 1;
  }
}

void containers(double* sh_a, std::vector<double>& v, long n) {
  std::array<double, 8> w{};
  std::vector<double> grow;
  std::array<double, 8> u{};
  std::mt19937 rng(1);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    v[i] = sh_a[i];
    w[i % 8] += 1.0;
    grow.push_back(sh_a[i]);
    sh_a[i] += static_cast<double>(rng());
  }
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    for (double& x : w) x = sh_a[i];
    std::swap(u[0], u[1]);
  }
}
