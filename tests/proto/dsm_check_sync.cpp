// Locks and barriers: data that migrates under a lock, turns taken through one, a producer
// and its consumers, and phases of barriers over pages written by several ranks.
#include "dsm_check.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace dsm_check {

// Every rank writes its own words, interleaved, so every page has several writers.
void false_sharing() {
  const long n = 64 * 1024;
  auto* sh_a = dsm::alloc<std::int32_t>(n);
  const int me = dsm::rank(), P = dsm::nprocs();
  for (int round = 1; round <= 3; ++round) {
    for (long i = me; i < n; i += P) sh_a[i] = std::int32_t(i * 7 + round);
    dsm::barrier();
    for (long i = 0; i < n; ++i) expect(sh_a[i] == i * 7 + round, "false sharing", i, sh_a[i], i * 7 + round);
    dsm::barrier();
  }
}

// A counter every rank increments under a lock: migratory data.
void migratory() {
  auto* sh_c = dsm::alloc<long>(2);
  const int per_rank = 2000;
  for (int k = 0; k < per_rank; ++k) {
    dsm::lock_acquire(3);
    sh_c[0] += 1;
    sh_c[1] += dsm::rank() + 1;
    dsm::lock_release(3);
  }
  dsm::barrier();
  const long P = dsm::nprocs();
  expect(sh_c[0] == per_rank * P, "counter", 0, sh_c[0], per_rank * P);
  expect(sh_c[1] == per_rank * P * (P + 1) / 2, "weighted counter", 1, sh_c[1], per_rank * P * (P + 1) / 2);
}

// The ranks take `rounds` turns each, in rank order, through a turn counter under a lock:
// every turn waits for the lock's token from the rank before, and locks are the only
// synchronization until the final barrier.
void turns(long rounds) {
  auto* sh_turn = dsm::alloc<long>(1);
  const int me = dsm::rank(), P = dsm::nprocs();
  for (long taken = 0; taken < rounds;) {
    dsm::lock_acquire(0);
    if (sh_turn[0] % P == me) {
      ++sh_turn[0];
      ++taken;
    }
    dsm::lock_release(0);
  }
  dsm::barrier();
  expect(sh_turn[0] == rounds * P, "turns", 0, sh_turn[0], rounds * P);
}

// Rank 0 produces items one at a time; the others consume them in turn through a lock.
void producer_consumer() {
  const long items = 200, len = 3000;  // each item spans pages
  auto* sh_buf = dsm::alloc<long>(len);
  auto* sh_state = dsm::alloc<long>(2);  // [0]: item number ready, [1]: consumed count
  const int P = dsm::nprocs();
  if (P == 1) return;
  long consumed_sum = 0;
  for (long item = 1; item <= items; ++item) {
    int consumer = 1 + int(item % (P - 1));
    if (dsm::rank() == 0) {
      for (;;) {  // wait until the previous item was consumed
        dsm::lock_acquire(1);
        bool free = sh_state[1] == item - 1;
        if (free) {
          for (long i = 0; i < len; ++i) sh_buf[i] = item * 100000 + i;
          sh_state[0] = item;
        }
        dsm::lock_release(1);
        if (free) break;
      }
    } else if (dsm::rank() == consumer) {
      for (;;) {
        dsm::lock_acquire(1);
        bool ready = sh_state[0] == item;
        if (ready) {
          for (long i = 0; i < len; ++i) {
            expect(sh_buf[i] == item * 100000 + i, "consumed item", i, sh_buf[i], item * 100000 + i);
            consumed_sum += sh_buf[i];
          }
          sh_state[1] = item;
        }
        dsm::lock_release(1);
        if (ready) break;
      }
    }
  }
  dsm::barrier();
  expect(sh_state[1] == items, "items consumed", 1, sh_state[1], items);
}

