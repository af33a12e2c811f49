// Multi-process checks of the DSM core, run through dsmrun at 1 to 4 ranks. Each mode
// compares shared memory with what a sequential execution gives; exit 1 on a mismatch.
#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"
#include "runtime/stats.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what, long where, long got, long want) {
  if (ok) return;
  if (++failures <= 10)
    std::fprintf(stderr, "rank %d: %s at %ld: got %ld, want %ld\n", dsm::rank(), what, where, got, want);
}

// What word w holds after step (phase, round) `stamp`: a stale or misplaced word differs.
std::uint64_t stamped(long stamp, long w) { return std::uint64_t(stamp) << 32 | std::uint64_t(w); }

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
    long lo = 1 + (n - 2) * me / P + (me ? shift : 0), hi = 1 + (n - 2) * (me + 1) / P + (me + 1 < P ? shift : 0);
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

// A random program of writes, lock-protected updates and barriers, the same on every rank
// (same seed), checked against a sequential model of release consistency: in each phase
// every byte has at most one writer (race-free), lock-protected slots get additions (whose
// total does not depend on the order), and after each barrier every byte must match.
// With `flap`, each rank also says at random moments, with its own random stream, that
// another program shares its core or no longer does: waits then switch between polling and
// sleeping at once, in every state of the protocol.
void randomized(unsigned seed, int phases, bool flap = false) {
  const long bytes = 64 * 4096 + 123;
  const int slots = 16;
  auto* sh_mem = dsm::alloc<std::uint8_t>(bytes);
  auto* sh_slot = dsm::alloc<long>(slots);
  std::vector<std::uint8_t> model(bytes, 0);
  std::vector<long> slot_model(slots, 0);
  const int me = dsm::rank(), P = dsm::nprocs();
  std::mt19937 rng(seed), own_rng(seed * 31 + unsigned(me));
  auto maybe_flap = [&] {
    if (flap && own_rng() % 3 == 0) dsm::detail::set_core_shared(own_rng() % 2 == 0);
  };
  for (int phase = 0; phase < phases; ++phase) {
    // Runs of bytes with random owners. The first owner of a byte in a phase keeps it for
    // the phase (other owners skip it), so no byte is written by two ranks between barriers.
    std::vector<int> phase_owner(bytes, -1);
    long writes = 1 + long(rng() % 40);
    for (long w = 0; w < writes; ++w) {
      long at = long(rng() % bytes), len = 1 + long(rng() % (rng() % 2 ? 64 : 9000));
      if (at + len > bytes) len = bytes - at;
      int owner = int(rng() % P);
      std::uint8_t value = std::uint8_t(rng());
      const bool prefetch = rng() % 3 == 0;  // drawn on every rank: the streams stay equal
      if (owner == me && prefetch) dsm::prefetch(sh_mem + at, len, dsm::Mode::write);
      maybe_flap();
      for (long i = at; i < at + len; ++i) {
        if (phase_owner[i] != -1 && phase_owner[i] != owner) continue;
        phase_owner[i] = owner;
        model[i] = value;
        if (owner == me) sh_mem[i] = value;
      }
    }
    // Lock-protected additions.
    long updates = long(rng() % 20);
    for (long u = 0; u < updates; ++u) {
      int who = int(rng() % P), slot = int(rng() % slots);
      long add = long(rng() % 1000);
      if (who == me) {
        maybe_flap();
        dsm::lock_acquire(slot);
        sh_slot[slot] += add;
        dsm::lock_release(slot);
      }
      slot_model[slot] += add;
    }
    maybe_flap();
    dsm::barrier();
    // Reads only sometimes, so some pages stay invalid across phases with many notices.
    if (rng() % 2 == 0 || phase + 1 == phases) {
      for (long i = 0; i < bytes; ++i) expect(sh_mem[i] == model[i], "random bytes", i, sh_mem[i], model[i]);
      for (int s = 0; s < slots; ++s) expect(sh_slot[s] == slot_model[s], "lock slot", s, sh_slot[s], slot_model[s]);
    }
    dsm::barrier();
  }
}

