// Pages one rank holds or claims: exclusive writes claimed as the balancer claims them,
// blocks owned with dsm::own (their edge pages pushed to their readers, holds renewed and
// lapsing, the tail of an allocation), and promises of exclusive writes that are refused or
// broken.
#include "dsm_check.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"
#include "runtime/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace dsm_check {
namespace {

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

}  // namespace

// Exclusive (twin-free) writes as the balancer makes them: every phase, page-aligned blocks
// of an array are claimed collectively for random owners (so blocks move between ranks and
// owners keep pages across phases), the owner writes the even words of its block, and random
// ranks write odd words anywhere outside the loops, with twins. Checked against a model.
// Each rank also holds, now and then for a few phases, a dsm::ReadsWithin promise over a
// random range that starts and ends inside pages, and reads only that range meanwhile: its
// edge pages come pushed in part, or closed and fetched where another rank's write came
// without its push, or are written by this rank inside the promise.
void claims(unsigned seed, int phases) {
  const long words_per_page = 4096 / 8, pages = 48, n = pages * words_per_page;
  auto* sh = dsm::alloc<std::uint64_t>(n);
  std::vector<std::uint64_t> model(n, 0);
  const int me = dsm::rank(), P = dsm::nprocs();
  std::mt19937 rng(seed), own_rng(seed * 7 + unsigned(me));
  std::optional<dsm::ReadsWithin> promise;
  long from = 0, to = 0;
  int promise_left = 0;
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
    const bool read_all = rng() % 3 == 0 || phase == phases;  // drawn on every rank: the streams stay equal
    if (!promise && phase < phases && own_rng() % 3 == 0) {
      from = long(own_rng() % n);
      to = std::min(n, from + 1 + long(own_rng() % (3 * words_per_page)));
      promise.emplace(sh + from, std::size_t(to - from) * 8);
      promise_left = 1 + int(own_rng() % 6);
    }
    if (promise) {
      for (long w = from; w < to; ++w) expect(sh[w] == model[w], "claims, read within", w, long(sh[w]), long(model[w]));
      if (--promise_left == 0) promise.reset();
    } else if (read_all) {
      for (long w = 0; w < n; ++w) expect(sh[w] == model[w], "claims", w, long(sh[w]), long(model[w]));
    }
    dsm::barrier();
  }
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
// fetch, and the next barrier announces it once more). Every fifth step another rank writes a
// word of a block's first page outside the loops, and in the next step the owner restores
// what it wrote before: the contents it announced last, which must be announced again all
// the same.
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

// A copy of a held page served as the barrier that announces the hold ends (its holder waits
// in it, or has just taken in its departure) is one of the copies the holder's next
// unchanged barrier leaves valid (Page::shown). Each round a fresh page is held by the last
// rank; the first rank reads it right after that barrier, which the holder leaves last
// where barriers go down a chain (DSM_BARRIER_FANOUT=1). The holder then writes the page's
// even words again, without a fault, and a third rank reads its odd words a little later,
// before the holder arrives at the next barrier.
// After the next barrier the first rank reads the new even words: had the third rank's
// copy been taken as the only one shown, the holder would leave the page unannounced and
// the first rank's copy stale.
void served_as_barrier_ends(int rounds) {
  const long words = 4096 / 8;
  const int me = dsm::rank(), P = dsm::nprocs(), holder = P - 1, early = 0, late = 1;
  auto* sh = dsm::alloc<std::uint64_t>(std::size_t(rounds) * words);
  for (int round = 0; round < rounds; ++round) {
    std::uint64_t* page = sh + round * words;
    const auto first = [&](long w) { return stamped(2 * round + 1, w); };
    const auto second = [&](long w) { return w % 2 == 0 ? stamped(2 * round + 2, w) : first(w); };
    dsm::own(holder, page, 4096);
    if (me == holder)
      for (long w = 0; w < words; ++w) page[w] = first(w);
    dsm::barrier();
    // An odd word: the holder writes the even ones meanwhile.
    if (me == early && early != holder)
      expect(page[1] == first(1), "held page read as its barrier ends", round, long(page[1]), long(first(1)));
    dsm::own(holder, page, 4096);
    if (me == holder) {
      for (long w = 0; w < words; w += 2) page[w] = second(w);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the late read comes meanwhile
    }
    if (me == late && late != holder) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      expect(page[1] == first(1), "odd word of a held page being written", round, long(page[1]), long(first(1)));
    }
    dsm::barrier();
    for (long w = 0; w < words; ++w)
      expect(page[w] == second(w), "held page after its holder wrote it again", w, long(page[w]), long(second(w)));
    dsm::barrier();
  }
}

// A block that moves to another rank, as the balancer moves rows, is fetched once by its new
// owner. Its old owner held it, so it announces it whole at the barrier where its hold
// ends; the copy fetched is what that announcement says, whether it was served before that
// barrier (the unchanged page then goes unannounced) or while the old owner waited in it
// (the copy is marked as that interval left it). Each rank owns a block of 16 pages and
// writes it every step, prefetching it first as a loop does; halfway, 8 pages of rank 1's
// block move to rank 0. Checked against a model, and the pages rank 0 fetched counted.
void moved_block(int steps) {
  const long words_per_page = 4096 / 8, block = 16 * words_per_page, moved = 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(block * P);
  std::vector<std::uint64_t> model(block * P, 0);
  const auto fetched = [] { return long(dsm::stats::counters().pages_fetched.load()); };
  long before_move = 0;
  for (int step = 1; step <= steps; ++step) {
    const bool after = step > steps / 2;
    if (step == steps / 2 + 1) before_move = fetched();
    for (int r = 0; r < P; ++r) {
      const long from = r * block + (r == 1 && after ? moved * words_per_page : 0);
      const long to = (r + 1) * block + (r == 0 && after && P > 1 ? moved * words_per_page : 0);
      dsm::own(r, sh + from, std::size_t(to - from) * 8);
      if (r == me) dsm::prefetch(sh + from, std::size_t(to - from) * 8, dsm::Mode::write);
      for (long w = from; w < to; ++w) {
        if (r == me) sh[w] = stamped(step, w);
        model[w] = stamped(step, w);
      }
    }
    dsm::barrier();
  }
  const long after_move = fetched() - before_move;
  expect(me != 0 || P == 1 || after_move == moved, "pages rank 0 fetched after the move", me, after_move, moved);
  for (long w = 0; w < block * P; ++w) expect(sh[w] == model[w], "moved block", w, long(sh[w]), long(model[w]));
  dsm::barrier();
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

// A page owned by a rank the job does not have is refused with the ranks that exist.
void own_bad_rank() {
  auto* sh = dsm::alloc<long>(4096);
  dsm::own(dsm::nprocs(), sh, 4096 * sizeof(long));
}

// Two ranks promise to write one page alone (Mode::write_exclusive) and both write it: the
// runtime reports the broken promise instead of silently merging the writes.
void broken_promise() {
  auto* sh = dsm::alloc<std::uint64_t>(512);
  if (dsm::rank() < 2) {
    dsm::prefetch(sh, 4096, dsm::Mode::write_exclusive);
    for (int w = dsm::rank(); w < 512; w += 2) sh[w] = 1;
  }
  dsm::barrier();
  if (dsm::rank() == 2) std::printf("read %llu\n", (unsigned long long)sh[0]);  // must not silently pick one
  dsm::barrier();
}

}  // namespace dsm_check
