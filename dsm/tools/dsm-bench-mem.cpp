// dsm-bench-mem: what the memory layer's building blocks cost on this machine, each beside
// a reference measured in the same run (medians of many samples; the machines are noisy).
#include "cli.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "mem/diff.hpp"
#include "mem/fault.hpp"
#include "mem/region.hpp"

using namespace dsm::mem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uintptr_t bench_base = 0x4000'0000'0000;

// Median over `samples` of the time per operation, in ns, of `body` doing `ops` operations;
// `reset` runs untimed before each sample.
template <class Body, class Reset>
double median_ns(int samples, int ops, Body body, Reset reset) {
  std::vector<double> t(samples);
  for (auto& x : t) {
    reset();
    const auto start = Clock::now();
    body();
    x = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / ops;
  }
  std::nth_element(t.begin(), t.begin() + samples / 2, t.end());
  return t[samples / 2];
}

template <class Body>
double median_ns(int samples, int ops, Body body) {
  return median_ns(samples, ops, body, [] {});
}

Region* g_region = nullptr;
void open_for_write(void* addr, bool) { g_region->protect(g_region->page_of(addr), 1, Prot::read_write); }

// Keeps the other core busy inside this process, as a service thread that spins would.
class Spinner {
 public:
  Spinner() : thread_([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
      }
    }) {}
  ~Spinner() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// `n` page pairs (twin, page) where a fraction `density` of the words differ.
struct PagePairs {
  std::vector<std::byte> twins, pages;
  PagePairs(std::size_t n, double density, std::mt19937_64& rng) : twins(n * page_size), pages(n * page_size) {
    for (auto& b : twins) b = static_cast<std::byte>(rng());
    pages = twins;
    std::bernoulli_distribution pick(density);
    for (std::size_t w = 0; w < pages.size() / 8; ++w)
      if (pick(rng)) pages[w * 8] = ~pages[w * 8];
  }
  const std::byte* twin(std::size_t i) const { return &twins[i * page_size]; }
  const std::byte* page(std::size_t i) const { return &pages[i * page_size]; }
};

void row(const char* what, double ours, const char* ours_unit, double ref, const char* ref_name) {
  std::printf("%-44s %10.3f %-5s %10.3f  %-22s %6.2fx\n", what, ours, ours_unit, ref, ref_name, ours / ref);
}

void row(const char* what, double value, const char* unit) { std::printf("%-44s %10.3f %s\n", what, value, unit); }

double gbps(double ns_per_page) { return page_size / ns_per_page; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Costs of the DSM memory layer: faults, mprotect, twins, diffs"};
  int samples = 301;
  std::size_t npages = 64;
  app.add_option("--samples", samples, "samples per measurement (median reported)")->check(CLI::Range(3, 100000));
  app.add_option("--pages", npages, "pages per sample (working set)")->check(CLI::Range(1, 4096));
  dsm::cli::parse_or_exit(app, argc, argv);
  const int ops = static_cast<int>(npages);

  Region region(bench_base, npages * page_size);
  g_region = &region;
  auto close_all = [&] { region.protect(0, npages, Prot::none); };

  std::printf("%-44s %16s  %-29s %7s\n", "measurement (median)", "value", "reference", "ratio");
  install_fault_handler(region.app(), region.app() + region.capacity(), open_for_write);
  const double fault = median_ns(samples, ops, [&] {
    for (std::size_t p = 0; p < npages; ++p) reinterpret_cast<volatile char*>(region.app())[p * page_size] = 1;
  }, close_all);
  uninstall_fault_handler();
  // Opening a page needs no TLB flush; closing a page that was used does, and with a sibling
  // thread of the process running on the other core the flush becomes an interrupt there.
  auto open_each = [&] {
    for (std::size_t p = 0; p < npages; ++p) region.protect(p, 1, Prot::read_write);
  };
  auto close_each = [&] {
    for (std::size_t p = 0; p < npages; ++p) region.protect(p, 1, Prot::none);
  };
  auto open_and_touch_all = [&] {
    region.protect(0, npages, Prot::read_write);
    for (std::size_t p = 0; p < npages; ++p) reinterpret_cast<volatile char*>(region.app())[p * page_size] = 1;
  };
  const double open1 = median_ns(samples, ops, open_each, close_all);
  const double close1 = median_ns(samples, ops, close_each, open_and_touch_all);
  double open_busy, close_busy;
  {
    Spinner spin;
    open_busy = median_ns(samples, ops, open_each, close_all);
    close_busy = median_ns(samples, ops, close_each, open_and_touch_all);
  }
  row("SIGSEGV round trip + mprotect (us)", fault / 1e3, "us", open1 / 1e3, "mprotect open (us)");
  row("mprotect 1 page, close used page (us)", close1 / 1e3, "us", open1 / 1e3, "mprotect open (us)");
  row("mprotect open, sibling thread spinning", open_busy / 1e3, "us", open1 / 1e3, "mprotect open, idle");
  row("mprotect close, sibling thread spinning", close_busy / 1e3, "us", close1 / 1e3, "mprotect close, idle");

  std::mt19937_64 rng(42);
  const PagePairs same(npages, 0.0, rng);
  std::vector<std::byte> twins(npages * page_size);
  const double twin = median_ns(samples * 10, ops, [&] {
    for (std::size_t i = 0; i < npages; ++i) std::memcpy(&twins[i * page_size], same.page(i), page_size);
  });
  row("twin creation, 4 KiB copy (us)", twin / 1e3, "us");

  std::vector<std::byte> out, ref_out;
  out.reserve(2 * page_size);
  ref_out.reserve(2 * page_size);
  for (double density : {0.0, 0.01, 1.0}) {
    const PagePairs pairs(npages, density, rng);
    for (std::size_t i = 0; i < npages; ++i) {  // both encoders must agree before they are compared
      out.clear(), ref_out.clear();
      diff_encode(pairs.twin(i), pairs.page(i), page_size, out);
      diff_encode_reference(pairs.twin(i), pairs.page(i), page_size, ref_out);
      if (out != ref_out) {
        std::fprintf(stderr, "dsm-bench-mem: diff_encode and the reference disagree\n");
        return 1;
      }
    }
    auto encode_all = [&](auto encoder) {
      return median_ns(samples * 10, ops, [&] {
        for (std::size_t i = 0; i < npages; ++i) {
          out.clear();
          encoder(pairs.twin(i), pairs.page(i), page_size, out);
        }
      });
    };
    const double ours = encode_all(diff_encode), ref = encode_all(diff_encode_reference);
    char what[64];
    std::snprintf(what, sizeof what, "diff creation, %g %% words changed (GB/s)", density * 100);
    row(what, gbps(ours), "GB/s", gbps(ref), "word loop (GB/s)");

    if (density == 0) continue;
    std::vector<std::vector<std::byte>> diffs(npages);
    for (std::size_t i = 0; i < npages; ++i) diff_encode(pairs.twin(i), pairs.page(i), page_size, diffs[i]);
    const double apply = median_ns(samples * 10, ops, [&] {
      for (std::size_t i = 0; i < npages; ++i) diff_apply(diffs[i], &twins[i * page_size], page_size);
    });
    std::snprintf(what, sizeof what, "diff apply, %g %% words changed (GB/s)", density * 100);
    row(what, gbps(apply), "GB/s", gbps(twin), "4 KiB copy (GB/s)");
  }
  std::printf("(%d samples of %zu pages each; GB/s are bytes of page per second)\n", samples, npages);
}
