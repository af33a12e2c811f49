// Fetching, pushing and collecting pages: diffs pushed with barriers, fetches and write
// faults that run ahead, garbage collection, pages kept open across barriers, the measured
// page cost, large transfers handed to the service thread, and the transport's library
// loaded only when a transport opens.
#include "dsm_check.hpp"

#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "proto/state.hpp"
#include "runtime/runtime_hooks.hpp"
#include "runtime/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace dsm_check {

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

// A halo that does not start or end at page boundaries, read under dsm::ReadsWithin: each
// rank owns a page-aligned block of three pages (owners rotate every 7 phases) and rewrites
// it each phase; after the barrier rank r reads the last `tail` words of block r-1 and the
// first `head` words of block r+1, which start and end inside pages, by a prefetch or by
// faults. Their writers push those bytes alone (the test's statistics show pushes in part
// on every rank), and the bytes read must be the model's. Promises last 10 phases; after
// each, the rank reads the whole of those pages (fetched whole: the bytes the pushes left
// out are right too). Every ninth phase a rank writes a word of one inside the promise (a
// write fault fetches the page first), which every rank sees after the barrier. 100 phases:
// readers' registrations lapse and renew (push_barriers in serve.cpp).
void within(int phases) {
  const long words_per_page = 4096 / 8, per_rank = 3 * words_per_page, tail = 700, head = 300;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>(per_rank * P);
  std::vector<std::uint64_t> model(per_rank * P, 0);
  const auto check = [&](long from, long to, const char* what) {
    for (long w = from; w < to; ++w) expect(sh[w] == model[w], what, w, long(sh[w]), long(model[w]));
  };
  const long from = me > 0 ? me * per_rank - tail : 0, to = me + 1 < P ? (me + 1) * per_rank + head : P * per_rank;
  const auto written = [&](int r) { return (r + 1) * per_rank + head + 5; };  // outside r's halo, on its last page
  for (int phase = 1; phase <= phases;) {
    {
      dsm::ReadsWithin halo(sh + from, std::size_t(to - from) * 8);
      for (int k = 0; k < 10 && phase <= phases; ++k, ++phase) {
        for (int b = 0; b < P; ++b) {
          const int owner = (b + phase / 7) % P;
          dsm::own(owner, sh + b * per_rank, per_rank * 8);
          for (long w = b * per_rank; w < (b + 1) * per_rank; ++w) {
            model[w] = stamped(phase, w);
            if (owner == me) sh[w] = model[w];
          }
        }
        dsm::barrier();
        if (phase % 2) dsm::prefetch(sh + from, std::size_t(to - from) * 8, dsm::Mode::read);
        if (me > 0) check(from, me * per_rank, "halo before the block");
        if (me + 1 < P) check((me + 1) * per_rank, to, "halo after the block");
        if (phase % 9 == 0 && me + 1 < P) sh[written(me)] = stamped(-phase, written(me));
        dsm::barrier();
        for (int r = 0; r + 1 < P; ++r)
          if (phase % 9 == 0) model[written(r)] = stamped(-phase, written(r));
      }
    }
    if (me > 0) check(from / words_per_page * words_per_page, me * per_rank, "pages before the block");
    if (me + 1 < P) check((me + 1) * per_rank, ((to - 1) / words_per_page + 1) * words_per_page, "pages after the block");
    dsm::barrier();
  }
}

// A result gathered after a loop: the last rank writes a word of each of 512 pages, and rank
// 0 then reads them in order (fetched ahead, in runs, far fewer requests than pages), then
// in a scattered order (one request per page at most, all values right), then writes them
// in order (the fetches run ahead of the write faults too); then three such arrays read
// side by side.
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
  // Three arrays read side by side (a sparse matrix's values, indices and row starts): each
  // is a walk of its own, fetched ahead as if it were read alone.
  std::uint64_t* arrays[3] = {sh, dsm::alloc<std::uint64_t>(pages * words), dsm::alloc<std::uint64_t>(pages * words)};
  if (me == writer)
    for (long p = 0; p < pages; ++p)
      for (long a = 0; a < 3; ++a) arrays[a][p * words] = stamped(4 + int(a), p);
  dsm::barrier();
  if (me == 0) {
    const long before = fetches();
    for (long p = 0; p < pages; ++p)
      for (long a = 0; a < 3; ++a)
        expect(arrays[a][p * words] == stamped(4 + int(a), p), "fetch ahead, three walks", p, long(arrays[a][p * words]),
               long(stamped(4 + int(a), p)));
    const long made = fetches() - before;
    expect(made <= 3 * pages / 8, "requests for three reads in order", me, made, 3 * pages / 8);
  }
  dsm::barrier();
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

