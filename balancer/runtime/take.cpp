// Work taken inside an execution (affinity scheduling, Markatos and LeBlanc): each rank's
// spans are cut into chunks; a rank runs its own from the front, and one that has run out
// takes chunks from the tail of the rank of its host with the most left, without waiting
// for that rank to be scheduled. What each rank ran travels with the next barrier and
// becomes the split of the next execution, so that under a steady load little is taken
// again.
//
// The chunks not yet started of rank r live in one word of the host's statistics board
// (detail::chunk_word): the execution's tag, the next chunk its owner starts and the end of
// those left. The owner advances the front, takers pull back the end, both by
// compare-and-swap, so a chunk runs once and a rank that stopped holds nothing locked. Any
// rank of the host sets a word up for an execution (its owner may not have been scheduled
// yet): every rank computes the same chunks, and a word is set up only from the taking
// execution before (the same on every rank) with no chunk left, so neither a rank that lags
// nor one ahead (loops without a barrier between them) sets up a word its owner still needs.
//
// Pages: the chunks that may change hands are the tail of each block (its second half).
// Their written pages are claimed for two owners, so that nobody writes them whole and
// holds of them end: whichever rank runs a tail chunk writes it with twins and diffs, while
// the rest of the block stays exclusive. A tail chunk whose pages a rank still held before
// the execution (a block that moved) is not taken until the next one. Those twins cost at
// every execution, so a loop takes work only where they cost little beside it (take_pays):
// a loop of a few milliseconds over rows of several pages each (Jacobi) would spend more on
// them than a take saves.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cstdlib>

namespace dsm::lb::runtime {
namespace {

// A word: tag (24 bits) | next (20) | end (20).
constexpr int count_bits = 20;
constexpr std::uint64_t count_mask = (std::uint64_t{1} << count_bits) - 1;
constexpr std::uint32_t tag_mask = (1u << 24) - 1;
// Chunks a block is cut into, at most.
constexpr long chunks_per_block = 16;
// A taker leaves a rank this many of its chunks not started: the rank runs them about as
// soon as the taker would, without moving their pages.
constexpr std::uint32_t left_to_victim = 1;

std::uint64_t make_word(std::uint32_t tag, std::uint64_t next, std::uint64_t end) {
  return std::uint64_t{tag} << (2 * count_bits) | next << count_bits | end;
}
std::uint32_t tag_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> (2 * count_bits)); }
std::uint32_t next_of(std::uint64_t w) { return static_cast<std::uint32_t>(w >> count_bits & count_mask); }
std::uint32_t end_of(std::uint64_t w) { return static_cast<std::uint32_t>(w & count_mask); }
// Sets `word` up for execution `tag` with `count` chunks if it holds the taking execution
// before it (`prev`, the same on every rank) with no chunk left: never over an execution its
// owner has not finished, nor over a later one.
void set_up(std::atomic<std::uint64_t>& word, std::uint32_t prev, std::uint32_t tag, std::uint32_t count) {
  std::uint64_t w = word.load(std::memory_order_acquire);
  while (tag_of(w) == prev && next_of(w) >= end_of(w))
    if (word.compare_exchange_weak(w, make_word(tag, 0, count), std::memory_order_acq_rel)) return;
}

// The owner's next chunk from the front of its word; false when none is left.
bool own_next(std::atomic<std::uint64_t>& word, std::uint32_t tag, std::uint32_t& chunk) {
  std::uint64_t w = word.load(std::memory_order_acquire);
  while (tag_of(w) == tag && next_of(w) < end_of(w))
    if (word.compare_exchange_weak(w, make_word(tag, next_of(w) + 1, end_of(w)), std::memory_order_acq_rel)) {
      chunk = next_of(w);
      return true;
    }
  return false;
}

// Chunks of rank r that a taker may still take.
std::uint32_t takeable(std::uint64_t w, std::uint32_t tag, std::uint32_t limit) {
  if (tag_of(w) != tag) return 0;
  const std::uint32_t from = std::max(next_of(w) + left_to_victim, limit);
  return end_of(w) > from ? end_of(w) - from : 0;
}

}  // namespace

