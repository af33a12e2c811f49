// dsm-bench-bulk: how fast many pages move from one rank to another. Rank 0 fills an array
// with plain stores (as a program initializing its data does), a barrier, then rank 1 reads
// all of it: by faults (one word per page, so the time is the pages' travel, not a scan) or
// after one dsm::prefetch of the whole range. Each round fills and reads an array of its
// own. Run through dsmrun at 2 ranks (scripts/bench bulk does); rank 1 prints its best round
// as
//   bulk <fault|prefetch> <bytes> <seconds> <GB/s>
// and rank 0 its best fill, the stores and the barrier after them (where the interval ends):
//   fill <bytes> <seconds> <GB/s>
// and every round's contents are checked against what rank 0 wrote (exit 1 if different).
#include <dsm/dsm.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

constexpr std::size_t page_words = 4096 / sizeof(std::uint64_t);

std::uint64_t value(std::size_t i, int round) { return i * 0x9e3779b97f4a7c15ull + std::uint64_t(round); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  std::size_t mib = 256;
  int rounds = 3;
  std::string mode = "fault";
  CLI::App cli{"dsm-bench-bulk: rank 1 reads what rank 0 wrote, by faults or one prefetch"};
  cli.add_option("--mib", mib, "array size in MiB")->capture_default_str()->check(CLI::Range(std::size_t(1), std::size_t(1) << 16));
  cli.add_option("--rounds", rounds, "rounds (the best is printed)")->capture_default_str()->check(CLI::Range(1, 1000));
  cli.add_option("--mode", mode, "how rank 1 reads")->capture_default_str()->check(CLI::IsMember({"fault", "prefetch"}));
  dsm::cli::parse_or_exit(cli, argc, argv);
  if (dsm::nprocs() < 2) {
    std::fprintf(stderr, "dsm-bench-bulk: needs 2 ranks (dsmrun -n 2)\n");
    return 2;
  }
  const std::size_t words = mib * (std::size_t(1) << 20) / sizeof(std::uint64_t);
  std::vector<std::uint64_t*> arrays;
  for (int round = 0; round < rounds; ++round) arrays.push_back(dsm::alloc<std::uint64_t>(words));
  double best = 1e300, best_fill = 1e300;
  bool ok = true;
  for (int round = 0; round < rounds; ++round) {
    std::uint64_t* const sh_data = arrays[std::size_t(round)];
    const double f0 = dsm::wtime();
    if (dsm::rank() == 0)
      for (std::size_t i = 0; i < words; ++i) sh_data[i] = value(i, round);
    dsm::barrier();
    best_fill = std::min(best_fill, dsm::wtime() - f0);
    if (dsm::rank() == 1) {
      const double t0 = dsm::wtime();
      if (mode == "prefetch") dsm::prefetch(sh_data, words * sizeof(std::uint64_t), dsm::Mode::read);
      std::uint64_t touched = 0;
      for (std::size_t i = 0; i < words; i += page_words) touched += static_cast<volatile std::uint64_t*>(sh_data)[i];
      best = std::min(best, dsm::wtime() - t0);
      std::uint64_t want = 0;
      for (std::size_t i = 0; i < words; i += page_words) want += value(i, round);
      for (std::size_t i = 0; i < words && ok; ++i) ok = sh_data[i] == value(i, round);
      if (touched != want || !ok) {
        std::fprintf(stderr, "dsm-bench-bulk: round %d read other values than rank 0 wrote\n", round);
        ok = false;
      }
    }
    dsm::barrier();
  }
  const double bytes = double(words * sizeof(std::uint64_t));
  if (dsm::rank() == 0) std::printf("fill %.0f %.6f %.3f\n", bytes, best_fill, bytes / best_fill * 1e-9);
  if (dsm::rank() == 1) std::printf("bulk %s %.0f %.6f %.3f\n", mode.c_str(), bytes, best, bytes / best * 1e-9);
  std::fflush(stdout);
  dsm::finalize();
  return ok ? 0 : 1;
}
