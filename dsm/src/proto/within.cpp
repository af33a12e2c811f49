#include "proto/within.hpp"

#include <cstring>

#include "proto/diffs.hpp"
#include "proto/notices.hpp"
#include "proto/state.hpp"

namespace dsm::proto {

bool known_within(std::uint32_t page, std::uint16_t lo, std::uint16_t hi) {
  auto& pg = state().heap.pages[page];
  if (pg.valid || pg.known_hi <= pg.known_lo || lo < pg.known_lo || hi > pg.known_hi) return false;
  take_whole(page, page + 1);
  const std::vector<Notice> need = needed_changes(page);
  return need.size() == 1 && need[0].whole && need[0].proc == pg.known_proc && need[0].idx == pg.known_idx;
}

bool take_part(const Push& p, std::span<const Notice> need) {
  if (need.size() != 1 || !need[0].whole || need[0].proc != p.proc || need[0].idx != p.idx) return false;
  auto& pg = state().heap.pages[p.page];
  std::memcpy(alias_page(p.page) + p.offset, p.data.data(), p.data.size());
  pg.zero = false;
  pg.known_proc = p.proc;
  pg.known_idx = p.idx;
  pg.known_lo = p.offset;
  pg.known_hi = std::uint16_t(p.offset + p.data.size());
  return true;
}

void open_within(std::vector<std::uint32_t> pages) {
  auto& s = state();
  std::erase_if(pages, [&](std::uint32_t p) { return s.heap.pages[p].prot != mem::Prot::none; });
  s.within.open.insert(s.within.open.end(), pages.begin(), pages.end());
  protect(pages, mem::Prot::read);
}

void close_within() {
  auto& s = state();
  auto& open = s.within.open;
  if (open.empty()) return;
  std::erase_if(open, [&](std::uint32_t p) { return s.heap.pages[p].valid; });
  protect(open, mem::Prot::none);
  open.clear();
}

}  // namespace dsm::proto