// Exclusive (twin-free) writes as the balancer makes them: every phase, page-aligned blocks
// of an array are claimed collectively for random owners (so blocks move between ranks and
// owners keep pages across phases), the owner writes the even words of its block, and random
// ranks write odd words anywhere outside the loops, with twins. Checked against a model.
void claims(unsigned seed, int phases) {
  const long words_per_page = 4096 / 8, pages = 48, n = pages * words_per_page;
  auto* sh = dsm::alloc<std::uint64_t>(n);
  std::vector<std::uint64_t> model(n, 0);
  const int me = dsm::rank(), P = dsm::nprocs();
  std::mt19937 rng(seed);
  for (int phase = 1; phase <= phases; ++phase) {
    bool loop = rng() % 4 != 0;  // some phases leave held pages alone
    std::vector<long> cut{0};
    for (int r = 1; r < P; ++r) cut.push_back(long(rng() % (pages + 1)));
    cut.push_back(pages);
    std::sort(cut.begin(), cut.end());
    if (loop) {
      for (int r = 0; r < P; ++r)
        if (cut[r + 1] > cut[r])
          dsm::detail::claim_exclusive_write(r, sh + cut[r] * words_per_page, (cut[r + 1] - cut[r]) * 4096);
      for (int r = 0; r < P; ++r)
        for (long w = cut[r] * words_per_page; w < cut[r + 1] * words_per_page; w += 2) {
          std::uint64_t v = stamped(phase, w);
          if (r == me) sh[w] = v;
          model[w] = v;
        }
    }
    long outside = long(rng() % 30);
    std::vector<char> used(n, 0);  // one writer per word and phase: no races
    for (long k = 0; k < outside; ++k) {
      long w = long(rng() % (n / 2)) * 2 + 1;
      int who = int(rng() % P);
      if (used[w]++) continue;
      std::uint64_t v = std::uint64_t(phase) << 40 | std::uint64_t(k);
      if (who == me) sh[w] = v;
      model[w] = v;
    }
    dsm::barrier();
    if (rng() % 3 == 0 || phase == phases)
      for (long w = 0; w < n; ++w) expect(sh[w] == model[w], "claims", w, long(sh[w]), long(model[w]));
    dsm::barrier();
  }
}

// The pages next to this rank's block (blocks of per_rank words, one per rank) that it reads
// in a halo exchange: the last of block rank-1 and the first of block rank+1.
void check_edges(const std::uint64_t* sh, const std::vector<std::uint64_t>& model, long per_rank, const char* what) {
  const long words_per_page = 4096 / 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto check = [&](long from) {
    for (long w = from; w < from + words_per_page; ++w) expect(sh[w] == model[w], what, w, long(sh[w]), long(model[w]));
  };
  if (me > 0) check(me * per_rank - words_per_page);
  if (me + 1 < P) check((me + 1) * per_rank);
}

// A halo exchange as dsm::own makes it: page-aligned blocks are owned collectively and
// rewritten by their owners each phase (owners rotate every 10 phases, so held pages change
// hands); after the barrier rank r reads the last page of block r-1 and the first of block
// r+1 (which then come pushed with the barrier instead of fetched). Every fourth phase one
// random rank also writes one word of a block's first page outside the loop (with a twin),
// so some pushes must give way to the fetch that merges both changes.
void boundary(int phases) {
  const long words_per_page = 4096 / 8, block_pages = 3, per_rank = block_pages * words_per_page;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(per_rank * P);
  std::vector<std::uint64_t> model(per_rank * P, 0);
  std::mt19937 rng(7);
  for (int phase = 1; phase <= phases; ++phase) {
    for (int b = 0; b < P; ++b) {
      const int owner = (b + phase / 10) % P;
      dsm::own(owner, sh + b * per_rank, per_rank * 8);
      for (long w = b * per_rank; w < (b + 1) * per_rank; ++w) {
        std::uint64_t v = stamped(phase, w);
        if (owner == me) sh[w] = v;
        model[w] = v;
      }
    }
    dsm::barrier();
    if (phase % 4 == 0) {  // outside the loop: a twin-based write to someone's first page
      int who = int(rng() % P), owner = int(rng() % P);
      long w = owner * per_rank + 1 + 2 * long(rng() % (words_per_page / 2 - 1));
      std::uint64_t v = std::uint64_t(phase) << 40 | 1;
      if (who == me) sh[w] = v;
      model[w] = v;
      dsm::barrier();
    }
    check_edges(sh, model, per_rank, "boundary");
    dsm::barrier();
  }
}

