// One long DSM job for scripts/soak.sh: rounds of lock-heavy work (counters on their own
// pages, each under its lock) and barrier-heavy work (phases in which the owner of every
// block of an array changes, blocks not page-aligned so pages have several writers), each
// round checked exactly against what a sequential execution gives. Runs until SECONDS have
// passed (rank 0 decides, through shared memory, so every rank stops after the same round).
//
//   soak_program SECONDS   prints "soak ok: R rounds, L lock operations, B barriers"
#include <dsm/dsm.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr long words = 256 * 512;  // 256 pages of longs
constexpr long block = 700;        // owners change per block, not per page
constexpr int locks = 16;
constexpr long slot_stride = 512;  // one page per lock's counter
constexpr int lock_ops = 300;      // per rank and round
constexpr int phases = 20;         // barriers per round (plus a few)

long value(long round, int phase, long i) { return round * 1000003 + phase * 7919 + i; }
int lock_of(int rank, int k) { return (rank * 7 + k) % locks; }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  const int me = dsm::rank(), P = dsm::nprocs();
  long* sh_data = dsm::alloc<long>(words);
  long* sh_slot = dsm::alloc<long>(locks * slot_stride);
  long* sh_stop = dsm::alloc<long>(1);
  std::vector<long> slot_model(locks, 0);
  const double t0 = dsm::wtime();
  long failures = 0, rounds = 0, barriers = 0;
  auto expect = [&](bool ok, const char* what, long round, long at, long got, long want) {
    if (!ok && ++failures <= 10)
      std::fprintf(stderr, "rank %d: round %ld: %s at %ld: got %ld, want %ld\n", me, round, what, at, got, want);
  };
  for (long round = 1;; ++round) {
    // Lock-heavy: migratory counters.
    for (int k = 0; k < lock_ops; ++k) {
      const int l = lock_of(me, k);
      dsm::lock_acquire(l);
      sh_slot[l * slot_stride] += 1 + me;
      dsm::lock_release(l);
    }
    for (int r = 0; r < P; ++r)
      for (int k = 0; k < lock_ops; ++k) slot_model[lock_of(r, k)] += 1 + r;
    dsm::barrier();
    ++barriers;
    for (int l = 0; l < locks; ++l)
      expect(sh_slot[l * slot_stride] == slot_model[l], "lock counter", round, l, sh_slot[l * slot_stride], slot_model[l]);
    // Barrier-heavy: the owner of each block moves every phase; everyone checks everything.
    for (int phase = 0; phase < phases; ++phase) {
      for (long i = 0; i < words; ++i)
        if ((i / block + phase + round) % P == me) sh_data[i] = value(round, phase, i);
      dsm::barrier();
      for (long i = 0; i < words; ++i) expect(sh_data[i] == value(round, phase, i), "data", round, i, sh_data[i], value(round, phase, i));
      dsm::barrier();
      barriers += 2;
    }
    rounds = round;
    if (me == 0 && dsm::wtime() - t0 > seconds) *sh_stop = 1;
    dsm::barrier();
    ++barriers;
    if (*sh_stop) break;
  }
  dsm::finalize();
  if (failures) {
    std::fprintf(stderr, "rank %d: %ld mismatches\n", me, failures);
    return 1;
  }
  if (me == 0)
    std::printf("soak ok: %ld rounds, %ld lock operations, %ld barriers per rank\n", rounds,
                rounds * lock_ops * long(P), barriers);
  return 0;
}
