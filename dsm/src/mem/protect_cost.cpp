#include "mem/protect_cost.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>

#include "mem/fault.hpp"

namespace dsm::mem {
namespace {

void* g_scratch = nullptr;
std::size_t g_page = 0;

void open_scratch(void*, bool) { mprotect(g_scratch, g_page, PROT_READ | PROT_WRITE); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ProtectCost measure_protect_cost() {
  constexpr std::size_t samples = 9;
  g_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return {};
  g_scratch = p;
  auto* word = static_cast<volatile int*>(p);
  *word = 1;  // the first touch is not what is measured
  std::array<double, samples> faults{}, closes{};
  install_fault_handler(p, static_cast<std::byte*>(p) + g_page, open_scratch);
  for (std::size_t i = 0; i < samples; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    mprotect(p, g_page, PROT_READ);
    closes[i] = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    *word = *word + 1;
    faults[i] = seconds_since(t0);
  }
  uninstall_fault_handler();
  munmap(p, g_page);
  g_scratch = nullptr;
  const auto median = [](std::array<double, samples>& v) {
    std::nth_element(v.begin(), v.begin() + samples / 2, v.end());
    return v[samples / 2];
  };
  return {median(faults), median(closes)};
}

}  // namespace dsm::mem