// A time step of several phases, as Shallow's: each rank owns a page-aligned block and
// rewrites it in the first phase of a step (every third step with the values it holds
// already), and its neighbours read the block's edge pages after each of the step's
// barriers. A held page counts as written at every barrier; one that has not changed since
// it was last announced must not reach its readers again: the barriers of the read phases,
// where nobody writes, push nothing (after the first step: a page gets its first reader by a
// fetch, and the next barrier announces it once more). Every fifth step another rank writes a word of a
// block's first page outside the loops, and in the next step the owner restores what it
// wrote before: the contents it announced last, which must be announced again all the same.
void quiet_holds(int steps) {
  const long words_per_page = 4096 / 8, per_rank = 3 * words_per_page;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(per_rank * P);
  std::vector<std::uint64_t> model(per_rank * P, 0), owner_wrote(per_rank * P, 0);
  const auto pushed = [] { return long(dsm::stats::counters().pages_pushed.load()); };
  const long pushes_before = pushed();
  long quiet_pushes = 0;  // pushed at the barriers of read phases without a foreign write
  for (int step = 1; step <= steps; ++step) {
    const bool restore = step % 5 == 1 && step > 1, same = !restore && step % 3 == 0;
    for (int b = 0; b < P; ++b) {
      const int owner = (b + step / 10) % P;
      dsm::own(owner, sh + b * per_rank, per_rank * 8);
      for (long w = b * per_rank; w < (b + 1) * per_rank; ++w) {
        const std::uint64_t v = restore ? owner_wrote[w] : same ? model[w] : stamped(step, w);
        if (owner == me) sh[w] = v;
        model[w] = owner_wrote[w] = v;
      }
    }
    dsm::barrier();
    const bool foreign = step % 5 == 0 && P > 1;
    for (int phase = 0; phase < 3; ++phase) {
      const long before = pushed();
      if (phase == 0 && foreign) {
        const int b = step % P, who = (b + step / 10 + 1) % P;
        const long w = b * per_rank + 5;
        model[w] = std::uint64_t(step) << 40 | 1;
        if (who == me) sh[w] = model[w];
        dsm::barrier();
      }
      check_edges(sh, model, per_rank, "quiet holds");
      dsm::barrier();
      if (!foreign && step > 1) quiet_pushes += pushed() - before;
    }
  }
  expect(quiet_pushes == 0, "pages pushed at barriers where nothing changed", me, quiet_pushes, 0);
  expect(P == 1 || pushed() > pushes_before, "pages pushed in all", me, pushed() - pushes_before, 1);
}

