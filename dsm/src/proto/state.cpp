#include "proto/state.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace dsm::proto {

State& state() {
  // Never destroyed: a rank that leaves without dsm::finalize (exit from main) must not tear
  // down pages and diffs under its service thread, which still answers the other ranks.
  static State& s = *new State;
  return s;
}

std::byte* alias_page(std::uint32_t page) {
  return state().region->alias() + std::size_t(page) * mem::page_size;
}

void protect(std::vector<std::uint32_t>& pages, mem::Prot prot) {
  if (pages.empty()) return;
  std::sort(pages.begin(), pages.end());
  std::vector<std::size_t> wide(pages.begin(), pages.end());
  state().region->protect_pages(wide, prot);
  for (auto p : pages) state().heap.pages[p].prot = prot;
}

void fatal(const char* fmt, ...) {
  // One write: the ranks share dsmrun's stderr, and a message in pieces gets interleaved
  // with another rank's.
  char line[1024];
  int n = std::snprintf(line, sizeof line, "dsm: rank %d: ", state().me);
  va_list ap;
  va_start(ap, fmt);
  n += std::vsnprintf(line + n, sizeof line - std::size_t(n) - 1, fmt, ap);
  va_end(ap);
  n = std::min(n, int(sizeof line) - 2);
  line[n] = '\n';
  std::fwrite(line, 1, std::size_t(n) + 1, stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace dsm::proto