bool takes_work(const Site::State& st, std::span<const Section> accesses, bool follows, int nranks) {
  const Options& o = st.model.opt;
  if (o.take == Options::Take::never || nranks <= 1 || follows || o.policy == Policy::static_blocks || !o.shares.empty() ||
      glue().lastprivate || st.model.solo.stage == SiteModel::Solo::Stage::alone ||
      st.model.solo.stage == SiteModel::Solo::Stage::trying)
    return false;
  bool affine = false;
  for (const Section& s : accesses) {
    if (s.index || s.bounds) return false;  // a sparse loop's inspector keeps this rank's ranges
    if (writes(s)) {
      if (s.whole) return false;
      affine = true;
    }
  }
  return affine;
}

Chunks cut_chunks(const Assignment& a, std::span<const Section> accesses) {
  long row_bytes = 0;  // bytes an iteration advances the first written array
  for (const Section& s : accesses)
    if (writes(s)) {
      row_bytes = std::abs(s.coef) * static_cast<long>(s.elem_size);
      break;
    }
  const long page_iterations = row_bytes > 0 ? std::max(1L, page_bytes / row_bytes) : 1;
  Chunks c;
  c.of.resize(a.size());
  c.tail.resize(a.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    long block = 0;
    for (const Span& s : a[r]) block += s.size();
    if (block == 0) continue;
    // Whole pages of the written array, on one grid for every rank; few enough for a word.
    long size = (block / chunks_per_block + page_iterations - 1) / page_iterations * page_iterations;
    size = std::max({size, page_iterations, block / static_cast<long>(count_mask / 2) + 1});
    for (const Span& s : a[r])
      for (long at = s.begin; at < s.end;) {
        const long to = std::min(s.end, (at / size + 1) * size);
        c.of[r].push_back({at, to});
        at = to;
      }
    const std::size_t count = c.of[r].size();
    c.tail[r] = static_cast<std::uint32_t>(count - std::max<std::size_t>(1, count / 2));
  }
  return c;
}

Assignment tails(const Chunks& c) {
  Assignment out(c.of.size());
  for (std::size_t r = 0; r < c.of.size(); ++r) {
    out[r].assign(c.of[r].begin() + c.tail[r], c.of[r].end());
    normalize(out[r]);
  }
  return out;
}

bool take_pays(const SiteModel& m, const Chunks& chunks, const std::vector<Run>& tail_pages) {
  // A tail page's twin, diff and write notice: the protocol's time per twin in a Jacobi sweep
  // whose tails were taken from (6 us on the paravirtualized VM of docs/results.md).
  constexpr double page_seconds = 6e-6;
  constexpr double budget = 0.05;
  for (const auto& of : chunks.of)
    if (of.size() > count_mask) return false;  // more than a word counts (spans by the million)
  if (m.opt.take == Options::Take::always) return true;
  if (m.last_wall.empty()) return false;
  long pages = 0;
  for (const Run& r : tail_pages) pages += r.last - r.first + 1;
  const double slowest = *std::max_element(m.last_wall.begin(), m.last_wall.end());
  return static_cast<double>(pages) * page_seconds <= budget * slowest;
}

void contest(const std::vector<Run>& runs, int nranks) {
  for (const Run& run : runs)
    for (const int owner : {run.rank, (run.rank + 1) % nranks})
      detail::claim_exclusive_write(owner, reinterpret_cast<const void*>(run.first * page_bytes),
                                    static_cast<std::size_t>(run.last - run.first + 1) * page_bytes);
}

std::unique_ptr<Plan::Taking> start_taking(Chunks chunks, std::span<const Section> accesses, long lb, long ub, long step,
                                           std::uint64_t tag, const SiteModel& m) {
  auto t = std::make_unique<Plan::Taking>();
  t->me = rank();
  // A rank out of the computation (its core another program's) takes nothing either.
  const auto me = static_cast<std::size_t>(t->me);
  t->takes_from_others = !(me < m.left.size() && m.left[me]);
  t->tag = static_cast<std::uint32_t>(tag % tag_mask) + 1;
  t->lb = lb, t->ub = ub, t->step = step;
  t->accesses.assign(accesses.begin(), accesses.end());
  t->opts = m.opt;
  const std::size_t n = chunks.of.size();
  t->limit.assign(n, 0);
  t->words.assign(n, nullptr);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& of = chunks.of[r];
    auto limit = static_cast<std::uint32_t>(of.size());
    while (limit > chunks.tail[r] &&
           writes_unheld(accesses, to_ranges({of[limit - 1]}, lb, ub, step).front()))
      --limit;
    t->limit[r] = limit;
    t->words[r] = detail::chunk_word(static_cast<int>(r));
    if (t->words[r]) set_up(*t->words[r], glue().last_take_tag, t->tag, static_cast<std::uint32_t>(of.size()));
  }
  glue().last_take_tag = t->tag;
  // A word that did not come to this execution (an earlier plan of this rank left early)
  // stays out of it: this rank runs its chunks in order, and nobody takes from it.
  if (t->words[me] && tag_of(t->words[me]->load(std::memory_order_acquire)) != t->tag) t->words[me] = nullptr;
  t->chunks = std::move(chunks);
  return t;
}