// Holds renewed step after step (a time-step loop) stay open well past hold_barriers
// without a write fault, and lapse all the same once the loops stop: after more idle
// barriers than a hold lasts, the owner's next write to its block faults again. Each rank
// owns a block of three pages and reads its neighbour's first word after each barrier.
void renewed_holds(int steps) {
  const long words_per_page = 4096 / 8, per_rank = 3 * words_per_page;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(per_rank * P);
  const auto write_faults = [] { return long(dsm::stats::counters().write_faults.load()); };
  const auto write_block = [&](long stamp) {
    for (long w = me * per_rank; w < (me + 1) * per_rank; ++w) sh[w] = stamped(stamp, w);
  };
  const auto check_neighbour = [&](long stamp) {
    const long w = (me + 1) % P * per_rank;
    const std::uint64_t want = stamped(stamp, w);
    expect(sh[w] == want, "renewed holds", w, long(sh[w]), long(want));
  };
  long held_faults = 0;
  for (int step = 1; step <= steps; ++step) {
    for (int r = 0; r < P; ++r) dsm::own(r, sh + r * per_rank, per_rank * 8);
    const long before = write_faults();
    write_block(step);
    if (step > 1) held_faults += write_faults() - before;
    dsm::barrier();
    check_neighbour(step);
    dsm::barrier();
  }
  expect(held_faults == 0, "write faults on renewed holds", me, held_faults, 0);
  for (int idle = 0; idle < 24; ++idle) dsm::barrier();
  const long before = write_faults();
  write_block(steps + 1);
  expect(P == 1 || write_faults() > before, "write faults after the holds lapsed", me, write_faults() - before, 1);
  dsm::barrier();
  check_neighbour(steps + 1);
  dsm::barrier();
}

// An array whose size is not a whole number of pages, one block per rank, the last block
// ending where the array ends: the rest of that block's last page belongs to no array, so
// the block is held whole like the others and its writes make no twins after the first
// step. Every rank reads the array's last words after each barrier.
void allocation_tail(int steps) {
  const long words_per_page = 4096 / 8, per_rank = 3 * words_per_page;
  const int me = dsm::rank(), P = dsm::nprocs();
  const long total = P * per_rank - 5;
  auto* sh = dsm::alloc<std::uint64_t>(total);
  const auto twins = [] { return long(dsm::stats::counters().twins.load()); };
  long later_twins = 0;
  for (int step = 1; step <= steps; ++step) {
    for (int r = 0; r < P; ++r) {
      const long lo = r * per_rank, hi = std::min(total, lo + per_rank);
      dsm::own(r, sh + lo, std::size_t(hi - lo) * 8);
    }
    const long before = twins();
    for (long w = me * per_rank; w < std::min(total, (me + 1) * per_rank); ++w) sh[w] = stamped(step, w);
    dsm::barrier();
    if (step > 1) later_twins += twins() - before;
    for (long w = total - 3; w < total; ++w) {
      const std::uint64_t want = stamped(step, w);
      expect(sh[w] == want, "allocation tail", w, long(sh[w]), long(want));
    }
    dsm::barrier();
  }
  expect(later_twins == 0, "twins made for a block that ends with its allocation", me, later_twins, 0);
}

// False sharing at a block edge, as a naive split of a stencil makes it: page r is written
// half by rank r and half by rank r+1 (with twins) in every phase, and both read all of it
// after the barrier. After a reader's first fetch, the writer's diff comes pushed with the
// barrier: the phases must run with far fewer fetches than one per shared page.
void shared_edge(int phases) {
  const long half = 4096 / 8 / 2;
  const int me = dsm::rank(), P = dsm::nprocs();
  const long n = std::max(P - 1, 1) * 2 * half;
  auto* sh = dsm::alloc<std::uint64_t>(n);
  std::vector<std::uint64_t> model(n, 0);
  const auto fetches_before = dsm::stats::counters().fetch_requests.load();
  for (int phase = 1; phase <= phases; ++phase) {
    for (int page = 0; page + 1 < P; ++page)
      for (long w = 0; w < 2 * half; ++w) {
        const int writer = w < half ? page : page + 1;
        const long at = page * 2 * half + w;
        model[at] = stamped(phase, at);
        if (writer == me) sh[at] = model[at];
      }
    dsm::barrier();
    for (int page = me - 1; page <= me; ++page)
      if (page >= 0 && page + 1 < P)
        for (long at = page * 2 * half; at < (page + 1) * 2 * half; ++at)
          expect(sh[at] == model[at], "shared edge", at, long(sh[at]), long(model[at]));
    dsm::barrier();
  }
  const long fetches = long(dsm::stats::counters().fetch_requests.load() - fetches_before);
  expect(fetches <= phases / 8, "fetches for the shared edges", me, fetches, phases / 8);
}

