// Integration check of redistribute() through dsmrun: a loop whose rows start where another
// loop's do runs that loop's ranges (it follows), and one that starts elsewhere decides for
// itself. Loop `b` does each in turn, its first row moving between 0 and 1 at every step,
// under whatever balancer the run chooses; rank 0 checks the result against a sequential
// computation. (A loop that had followed once indexed tables it never filled when it went
// back to deciding for itself, and crashed.)
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <cstdio>
#include <cstdlib>

namespace {

// A little work per row, so that the ranges take measurable time to balance.
long work(long v) {
  auto u = static_cast<unsigned long>(v);
  for (int k = 0; k < 200; ++k) u = u * 6364136223846793005UL + 1442695040888963407UL;
  return static_cast<long>(u % 1000003);  // small: the sums over the steps stay far from overflow
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 2048;
  const int steps = argc > 1 ? std::atoi(argv[1]) : 60;
  long* sh_x = dsm::alloc<long>(n + 1);
  long* sh_y = dsm::alloc<long>(n + 1);
  static dsm::lb::Site a("follow_lead.cpp:a"), b("follow_lead.cpp:b");
  using dsm::lb::Access;
  for (int t = 0; t < steps; ++t) {
    const dsm::lb::Section xa[] = {dsm::lb::section(sh_x, Access::write, 1, 0, 0)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(a, 0, n, 1, xa))
      for (long i = r.lb; i < r.ub; i += r.step) sh_x[i] = work(t * 3 + i);
    dsm::barrier();
    const long o = t % 2;
    const dsm::lb::Section yb[] = {dsm::lb::section(sh_y, Access::write, 1, 0, 0),
                                   dsm::lb::section(sh_x, Access::read, 1, -o, -o)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(b, o, o + n, 1, yb))
      for (long i = r.lb; i < r.ub; i += r.step) sh_y[i] += sh_x[i - o];
    dsm::barrier();
  }
  int status = 0;
  if (dsm::rank() == 0) {
    long wrong = 0;
    for (long i = 0; i <= n; ++i) {
      long want = 0;
      for (int t = 0; t < steps; ++t) {
        const long o = t % 2;
        if (i >= o && i < o + n) want += work(t * 3 + i - o);
      }
      wrong += want != sh_y[i];
    }
    std::printf("follow_lead: %ld wrong elements of %ld after %d steps\n", wrong, n + 1, steps);
    status = wrong ? 1 : 0;
  }
  dsm::finalize();
  return status;
}
