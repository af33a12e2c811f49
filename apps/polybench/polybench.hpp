// What the PolyBench/C 4.2.1 ports share: the data-set size switch, the dump of the live-out
// arrays in PolyBench's format (on standard output, which rank 0 alone prints, so that the
// DSM build and the sequential one print the same bytes), and the kernel timer (standard
// error).
//
// Each port keeps its kernel as PolyBench writes it, with `#pragma omp parallel for` (the
// OpenMP build of the same file) and `#pragma dsm parallel for` (the DSM build) on the loops
// that are parallel, and its arrays from dsm::alloc. Built without either (the plain build)
// it is the sequential reference. The originals, outside the project, are in
// ../shared/polybench (scripts/polybench.sh compares with them).
#pragma once

#include <dsm/dsm.hpp>

#include <cstdio>

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
#define MEDIUM_DATASET
#endif

#define POLYBENCH_DUMP_TARGET stdout
#define POLYBENCH_DUMP_START std::fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH std::fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(s) std::fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", s)
#define POLYBENCH_DUMP_END(s) std::fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", s)
#define DATA_PRINTF_MODIFIER "%0.2lf "

namespace polybench {

// Times the kernel between two barriers; rank 0 prints the seconds on standard error as
// `kernel S` when it goes out of scope.
class KernelTimer {
 public:
  KernelTimer() {
    dsm::barrier();
    start_ = dsm::wtime();
  }
  ~KernelTimer() {
    dsm::barrier();
    if (dsm::rank() == 0) std::fprintf(stderr, "kernel %0.6f\n", dsm::wtime() - start_);
  }
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

 private:
  double start_;
};

}  // namespace polybench
