// Loops whose shared reads are all inside marked loops get a dsm::lb::ReadsInLoops for
// their whole run (read_regions: their lines); any shared name outside the marked loops, a
// call that may read one, or a preprocessor line before the loop leaves it without.
#include <dsm/dsm.hpp>

#include <cstdio>

double* sh_global;
void out_of_sight();

double norm(const double* sh_v, long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) s += sh_v[i] * sh_v[i];
  return s;
}

void log_step(long t) { std::printf("step %ld\n", t); }

// A time loop of a sweep and a copy: one region around it, none per step.
void time_loop(double* sh_a, double* sh_b, long n, long steps) {
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) sh_b[i] = (sh_a[i - 1] + sh_a[i + 1]) / 2;
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) sh_a[i] = sh_b[i];
    dsm::barrier();
    log_step(t);  // seen, and reads nothing shared
  }
}

// The condition reads a shared value on every rank: the inner loop is the region.
void converge(double* sh_a, double* sh_err, long n) {
  while (sh_err[0] > 1e-6) {
    for (int k = 0; k < 10; ++k) {
#pragma dsm parallel for
      for (long i = 1; i < n - 1; ++i) sh_a[i] = sh_a[i] / 2;
      dsm::barrier();
    }
    if (dsm::rank() == 0) sh_err[0] /= 2;
    dsm::barrier();
  }
}

// Shared reads outside the marked loop, here and in a called function: no region.
void checked(double* sh_a, long n, long steps) {
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_a[i] += 1;
    dsm::barrier();
    std::printf("%f\n", sh_a[0]);
  }
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_a[i] += 1;
    dsm::barrier();
    if (norm(sh_a, n) > 1) break;
  }
}

// A bound read from a shared array by every rank before the loop: no region.
void shared_bound(double* sh_a, const long* sh_n, long steps) {
  for (long t = 0; t < steps; ++t) {
    const long m = sh_n[0];
#pragma dsm parallel for
    for (long i = 0; i < m; ++i) sh_a[i] *= 2;
    dsm::barrier();
  }
}

// A global shared array and a call whose body is out of sight, which may read it: no region;
// dsm's own calls and the system's are fine.
void globals(long n, long steps) {
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_global[i] += 1;
    dsm::barrier();
    out_of_sight();
  }
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_global[i] += 1;
    dsm::barrier();
    std::printf("step %ld\n", t);
  }
}

// Another pragma applies to the loop after it: the loop is left alone.
void after_pragma(double* sh_a, long n, long steps) {
#pragma GCC unroll 1
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_a[i] += 1;
    dsm::barrier();
  }
}

// Marked loops reading through a pointer of another name (a row taken inside the loop, a
// copy of an sh_ pointer): their descriptors do not say what that reads, so no region; a
// table in an array variable is no shared memory, so the last loop has one.
void aliases(double* sh_a, double* sh_b, long n, long steps) {
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 1; i < n; ++i) {
      const double* up = sh_a + (i - 1);
      sh_b[i] = *up;
    }
    dsm::barrier();
  }
  const double* a = sh_a;
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 1; i < n; ++i) sh_b[i] = a[i - 1];
    dsm::barrier();
  }
  for (long t = 0; t < steps; ++t) {
#pragma dsm parallel for
    for (long i = 1; i < n; ++i) {
      const double w[2] = {0.25, 0.75};
      sh_b[i] = w[0] * sh_a[i - 1] + w[1] * sh_a[i];
    }
    dsm::barrier();
  }
}