// A result gathered after a loop: the last rank writes a word of each of 512 pages, and rank
// 0 then reads them in order (fetched ahead, in runs, far fewer requests than pages), then
// in a scattered order (one request per page at most, all values right), then writes them
// in order (the fetches run ahead of the write faults too).
void fetch_ahead() {
  const long pages = 512, words = 4096 / 8;
  const int me = dsm::rank(), writer = dsm::nprocs() - 1;
  auto* sh = dsm::alloc<std::uint64_t>(pages * words);
  const auto fetches = [] { return long(dsm::stats::counters().fetch_requests.load()); };
  for (int round = 1; round <= 3; ++round) {
    if (me == writer)
      for (long p = 0; p < pages; ++p) sh[p * words + round] = stamped(round, p);
    dsm::barrier();
    if (me == 0) {
      const long before = fetches();
      for (long k = 0; k < pages; ++k) {
        const long p = round == 2 ? (k * 197) % pages : k;  // 197 is prime to 512: every page once
        const std::uint64_t want = stamped(round, p);
        if (round == 3) sh[p * words] = want;
        expect(sh[p * words + round] == want, "fetch ahead", p, long(sh[p * words + round]), long(want));
      }
      const long made = fetches() - before;
      if (round == 2) expect(made <= pages, "requests for a scattered read", me, made, pages);
      else expect(made <= pages / 8, "requests for a read in order", me, made, pages / 8);
    }
    dsm::barrier();
  }
}

// Each rank writes its block of pages without dsm::own: in order, the write faults open the
// next pages ahead in runs, a few faults instead of one per page; scattered, a page each.
// The runs overshoot into the next rank's block, which that rank writes meanwhile: pages
// opened ahead and not written must go unannounced, so every rank reads its own block after
// the barrier without a fault, and every block holds its writer's words.
void write_ahead() {
  const long pages = 256, words = 4096 / 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(P * pages * words);
  const auto value = [](long round, long p, long w) { return std::uint64_t(round) << 40 | std::uint64_t(p) << 12 | std::uint64_t(w); };
  const auto& c = dsm::stats::counters();
  for (int round = 1; round <= 4; ++round) {
    const long before = long(c.write_faults.load());
    for (long k = 0; k < pages; ++k) {
      const long p = me * pages + (round == 2 ? (k * 97) % pages : k);  // 97 is prime to 256
      for (long w = 0; w < words; ++w) sh[p * words + w] = value(round, p, w);
    }
    const long made = long(c.write_faults.load()) - before;
    if (round == 2) expect(made <= pages, "write faults for scattered writes", me, made, pages);
    else expect(made <= pages / 8, "write faults for writes in order", me, made, pages / 8);
    dsm::barrier();
    const long reads = long(c.read_faults.load());
    for (long p = me * pages; p < (me + 1) * pages; ++p)
      expect(sh[p * words + 7] == value(round, p, 7), "own block", p, long(sh[p * words + 7]), long(value(round, p, 7)));
    expect(long(c.read_faults.load()) == reads, "read faults on the own block", me, long(c.read_faults.load()) - reads, 0);
    for (long p = 0; p < P * pages; ++p)
      for (long w = 0; w < words; w += 61)
        expect(sh[p * words + w] == value(round, p, w), "block of another rank", p * words + w, long(sh[p * words + w]),
               long(value(round, p, w)));
    dsm::barrier();
  }
}