// Code outside the loops (every rank runs it, dsm-pass marks its accesses as
// dsm::lb::written and read do) on a page that one rank writes after announcing it whole:
// rank 0 writes a page whole (owned), lets the hold lapse, then rewrites a word of it with a
// twin, while the others never read it. In odd rounds it does so at six barriers in a row
// (the page stays open: kept, and its image is kept before the update); in even rounds at
// one barrier only, so that the update faults and opens a new twin, which is then all that
// holds the page as the barrier left it. Even rounds take a page nobody else has read (its
// whole page is fetched late), odd rounds after the first the page of the round before
// (its readers get the whole page pushed). After a barrier every rank updates the word, rank 0
// first and, told so by a message, the others only then: they must read it as the barrier
// left it, however late their fetch reaches rank 0 (its next barrier may have closed the
// interval of the update already), not rank 0's new value nor that value mixed bytewise with
// the diff of the interval before, which a reader applies over a whole page.
void late_reader(int rounds) {
  const long words_per_page = 4096 / 8;
  const int me = dsm::rank(), P = dsm::nprocs();
  auto* sh = dsm::alloc<std::uint64_t>((rounds / 2 + 2) * words_per_page);
  const long first = (words_per_page - reinterpret_cast<std::uintptr_t>(sh) % 4096 / 8) % words_per_page + 7;
  const auto write_faults = [] { return long(dsm::stats::counters().write_faults.load()); };
  for (int round = 1; round <= rounds; ++round) {
    const long w = first + round / 2 * words_per_page;
    dsm::own(0, sh + w - 7, 4096);
    if (me == 0)
      for (long k = w - 7; k < w - 7 + words_per_page; ++k) sh[k] = stamped(round, k);
    for (int idle = 0; idle < 20; ++idle) dsm::barrier();  // the hold lapses
    // Bytes 0-1 change from one value to the next, byte 2 only in the update.
    std::uint64_t value = 0;
    const int steps = round % 2 ? 6 : 1;
    for (int step = 1; step <= steps; ++step) {
      value = std::uint64_t(round) << 32 | std::uint64_t(step) << 8 | 0x11;
      if (me == 0) sh[w] = value;
      dsm::barrier();
    }
    const std::uint64_t updated = value | std::uint64_t(0xff) << 16;
    long faults = 0;
    if (me == 0) {
      const long before = write_faults();
      dsm::lb::written(sh[w]) = updated;
      faults = write_faults() - before;
      const std::byte go[1] = {};
      for (int r = 1; r < P; ++r) dsm::detail::send_to(r, go);
    } else {
      dsm::detail::receive_from(0);
      expect(dsm::lb::read(sh[w]) == value, "late reader", w, long(sh[w]), long(value));
      dsm::lb::written(sh[w]) = updated;
    }
    if (steps > 1) expect(faults == 0, "a kept page written without a fault", me, faults, 0);
    else if (me == 0) expect(faults == 1, "a page written at one barrier faults again", me, faults, 1);
    dsm::barrier();
    expect(sh[w] == updated, "after the barrier", w, long(sh[w]), long(updated));
    dsm::barrier();
  }
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
  // What a page two ranks write costs: its faults and mprotects, and over a network the round
  // trip of its fetch, measured once (every later execution weighs pages the same).
  const double shared = dsm::detail::shared_page_seconds();
  const auto& link = dsm::proto::state().balancer;
  expect(link.protect_seconds > 0, "faults and mprotects of a shared page (ns)", 0, long(link.protect_seconds * 1e9), 1);
  expect((link.fetch_round_trip > 0) == dsm::detail::pages_cross_network(), "a round trip over a network (ns)", 0,
         long(link.fetch_round_trip * 1e9), dsm::detail::pages_cross_network());
  expect(shared == link.protect_seconds + link.fetch_round_trip, "shared page cost (ns)", 0, long(shared * 1e9),
         long((link.protect_seconds + link.fetch_round_trip) * 1e9));
  expect(dsm::detail::shared_page_seconds() == shared, "shared page cost measured again (ns)", 0,
         long(dsm::detail::shared_page_seconds() * 1e9), long(shared * 1e9));
  dsm::barrier();
}

// Blocks of 1 MiB written by one rank and fetched by the other, turn about: each fetch is a
// large message (header, then a payload transfer that needs both ranks' progress). A rank's
// application thread that polls takes such messages itself and may stop polling before the
// transfer is done; the service thread must then take over at once, not sleep through it
// until its idle timeout (200 ms) wakes it. A loaded core stops the polling thread in the
// middle of transfers most often, so the test runs with one rank's core loaded. Checks every
// word, and that no fetch came near that timeout: a fetch of 1 MiB takes milliseconds, so a
// fetch of 150 ms or more waited for the timeout.
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

// libfabric is loaded by the transport, which a job of one rank does not open.
void fabric() {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  char line[4096];
  bool mapped = false;
  while (maps && std::fgets(line, sizeof line, maps)) mapped |= std::strstr(line, "/libfabric.so") != nullptr;
  if (maps) std::fclose(maps);
  if (mapped != (dsm::nprocs() > 1)) {
    std::fprintf(stderr, "rank %d of %d: libfabric %s\n", dsm::rank(), dsm::nprocs(), mapped ? "mapped" : "not mapped");
    ++failures;
  }
}

}  // namespace dsm_check
