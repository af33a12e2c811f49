// Accesses to sh_ arrays outside marked loops, which every rank runs: each write is listed
// under outside_writes and wrapped in dsm::lb::written, each read (a load, or an element
// passed by const reference) under outside_reads and wrapped in dsm::lb::read, an access
// spelled as a macro's argument once where it is spelled (as a write when one of its uses
// writes). Not wrapped: accesses inside the marked loop and in the function it calls,
// accesses to other memory, the pointer itself, an unevaluated operand, the load of a
// compound assignment or an increment (the write's), and an access spelled inside a
// macro's expansion.
#include <dsm/dsm.hpp>

#include <algorithm>

struct P {
  double x;
  int k : 3;
};

template <class T>
void fill(T* sh_t, long n) {
  for (long i = 0; i < n; ++i) sh_t[i] = T(1);
}

void add_one(double* sh_q, long i) { sh_q[i] += 1; }

#define ZERO(a, i) a[i] = 0
#define SQUARE(x) ((x) * (x))
#define SET(lvalue, v) lvalue = v
#define READ_THEN_CLEAR(to, x) to = x, x = 0

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_a = dsm::alloc<double>(100);
  double(*sh_m)[10] = dsm::alloc<double[10]>(10);
  P* sh_p = dsm::alloc<P>(10);
  int* sh_i = dsm::alloc<int>(4);
  double local[4] = {};
  sh_a[0] = 1;
  *(sh_a + 2) = 3;
  sh_m[1][2] = 4;
  sh_p[3].x = 5;
  sh_p->x = 6;
  sh_p[1].k = 1;
  ++sh_i[0];
  sh_i[1]--;
  sh_a[sh_i[2]++] = 7;
  sh_a[1] = sh_a[2] = 8;
  local[0] = sh_a[0];
  ZERO(sh_a, 3);
  local[1] = SQUARE(sh_a[4]) + sh_p[2].x + sizeof sh_a[5];
  SET(sh_m[2][3], sh_m[3][2]);
  sh_a[6] *= 2;
  local[2] = std::max(sh_a[7], local[0]);
  P copy = sh_p[4];
  READ_THEN_CLEAR(local[1], sh_a[8]);
  local[3] = copy.x;
  fill(sh_a, 10);
#pragma dsm parallel for
  for (long i = 0; i < 100; ++i) {
    sh_a[i] = local[i % 4];
    add_one(sh_a, i);
  }
  sh_a = sh_a + 1;
  dsm::finalize();
}