// Garbage collection brings every page up to date. Pages 0-63, which rank 0 alone writes in
// every phase, come whole from rank 0 (whose copy is valid) instead of as a diff per interval
// since the last collection; page 64, which ranks 0 and 1 write halves of, has no valid copy
// anywhere and comes as diffs. The other ranks read nothing until the end.
void gc_copies(int phases) {
  const long pages = 64, words = 4096 / 8;
  const int me = dsm::rank();
  auto* sh = dsm::alloc<std::uint64_t>((pages + 1) * words);
  for (int phase = 1; phase <= phases; ++phase) {
    if (me == 0)
      for (long w = 0; w < pages * words; ++w) sh[w] = stamped(phase, w);
    if (me < 2)
      for (long w = pages * words + me; w < (pages + 1) * words; w += 2) sh[w] = stamped(phase, w);
    dsm::barrier();
  }
  const auto& c = dsm::stats::counters();
  const long applied = long(c.diffs_applied.load()), gcs = long(c.gcs.load());
  expect(gcs >= 3, "collections", me, gcs, 3);
  if (me != 0) expect(applied <= gcs * (pages + phases), "changes applied", me, applied, gcs * (pages + phases));
  // Each page at most once to each other rank per collection (page 64 too, if rank 0 has
  // made it valid by then), also when its items would straddle two requests (DSM_GC_BOUND is
  // set so that they do).
  const long whole = long(c.whole_pages_sent.load()), most = gcs * (pages + 1) * (dsm::nprocs() - 1);
  if (me == 0) expect(whole <= most, "whole pages sent", me, whole, most);
  for (long w = 0; w < (pages + 1) * words; ++w)
    expect(sh[w] == stamped(phases, w), "gc_copies", w, long(sh[w]), long(stamped(phases, w)));
  dsm::barrier();
}

// Rank 0 initializes an array of fresh pages, every word; then each rank owns and writes its
// block (dsm::own) at every step, and rank 0 writes a word of each page of a tail nobody
// owns. The first change of each page, whose diff against the zeroed page would be larger
// than the page, is kept as the page (diffs_deferred), not stored as a diff: at the first
// step rank 0 turns every twin it took at the initialization so. The other ranks, which
// never read the tail before, then fetch that first change of each tail page, diffed when
// they ask, before the step's change. Every rank checks every word after every step.
void init_pages(int steps) {
  const long words = 4096 / 8, per_rank = 16, tail = 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  const long pages = P * per_rank + tail, n = pages * words, block = per_rank * words;
  auto* sh = dsm::alloc<std::uint64_t>(n);
  std::vector<std::uint64_t> model(n);
  for (long w = 0; w < n; ++w) model[w] = stamped(1, w);
  if (me == 0) std::copy(model.begin(), model.end(), sh);
  dsm::barrier();
  for (int step = 2; step <= steps; ++step) {
    for (int r = 0; r < P; ++r) dsm::own(r, sh + r * block, block * sizeof *sh);
    for (long w = 0; w < P * block; ++w) model[w] = stamped(step, w);
    for (long p = P * per_rank; p < pages; ++p) model[p * words + step] = stamped(step, p * words + step);
    for (long w = me * block; w < (me + 1) * block; ++w) sh[w] = model[w];
    if (me == 0)
      for (long p = P * per_rank; p < pages; ++p) sh[p * words + step] = model[p * words + step];
    dsm::barrier();
    for (long w = 0; w < n; ++w) expect(sh[w] == model[w], "init_pages", w, long(sh[w]), long(model[w]));
    dsm::barrier();
  }
  const long deferred = long(dsm::stats::counters().diffs_deferred.load());
  if (me == 0) expect(deferred == pages, "changes kept as pages", me, deferred, pages);
}

