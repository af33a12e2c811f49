#include "proto/diffs.hpp"

#include <algorithm>
#include <cstring>

#include "mem/diff.hpp"
#include "mem/page_copy.hpp"
#include "proto/page_buffers.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

alignas(64) const std::byte zero_page[mem::page_size] = {};

void Twin::copy_of(const std::byte* page) {
  std::byte* own = p_ && p_ != zero_page ? const_cast<std::byte*>(p_) : take_page_buffer().release();
  std::memcpy(own, page, mem::page_size);
  p_ = own;
}

std::unique_ptr<std::byte[]> Twin::release_copy_of(const std::byte* page) {
  copy_of(page);
  std::unique_ptr<std::byte[]> own(const_cast<std::byte*>(p_));
  p_ = nullptr;
  return own;
}

namespace {

void count_created(std::size_t bytes) {
  auto& c = stats::counters();
  c.diffs_created.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_created.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace

std::size_t encode_diff(const std::byte* twin, const std::byte* page, std::vector<std::byte>& out) {
  const std::size_t n = mem::diff_encode(twin, page, mem::page_size, out);
  count_created(n);
  return n;
}

void put_diff(codec::Writer& w, const std::byte* twin, const std::byte* page) {
  auto& out = w.buffer();
  const std::size_t at = out.size();
  w.put<std::uint32_t>(0);
  const auto n = std::uint32_t(encode_diff(twin, page, out));
  std::memcpy(out.data() + at, &n, sizeof n);
}

void encode_twin(std::uint32_t page) {
  auto& s = state();
  auto& pg = s.heap.pages[page];
  const std::uint64_t key = diff_key(page, pg.twin_idx);
  if (!pg.twin.zero() && std::memcmp(pg.twin.get(), zero_page, mem::page_size) != 0) {
    s.served.diff_bytes += encode_diff(pg.twin.get(), alias_page(page), s.served.diffs[key]);
    pg.twin.reset();
    return;
  }
  // A page first written from its zeroed allocation (an array initialized) has usually
  // changed in nearly every word: its diff comes to more than the page. Stored, thousands
  // of such diffs take fresh memory at the first barrier after the initialization, a page
  // fault per few KiB, while the other ranks wait in the barrier; and most are never asked
  // for (the next whole page or change of each page supersedes them). The page as the
  // interval left it takes the twin's buffer instead, and is diffed against zeros when a
  // rank asks. The diff is made here only to be measured, in a buffer reused from page to
  // page (under mu).
  static std::vector<std::byte> measured;
  measured.clear();
  mem::diff_encode(zero_page, alias_page(page), mem::page_size, measured);
  if (measured.size() <= mem::page_size) {
    count_created(measured.size());
    s.served.diff_bytes += measured.size();
    s.served.diffs[key] = measured;
    pg.twin.reset();
    return;
  }
  s.served.ends.emplace(key, pg.twin.release_copy_of(alias_page(page)));
  s.served.diff_bytes += mem::page_size;
  stats::counters().diffs_deferred.fetch_add(1, std::memory_order_relaxed);
}

OwnChange own_change(std::uint32_t page, std::uint32_t idx) {
  auto& served = state().served;
  if (const auto d = served.diffs.find(diff_key(page, idx)); d != served.diffs.end()) return {&d->second, nullptr};
  if (const auto e = served.ends.find(diff_key(page, idx)); e != served.ends.end()) return {nullptr, e->second.get()};
  return {};
}

void put_change(codec::Writer& w, OwnChange c) {
  if (c.end) put_diff(w, zero_page, c.end);
  else w.bytes(*c.diff);
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

void apply_change(std::uint32_t page, const Notice& n, std::span<const std::byte> data, bool streaming) {
  auto& c = stats::counters();
  state().heap.pages[page].zero = false;
  if (n.whole) {
    if (data.size() != mem::page_size) fatal("whole page %u from rank %u has %zu bytes", page, n.proc, data.size());
    if (streaming) mem::copy_page_streaming(alias_page(page), data.data(), mem::page_size);
    else std::memcpy(alias_page(page), data.data(), mem::page_size);
  } else if (!mem::diff_apply(data, alias_page(page), mem::page_size)) {
    fatal("malformed diff for page %u from rank %u", page, n.proc);
  }
  c.diffs_applied.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_applied.fetch_add(data.size(), std::memory_order_relaxed);
}

}  // namespace dsm::proto
