#include "proto/within.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "proto/diffs.hpp"
#include "proto/notices.hpp"
#include "proto/state.hpp"

namespace dsm::proto {

namespace {

// Whether a promised page is invalid with the bytes this rank reads of it up to date.
bool known_read(std::uint32_t page) {
  const std::optional<ByteRange> r = within_range(page);
  return r && known_within(page, r->lo, r->hi);
}

// Opens a promised page whose bytes read are known, closes an invalid one whose are not.
// Under mu.
void settle(std::uint32_t page, std::vector<std::uint32_t>& to_open, std::vector<std::uint32_t>& to_close) {
  const auto& pg = state().heap.pages[page];
  if (pg.valid) return;
  if (known_read(page)) {
    if (pg.prot != mem::Prot::read) to_open.push_back(page);
  } else if (pg.prot != mem::Prot::none) {
    to_close.push_back(page);
  }
}

// Opens or closes the pages of promises that began or ended.
void settle_edges(std::span<const ByteRange> edges) {
  auto& s = state();
  std::vector<std::uint32_t> open, close;
  {
    std::lock_guard lk(s.mu);
    for (const ByteRange& e : edges) settle(e.page, open, close);
  }
  protect(open, mem::Prot::read);
  protect(close, mem::Prot::none);
}

}  // namespace

void add_within(std::span<const ByteRange> edges) {
  auto& all = state().within.edges;
  all.insert(all.end(), edges.begin(), edges.end());
  settle_edges(edges);
}

void remove_within(std::span<const ByteRange> edges) {
  auto& all = state().within.edges;
  for (const ByteRange& e : edges) {
    if (auto it = std::find(all.begin(), all.end(), e); it != all.end()) all.erase(it);
  }
  settle_edges(edges);
}

std::optional<ByteRange> within_range(std::uint32_t page) {
  std::optional<ByteRange> hull;
  for (const ByteRange& e : state().within.edges)
    if (e.page == page) {
      if (!hull) hull = e;
      hull->lo = std::min(hull->lo, e.lo);
      hull->hi = std::max(hull->hi, e.hi);
    }
  return hull;
}

bool known_within(std::uint32_t page, std::uint16_t lo, std::uint16_t hi) {
  auto& pg = state().heap.pages[page];
  if (pg.valid || pg.known_hi <= pg.known_lo || lo < pg.known_lo || hi > pg.known_hi) return false;
  take_whole(page, page + 1);
  const std::vector<Notice> need = needed_changes(page);
  return need.size() == 1 && need[0].whole && need[0].proc == pg.known_proc && need[0].idx == pg.known_idx;
}

void take_part(const Push& p, std::span<const Notice> need) {
  if (need.size() != 1 || !need[0].whole || need[0].proc != p.proc || need[0].idx != p.idx) return;
  auto& pg = state().heap.pages[p.page];
  std::memcpy(alias_page(p.page) + p.offset, p.data.data(), p.data.size());
  pg.zero = false;
  pg.known_proc = p.proc;
  pg.known_idx = p.idx;
  pg.known_lo = p.offset;
  pg.known_hi = std::uint16_t(p.offset + p.data.size());
}

void settle_within(std::vector<std::uint32_t>& invalidated, std::vector<std::uint32_t>& to_open,
                   std::vector<std::uint32_t>& to_close) {
  auto& s = state();
  std::vector<std::uint32_t> pages;
  for (const ByteRange& e : s.within.edges) pages.push_back(e.page);
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  for (std::uint32_t page : pages) {
    // Invalidated in this merge, still open as before: the caller closes it unless known.
    const auto inv = std::find(invalidated.begin(), invalidated.end(), page);
    if (inv == invalidated.end()) {
      settle(page, to_open, to_close);
    } else if (known_read(page)) {
      invalidated.erase(inv);
      if (s.heap.pages[page].prot != mem::Prot::read) to_open.push_back(page);
    }
  }
}

}  // namespace dsm::proto