// Pages written at barrier after barrier stay open with a twin (kept) and are diffed at
// each interval end. Pages 0-1 have one writer each, in most phases (idle stretches, some
// longer than a kept page waits, close them); every rank increments a counter in page 0
// under a lock (interval ends that are not barriers). Pages 2-3 go in cycles of 12 phases:
// one rank owns them and writes them whole (the others read them whole and get them pushed
// from then on), nobody writes them for eight phases (the holding lapses), everybody writes
// its words in two (kept) and leaves them in the last (kept unchanged when the next owner's
// whole pages and pushes arrive). All read all after each barrier.
void kept(int phases) {
  const long words_per_page = 4096 / 8, pages = 4, n = pages * words_per_page, half = 2 * words_per_page;
  auto* sh = dsm::alloc<std::uint64_t>(n);
  std::vector<std::uint64_t> model(n, 0);
  const int me = dsm::rank(), P = dsm::nprocs();
  std::mt19937 rng(11);
  int idle_until = 0;
  // Each word of [from, to) by the rank writer(w), most of them (some left alone).
  auto write = [&](long from, long to, int phase, auto writer) {
    for (long w = from; w < to; ++w) {
      if (rng() % 8 == 0) continue;
      const std::uint64_t v = stamped(phase, w);
      if (writer(w) == me) sh[w] = v;
      model[w] = v;
    }
  };
  for (int phase = 1; phase <= phases; ++phase) {
    if (phase % 23 == 0) idle_until = phase + 18;
    if (phase > idle_until) write(1, half, phase, [&](long w) { return int(w / words_per_page % P); });
    if (phase % 12 == 0) {
      const int owner = int(rng() % P);
      dsm::own(owner, sh + half, 2 * 4096);
      for (long w = half; w < n; ++w) {
        const std::uint64_t v = stamped(phase, w) | 1u << 31;
        if (owner == me) sh[w] = v;
        model[w] = v;
      }
    } else if (phase % 12 == 9 || phase % 12 == 10) {
      write(half, n, phase, [&](long w) { return int(w % P); });
    }
    dsm::lock_acquire(3);
    sh[0] += 1;
    dsm::lock_release(3);
    model[0] += std::uint64_t(P);
    dsm::barrier();
    for (long w = 0; w < n; ++w) expect(sh[w] == model[w], "kept", w, long(sh[w]), long(model[w]));
    dsm::barrier();
  }
}

// The page cost the balancer weighs moves with: a fetch of a few pages (mostly latency)
// leaves it unmeasured; a bulk fetch measures it, below that fetch's time.
void page_cost() {
  const long words = 512, pages = 256;  // 8-byte words per page
  auto* sh = dsm::alloc<long>(words * pages);
  if (dsm::rank() == 1)
    for (long w = 0; w < words * pages; ++w) sh[w] = w;
  dsm::barrier();
  if (dsm::rank() == 0) {
    dsm::prefetch(sh, 2 * words * sizeof(long), dsm::Mode::read);
    expect(dsm::detail::page_transfer_seconds() == 0, "page cost from a 2-page fetch (ns)", 0,
           long(dsm::detail::page_transfer_seconds() * 1e9), 0);
    const double t0 = dsm::wtime();
    dsm::prefetch(sh, words * pages * sizeof(long), dsm::Mode::read);
    const double bulk = dsm::wtime() - t0, cost = dsm::detail::page_transfer_seconds();
    expect(cost > 0 && cost <= bulk / (pages - 2), "page cost of a bulk fetch (ns)", 0, long(cost * 1e9),
           long(bulk / (pages - 2) * 1e9));
    for (long w = 0; w < words * pages; ++w) expect(sh[w] == w, "fetched word", w, sh[w], w);
  }
  dsm::barrier();
}

