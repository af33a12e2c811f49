// Writes a marked loop may make: variables of one iteration, and sh_ arrays however they
// are reached (subscripts, members, pointer arithmetic, a pointer of the iteration into
// one). Variables outside the loop may be read, also through non-const accessors.
#include <dsm/dsm.hpp>

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>
#include <vector>

struct P {
  double x, y;
};
struct Ring {
  double v[4];
  double& operator()(long k) { return v[k % 4]; }
};
struct Field {
  double* sh_v;
  long n;
};
void fill(double* out, long k);
double look(const double& v);

void allowed(double* sh_a, double* sh_b, P* sh_p, Field f, std::vector<double>& v, long n) {
  const std::array<double, 4> c{1, 2, 3, 4};
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    double acc = 0;
    double tmp[4] = {};
    std::vector<double> copy(v.begin(), v.end());
    for (long j = 0; j < 4; ++j) {
      tmp[j] = c[j] * v[j] + v.at(j) + v.data()[j];
      acc += tmp[j];
    }
    for (double& t : tmp) t *= 2.0;
    copy[0] = acc;
    copy.push_back(acc);
    std::swap(tmp[0], tmp[1]);
    Ring ring{};
    ring(i) = acc;
    std::tuple<double, long> pair{};
    std::get<0>(pair) = ring(i + 1);
    auto twice = [](double x) {
      double y = x;
      y *= 2.0;
      return y;
    };
    sh_a[i] = twice(acc) + look(v[i]) + static_cast<double>(v.size());
    sh_p[i].x = sh_p[i].y;
    (sh_p + i)->y = 0.0;
    *(sh_b + i) = std::max(acc, 1.0);
    double* row = sh_b + i;
    row[0] += 1.0;
    f.sh_v[i] = copy[0];
    fill(sh_a + i, 1);
  }
}