// Jacobi-like phases over many pages, with the row split changing every phase.
void stencil() {
  const long n = 300, iters = 12;
  auto* sh_a = dsm::alloc<double>(n * n);
  auto* sh_b = dsm::alloc<double>(n * n);
  std::vector<double> a(n * n), b(n * n);
  for (long i = 0; i < n * n; ++i) a[i] = double(i % 97);
  if (dsm::rank() == 0) std::memcpy(sh_a, a.data(), sizeof(double) * n * n);
  dsm::barrier();
  const int me = dsm::rank(), P = dsm::nprocs();
  for (long it = 0; it < iters; ++it) {
    long shift = it * 7 % 13;  // rows move between ranks: pages change hands
    // Clamped to the interior: with many ranks a block is narrower than the shift.
    long lo = std::min(n - 1, 1 + (n - 2) * me / P + (me ? shift : 0));
    long hi = std::min(n - 1, 1 + (n - 2) * (me + 1) / P + (me + 1 < P ? shift : 0));
    for (long i = lo; i < hi; ++i)
      for (long j = 1; j < n - 1; ++j)
        sh_b[i * n + j] = 0.25 * (sh_a[(i - 1) * n + j] + sh_a[(i + 1) * n + j] + sh_a[i * n + j - 1] + sh_a[i * n + j + 1]);
    dsm::barrier();
    for (long i = lo; i < hi; ++i)
      for (long j = 1; j < n - 1; ++j) sh_a[i * n + j] = sh_b[i * n + j];
    dsm::barrier();
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j)
        b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) a[i * n + j] = b[i * n + j];
  }
  for (long i = 0; i < n * n; ++i) expect(sh_a[i] == a[i], "stencil", i, long(sh_a[i]), long(a[i]));
}

// Locks and barriers for `seconds` (rank 0's clock decides when to stop): a job whose
// statistics grow while the board's live test reads them.
void sync_for(double seconds) {
  auto* sh = dsm::alloc<long>(2);  // [0]: a counter under a lock, [1]: stop flag
  const double end = dsm::wtime() + seconds;
  long rounds = 0;
  for (bool stop = false; !stop; ++rounds) {
    dsm::lock_acquire(5);
    sh[0] += 1;
    dsm::lock_release(5);
    if (dsm::rank() == 0 && dsm::wtime() >= end) sh[1] = 1;
    dsm::barrier();
    stop = sh[1] != 0;
  }
  dsm::barrier();
  expect(sh[0] == rounds * dsm::nprocs(), "counter", 0, sh[0], rounds * dsm::nprocs());
}

// Barriers whose only traffic is write notices: every rank writes one word of its own block
// between barriers, and reads the others' words after the last. What a barrier costs as the
// job grows (--stats) comes from this pattern. Each rank claims its block (dsm::own), so the
// final reads fetch whole pages, not a diff per barrier; a block of 32 pages is fetched in
// bulk, whose reader no later barrier pushes to, so that what follows the last barrier costs
// the same however long the run.
void barrier_notices(int rounds) {
  const long block = 32 * 4096 / 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(block * P);
  for (int round = 1; round <= rounds; ++round) {
    for (int r = 0; r < P; ++r) dsm::own(r, sh + r * block, block * 8);
    sh[me * block] = stamped(round, me);
    dsm::barrier();
  }
  dsm::prefetch(sh, block * P * 8, dsm::Mode::read);
  for (int r = 0; r < P; ++r)
    expect(sh[r * block] == stamped(rounds, r), "barrier notices", r, long(sh[r * block]), long(stamped(rounds, r)));
}

// Every rank's barrier blob reaches every rank, through any tree of ranks: each rank attaches
// bytes of its own length and content every round (none in some rounds), and after the
// barrier each finds every rank's as attached, its own included.
void blobs(int rounds) {
  const int me = dsm::rank(), P = dsm::nprocs();
  auto length = [](int rank, int round) { return std::size_t((rank * 7 + round * 3) % 11); };
  auto byte_of = [](int rank, int round, std::size_t i) { return std::byte(rank * 31 + round * 5 + int(i)); };
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::byte> mine(length(me, round));
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = byte_of(me, round, i);
    dsm::detail::set_barrier_blob(std::move(mine));
    dsm::barrier();
    const auto& all = dsm::detail::barrier_blobs();
    expect(all.size() == std::size_t(P), "blob count", round, long(all.size()), P);
    for (int r = 0; r < P && std::size_t(r) < all.size(); ++r) {
      expect(all[r].size() == length(r, round), "blob length", r, long(all[r].size()), long(length(r, round)));
      for (std::size_t i = 0; i < all[r].size() && i < length(r, round); ++i)
        expect(all[r][i] == byte_of(r, round, i), "blob byte", r, long(all[r][i]), long(byte_of(r, round, i)));
    }
  }
}

}  // namespace dsm_check
