// dsm-bench-protocol: costs of the DSM protocol beside the floors it measures itself.
// Run through dsmrun at 2 or more ranks (scripts/bench dsm does):
//   remote read fault served by one writer's diff   vs  SIGSEGV+mprotect round trip + 4 KiB echo
//   lock acquire whose token is at another rank      vs  small-message echo
//   barrier                                          vs  small-message echo
//   first writes to pages in order, per page         with and without opening pages ahead
// Medians over many repetitions; rank 0 prints.
#include <dsm/dsm.hpp>
#include <sys/mman.h>

#include "cli.hpp"
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include "proto/state.hpp"
#include "proto/sync.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The local floor of a fault: a SIGSEGV whose handler opens the page with one mprotect.
char* g_page;
void open_page(int, siginfo_t*, void*) { mprotect(g_page, 4096, PROT_READ | PROT_WRITE); }

double fault_floor(int reps) {
  g_page = static_cast<char*>(mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  struct sigaction sa {}, old{};
  sa.sa_sigaction = open_page;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, &old);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    mprotect(g_page, 4096, PROT_NONE);
    double t0 = dsm::wtime();
    *static_cast<volatile char*>(g_page) = 1;
    t.push_back(dsm::wtime() - t0);
  }
  sigaction(SIGSEGV, &old, nullptr);
  munmap(g_page, 4096);
  return median(t);
}

double echo_time(int peer, std::size_t bytes, int reps) {
  std::vector<std::byte> buf(bytes);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    double t0 = dsm::wtime();
    dsm::proto::echo(peer, buf);
    t.push_back(dsm::wtime() - t0);
  }
  return median(t);
}

void row(const char* what, double value, const char* floor_name, double floor) {
  std::printf("%-44s %9.2f us   %-36s %9.2f us   ratio %5.2f\n", what, value * 1e6, floor_name, floor * 1e6,
              floor > 0 ? value / floor : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dsm-bench-protocol: DSM protocol costs beside their floors (run with dsmrun -n 2..4)"};
  int reps = 200;
  app.add_option("--reps", reps, "repetitions of each measurement")->check(CLI::Range(10, 100000));
  dsm::cli::parse_or_exit(app, argc, argv);
  dsm::init(argc, argv);
  const int me = dsm::rank(), P = dsm::nprocs();
  if (P < 2) {
    if (me == 0) std::fprintf(stderr, "dsm-bench-protocol: run it with dsmrun -n 2 (or more)\n");
    dsm::finalize();
    return 2;
  }
  const std::size_t page = 4096;
  // Every other page: a fault on the page right after a fetched one would fetch ahead.
  constexpr int stride = 2;
  auto* sh = dsm::alloc<std::uint64_t>(stride * reps * page / 8);

  // Rank 1 writes every page read (twins, then diffs of the whole page); rank 0 reads each once.
  if (me == 1)
    for (int p = 0; p < reps; ++p)
      for (std::size_t w = 0; w < page / 8; ++w) sh[stride * p * page / 8 + w] = p * 1000 + w;
  dsm::barrier();
  std::vector<double> fault;
  if (me == 0)
    for (int p = 0; p < reps; ++p) {
      double t0 = dsm::wtime();
      volatile std::uint64_t v = sh[stride * p * page / 8];
      fault.push_back(dsm::wtime() - t0);
      if (v != std::uint64_t(p) * 1000) std::fprintf(stderr, "wrong value read\n");
    }
  double floor_fault = me == 0 ? fault_floor(reps) : 0;
  double echo_page = me == 0 ? echo_time(1, page, reps) : 0;
  double echo_small = me == 0 ? echo_time(1, 16, reps) : 0;
  dsm::barrier();

  // Lock 1 is managed by rank 1; rank 1 takes it first, so rank 0's acquire always travels
  // request -> manager -> holder -> grant.
  std::vector<double> lock;
  for (int i = 0; i < reps; ++i) {
    if (me == 1) {
      dsm::lock_acquire(1);
      dsm::lock_release(1);
    }
    dsm::barrier();
    if (me == 0) {
      double t0 = dsm::wtime();
      dsm::lock_acquire(1);
      lock.push_back(dsm::wtime() - t0);
      dsm::lock_release(1);
    }
    dsm::barrier();
  }
  std::vector<double> bar;
  for (int i = 0; i < reps; ++i) {
    double t0 = dsm::wtime();
    dsm::barrier();
    bar.push_back(dsm::wtime() - t0);
  }
  // Rank 0 writes a word of each page in order, each time after a barrier closed them all:
  // a fault per page, or a fault per run with the runs opened ahead.
  const long run_pages = 1024;
  auto* runs = dsm::alloc<std::uint64_t>(run_pages * page / 8);
  auto& st = dsm::proto::state();
  const std::uint32_t ahead = st.ahead.max_write;
  const auto first_writes = [&](std::uint32_t max_ahead) {
    st.ahead.max_write = max_ahead;
    std::vector<double> t;
    for (int i = 0; i < std::max(10, reps / 10); ++i) {
      dsm::barrier();
      if (me != 0) continue;
      double t0 = dsm::wtime();
      for (long p = 0; p < run_pages; ++p) runs[p * page / 8] = std::uint64_t(i);
      t.push_back((dsm::wtime() - t0) / double(run_pages));
    }
    st.ahead.max_write = ahead;
    return median(t);
  };
  const double write_each = first_writes(1), write_ahead = first_writes(ahead);
  if (me == 0) {
    std::printf("dsm-bench-protocol: %d ranks, provider %s, medians of %d\n", P,
                dsm::proto::state().net->provider().c_str(), reps);
    row("remote read fault (one writer's diff)", median(fault), "fault+mprotect + 4 KiB echo", floor_fault + echo_page);
    row("lock acquire, token at another rank", median(lock), "16 B echo x 1.5 (3 one-way hops)", echo_small * 1.5);
    row("barrier", median(bar), "16 B echo", echo_small);
    row("first write in order, per page, ahead", write_ahead, "a fault per page", write_each);
    std::printf("floors: fault+mprotect %.2f us, 4 KiB echo %.2f us, 16 B echo %.2f us\n", floor_fault * 1e6,
                echo_page * 1e6, echo_small * 1e6);
  }
  dsm::finalize();
  return 0;
}