// Blocks of 1 MiB written by one rank and fetched by the other, turn about: each fetch is a
// large message (header, then a payload transfer that needs both ranks' progress). A rank's
// application thread that polls takes such messages itself and may stop polling before the
// transfer is done; the service thread must then take over, not sleep through it: a lost
// wake-up left such transfers to the service thread's idle timeout (200 ms). Run with one
// rank's core loaded, where that happened for one fetch in ten. Checks every word and that
// no fetch came near that timeout (a fetch takes a few milliseconds, 25 at most here).
void handoff() {
  const long words = 512 * 256, rounds = 60;  // 256 pages
  auto* sh = dsm::alloc<long>(words);
  double slowest = 0;
  for (long r = 0; r < rounds; ++r) {
    const int writer = int(r % 2);
    if (dsm::rank() == writer)
      for (long w = 0; w < words; ++w) sh[w] = w * rounds + r;
    dsm::barrier();
    if (dsm::rank() == 1 - writer) {
      const double t0 = dsm::wtime();
      dsm::prefetch(sh, words * sizeof(long), dsm::Mode::read);
      slowest = std::max(slowest, dsm::wtime() - t0);
      for (long w = 0; w < words; ++w) expect(sh[w] == w * rounds + r, "fetched word", w, sh[w], w * rounds + r);
    }
    dsm::barrier();
  }
  expect(slowest < 0.15, "slowest fetch of 1 MiB (us)", 0, long(slowest * 1e6), 150000);
}

}  // namespace

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

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "false_sharing") false_sharing();
  else if (mode == "migratory") migratory();
  else if (mode == "turns" && argc > 2) turns(std::stol(argv[2]));
  else if (mode == "producer_consumer") producer_consumer();
  else if (mode == "stencil") stencil();
  else if (mode == "random") {
    for (unsigned seed = 1; seed <= 6; ++seed) randomized(seed, 30);
  } else if (mode == "core_shared") {
    for (unsigned seed = 1; seed <= 4; ++seed) randomized(seed, 30, true);
  } else if (mode == "broken_promise") {  // two ranks promise to write one page alone
    auto* sh = dsm::alloc<std::uint64_t>(512);
    if (dsm::rank() < 2) {
      dsm::prefetch(sh, 4096, dsm::Mode::write_exclusive);
      for (int w = dsm::rank(); w < 512; w += 2) sh[w] = 1;
    }
    dsm::barrier();
    if (dsm::rank() == 2) std::printf("read %llu\n", (unsigned long long)sh[0]);  // must not silently pick one
    dsm::barrier();
  } else if (mode == "page_cost") {
    page_cost();
  } else if (mode == "handoff") {
    handoff();
  } else if (mode == "kept") {
    kept(120);
  } else if (mode == "fetch_ahead") {
    fetch_ahead();
  } else if (mode == "write_ahead") {
    write_ahead();
  } else if (mode == "init_pages") {
    init_pages(6);
  } else if (mode == "gc_copies") {
    gc_copies(40);
  } else if (mode == "shared_edge") {
    shared_edge(120);
  } else if (mode == "quiet_holds") {
    quiet_holds(60);
  } else if (mode == "renewed_holds") {
    renewed_holds(40);
  } else if (mode == "allocation_tail") {
    allocation_tail(30);
  } else if (mode == "boundary") {
    boundary(60);
  } else if (mode == "own_bad_rank") {
    auto* sh = dsm::alloc<long>(4096);
    dsm::own(dsm::nprocs(), sh, 4096 * sizeof(long));
  } else if (mode == "fabric") {  // libfabric is loaded by the transport, which 1 rank opens not
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    char line[4096];
    bool mapped = false;
    while (maps && std::fgets(line, sizeof line, maps)) mapped |= std::strstr(line, "/libfabric.so") != nullptr;
    if (maps) std::fclose(maps);
    if (mapped != (dsm::nprocs() > 1)) {
      std::fprintf(stderr, "rank %d of %d: libfabric %s\n", dsm::rank(), dsm::nprocs(), mapped ? "mapped" : "not mapped");
      ++failures;
    }
  } else if (mode == "claims") {
    for (unsigned seed = 1; seed <= 4; ++seed) claims(seed, 40);
  } else if (mode == "seed" && argc > 3) {  // one seed and phase count, for debugging
    randomized(unsigned(std::stoul(argv[2])), std::stoi(argv[3]));
  } else if (mode == "sync_for" && argc > 2) {
    sync_for(std::stod(argv[2]));
  } else if (mode == "long") {  // many phases: with a small DSM_GC_BOUND, collections happen
    randomized(42, 400);
  } else {
    std::fprintf(stderr, "dsm_check: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  dsm::finalize();
  if (failures) std::fprintf(stderr, "rank %d: %d mismatches\n", dsm::rank(), failures);
  else if (dsm::rank() == 0) std::printf("%s ok\n", mode.c_str());
  return failures ? 1 : 0;
}
