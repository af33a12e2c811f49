// Read, write and read-write from the context of each reference.
#include <dsm/dsm.hpp>

struct P {
  double x, y;
};
void bump(double& v);
double look(const double& v);

void kinds(double* sh_w, double* sh_rw, double* sh_inc, double* sh_ref, double* sh_cref, P* sh_p, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_w[i] = 1.0;
    sh_rw[i] *= 2.0;
    ++sh_inc[i];
    bump(sh_ref[i]);
    sh_w[i] += look(sh_cref[i]);
    sh_p[i].x = sh_p[i].y;
  }
}