bool take_next(Plan::Taking& t, Range& out) {
  const auto me = static_cast<std::size_t>(t.me);
  std::uint32_t chunk = 0;
  const auto& mine = t.chunks.of[me];
  // Without a word (no board) this rank runs its own chunks in order and takes none.
  if (t.words[me] ? own_next(*t.words[me], t.tag, chunk) : t.handed.size() < mine.size()) {
    if (!t.words[me]) chunk = static_cast<std::uint32_t>(t.handed.size());
    t.handed.push_back(mine[chunk]);
    out = to_ranges({mine[chunk]}, t.lb, t.ub, t.step).front();
    return true;
  }
  while (t.takes_from_others) {
    std::size_t victim = me;
    std::uint32_t most = 0;
    for (std::size_t r = 0; r < t.words.size(); ++r)
      if (r != me && t.words[r])
        if (const std::uint32_t k = takeable(t.words[r]->load(std::memory_order_acquire), t.tag, t.limit[r]); k > most)
          victim = r, most = k;
    if (victim == me) return false;
    std::atomic<std::uint64_t>& word = *t.words[victim];
    std::uint64_t w = word.load(std::memory_order_acquire);
    if (takeable(w, t.tag, t.limit[victim]) == 0) continue;
    if (!word.compare_exchange_strong(w, make_word(t.tag, next_of(w), end_of(w) - 1), std::memory_order_acq_rel))
      continue;
    const Span s = t.chunks.of[victim][end_of(w) - 1];
    t.handed.push_back(s);
    ++t.takes;
    t.iterations_taken += s.size();
    out = to_ranges({s}, t.lb, t.ub, t.step).front();
    promise_reads(t.accesses, std::span(&out, 1));
    prefetch_taken(t.accesses, out, t.opts);
    return true;
  }
  return false;
}

void finish_taking(Plan::Taking& t) {
  const auto me = static_cast<std::size_t>(t.me);
  if (!t.words[me]) return;
  std::atomic<std::uint64_t>& word = *t.words[me];
  std::uint64_t w = word.load(std::memory_order_acquire);
  while (tag_of(w) == t.tag && next_of(w) < end_of(w))
    if (word.compare_exchange_weak(w, make_word(t.tag, end_of(w), end_of(w)), std::memory_order_acq_rel)) return;
}

void fold_ran(const Plan::Taking& t, std::vector<double>& taken, std::vector<double>& cpu, std::vector<Span>& ran) {
  std::vector<std::size_t> order(t.handed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.handed[a].begin < t.handed[b].begin; });
  std::vector<double> tk, cp;
  ran.clear();
  for (const std::size_t i : order) {
    if (!ran.empty() && ran.back().end == t.handed[i].begin) {
      ran.back().end = t.handed[i].end;
      tk.back() += taken[i];
      cp.back() += cpu[i];
    } else {
      ran.push_back(t.handed[i]);
      tk.push_back(taken[i]);
      cp.push_back(cpu[i]);
    }
  }
  taken = std::move(tk);
  cpu = std::move(cp);
}

bool adopt_taken(Site::State& st, const std::vector<RankFigures>& figs) {
  if (figs.size() != st.model.assign.size()) return false;
  // The spans must tile the iterations the split covered: ranks that ran the same chunk, or
  // none, would mean figures of another execution.
  std::vector<Span> all;
  long covered = 0;
  for (const auto& spans : st.model.assign)
    for (const Span& s : spans) covered += s.size();
  Assignment ran(figs.size());
  for (std::size_t r = 0; r < figs.size(); ++r) {
    ran[r] = figs[r].ran;
    all.insert(all.end(), ran[r].begin(), ran[r].end());
  }
  std::sort(all.begin(), all.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  long at = all.empty() ? 0 : all.front().begin, total = 0;
  for (const Span& s : all) {
    if (s.begin < at) return false;
    at = s.end;
    total += s.size();
  }
  if (total != covered) return false;
  const Assignment before = st.model.assign;
  adopt_ran(st.model, std::move(ran));
  return st.model.assign != before;
}

}  // namespace dsm::lb::runtime
