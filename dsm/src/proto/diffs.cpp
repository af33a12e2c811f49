#include "proto/diffs.hpp"

#include <algorithm>
#include <cstring>

#include "mem/diff.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

std::size_t encode_diff(std::uint32_t page, std::vector<std::byte>& out) {
  std::size_t n = mem::diff_encode(state().heap.pages[page].twin.get(), alias_page(page), mem::page_size, out);
  auto& c = stats::counters();
  c.diffs_created.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_created.fetch_add(n, std::memory_order_relaxed);
  return n;
}

void encode_twin(std::uint32_t page) {
  auto& s = state();
  auto& pg = s.heap.pages[page];
  s.served.diff_bytes += encode_diff(page, s.served.diffs[diff_key(page, pg.twin_idx)]);
  pg.twin.reset();
}

std::vector<Notice> needed_changes(std::uint32_t page) {
  auto& s = state();
  const auto& log = s.intervals.log;
  auto& pg = s.heap.pages[page];
  std::vector<Notice> need(pg.pending.begin(), pg.pending.end());
  for (const Notice& w : pg.pending) {
    if (!w.whole) continue;
    // Two whole pages written concurrently cannot be merged: a broken exclusive promise.
    for (const Notice& o : pg.pending)
      if (o.whole && (o.proc != w.proc || o.idx != w.idx) && !happened_before(log, o, w) &&
          !happened_before(log, w, o))
        fatal("page %u written without twins by ranks %u and %u concurrently (an exclusive-write promise was broken)",
              page, w.proc, o.proc);
    std::uint32_t me = std::uint32_t(s.me);
    // Own intervals dropped by garbage collection are in every copy already.
    for (std::uint32_t k = std::max(log.get(w.proc, w.idx).vt[me], log.first(me)); k < log.known(me); ++k)
      for (const PageRun& run : log.get(me, k).runs)
        if (page >= run.first && page - run.first < run.count) {
          if (run.whole) fatal("page %u written without twins by ranks %u and %d concurrently", page, w.proc, s.me);
          need.push_back({me, k, false});
        }
  }
  try {
    return application_order(log, std::move(need));
  } catch (const codec::DecodeError& e) {
    fatal("write notices of page %u cannot be ordered: %s", page, e.what());
  }
}

void apply_change(std::uint32_t page, const Notice& n, std::span<const std::byte> data) {
  auto& c = stats::counters();
  if (n.whole) {
    if (data.size() != mem::page_size) fatal("whole page %u from rank %u has %zu bytes", page, n.proc, data.size());
    std::memcpy(alias_page(page), data.data(), mem::page_size);
  } else if (!mem::diff_apply(data, alias_page(page), mem::page_size)) {
    fatal("malformed diff for page %u from rank %u", page, n.proc);
  }
  c.diffs_applied.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_applied.fetch_add(data.size(), std::memory_order_relaxed);
}

}  // namespace dsm::proto
