// What every application version shares: command line, checksum, and the report format
// that scripts and tests parse. Rank 0 prints exactly
//   checksum <16 hex digits>
//   time <seconds>
// (and, with --trace, one "iter <k> <seconds since start> <seconds of this iteration>" line
// per iteration, to follow how a run reacts to a change of load).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace app {

struct Options {
  long n = 0;          // problem size (rows = columns)
  long iters = 0;      // repetitions of the outer loop
  bool check = false;  // recompute sequentially in private memory and compare
  bool trace = false;  // print one line per iteration
  int problem = 0;     // index of --problem in the application's list of problems
  // --shares W0,W1,...: a hand version's fixed split, rank r's rows in proportion to Wr (the
  // best fixed split a balancer is judged against); empty: equal blocks.
  std::vector<double> shares = {};
};

// Parses the common options (CLI11, compiled once in app.cpp). Exits with CLI11's message and
// code on bad input or --help. An application that solves more than one problem names them
// in `problems` (the first is the default): `--problem NAME` then picks one.
Options parse(int argc, char** argv, const char* what, Options defaults, const std::vector<std::string>& problems = {});

// The shares of --shares for a job of `nprocs` ranks (empty without them); ends the program
// (status 2) with a message when their count is not the ranks'.
std::vector<double> shares_for(const Options& o, int nprocs);

// 64-bit hash of the bytes of an array: equal checksums mean bit-identical results
// (for floating point too, where a sum would hide differences in the last bits).
inline std::uint64_t checksum(const void* data, std::size_t bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Per-iteration trace (rank 0 only, when --trace).
class Tracer {
 public:
  // Reads its own clock: MPI_Wtime and dsm::wtime need not share steady_clock's epoch.
  explicit Tracer(bool on) : on_(on), start_(now()), last_(start_) {}
  void iteration(long k) {
    if (!on_) return;
    double t = now();
    std::printf("iter %ld %.6f %.6f\n", k, t - start_, t - last_);
    last_ = t;
  }

 private:
  bool on_;
  double start_, last_;
};

// The end of a run, in every version: prints the checksum and the time and, with --check,
// compares the checksum against the sequential reference. Returns the exit code.
inline int conclude(const Options& o, std::uint64_t got, double seconds, std::uint64_t (*reference)(const Options&)) {
  std::printf("checksum %016llx\ntime %.6f\n", static_cast<unsigned long long>(got), seconds);
  std::fflush(stdout);
  if (!o.check) return 0;
  std::uint64_t want = reference(o);
  if (want == got) {
    std::printf("check ok\n");
    return 0;
  }
  std::fprintf(stderr, "check FAILED: checksum %016llx, sequential %016llx\n",
               static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
  return 1;
}

}  // namespace app
