// Integration check through dsmrun (DSM_LB_TAKE=always): ranks take chunks of a loop from a
// rank that stopped inside it. A row loop writes a page a row (milliseconds of work an
// execution); in some executions the last rank stops itself (SIGSTOP, a child sends SIGCONT
// 50 ms later) before its first chunk, and in others it sleeps 20 ms in each of its chunks (a
// slow rank): the other ranks take from its tail meanwhile; a second loop follows with no
// barrier between. Every execution's rows are checked against a sequential computation on
// every rank, and the program prints the iterations this rank ran in the stopped executions;
// the test's script reads the takes from the statistics.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace {

constexpr long rows = 256, row_doubles = 512;  // a page a row
constexpr int executions = 12;

// Some work per element, so that an execution takes milliseconds: ranks take work only
// where the pages of what they may take cost little beside it.
double value(int t, long i, long j) {
  double v = static_cast<double>(t * 5 + i * 3 + j % 17) * 0.25;
  for (int k = 0; k < 100; ++k) v = v * 0.5 + static_cast<double>(k);
  return v;
}

bool stops(int t) { return t == 4 || t == 8; }
bool crawls(int t) { return t == 6; }

// Stops this process for 50 ms: a child wakes it up.
void stop_for_a_while() {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    usleep(50000);
    kill(parent, SIGCONT);
    _exit(0);
  }
  if (child > 0) {
    raise(SIGSTOP);
    waitpid(child, nullptr, 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_out = dsm::alloc<double>(rows * row_doubles);
  double* sh_next = dsm::alloc<double>(rows * row_doubles);
  static dsm::lb::Site site("take_chunks.cpp:rows"), next_site("take_chunks.cpp:next");
  const bool victim = dsm::rank() == dsm::nprocs() - 1;
  long wrong = 0, ran_while_stopped = 0;
  for (int t = 0; t < executions; ++t) {
    const dsm::lb::Section acc[] = {dsm::lb::section(sh_out, dsm::lb::Access::write, row_doubles, 0, row_doubles - 1)};
    bool first = true;
    for (const dsm::lb::Range& r : dsm::lb::redistribute(site, 0, rows, 1, acc)) {
      if (victim && first && stops(t)) stop_for_a_while();
      if (victim && crawls(t)) usleep(20000);
      first = false;
      for (long i = r.lb; i < r.ub; i += r.step) {
        for (long j = 0; j < row_doubles; ++j) sh_out[i * row_doubles + j] = value(t, i, j);
        if (stops(t)) ++ran_while_stopped;
      }
    }
    // A second loop with no barrier before it: the ranks that ran on start it while the
    // stopped rank is still in the first, and must leave its chunks of both to it.
    const dsm::lb::Section next_acc[] = {dsm::lb::section(sh_next, dsm::lb::Access::write, row_doubles, 0, row_doubles - 1)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(next_site, 0, rows, 1, next_acc))
      for (long i = r.lb; i < r.ub; i += r.step)
        for (long j = 0; j < row_doubles; ++j) sh_next[i * row_doubles + j] = value(t + 1, i, j);
    dsm::barrier();
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < row_doubles; ++j)
        wrong += (sh_out[i * row_doubles + j] != value(t, i, j)) + (sh_next[i * row_doubles + j] != value(t + 1, i, j));
    dsm::barrier();
  }
  std::printf("take_chunks: rank %d ran %ld iterations of the stopped executions\n", dsm::rank(), ran_while_stopped);
  std::printf("take_chunks: rank %d: %ld wrong\n", dsm::rank(), wrong);
  dsm::finalize();
  return wrong != 0;
}
