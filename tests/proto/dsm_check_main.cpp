// dsm_check MODE [ARGS]: runs one mode of the checks (dsm_check.hpp) on every rank, and
// prints "MODE ok" on rank 0 when no rank found a mismatch.
#include "dsm_check.hpp"

#include <dsm/dsm.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

namespace dsm_check {

int failures = 0;

void expect(bool ok, const char* what, long where, long got, long want) {
  if (ok) return;
  if (++failures <= 10)
    std::fprintf(stderr, "rank %d: %s at %ld: got %ld, want %ld\n", dsm::rank(), what, where, got, want);
}

namespace {

struct Mode {
  const char* name;
  int args;                  // arguments the mode needs after its name
  void (*run)(char** args);  // given the arguments after the mode's name
};

constexpr Mode modes[] = {
    {"false_sharing", 0, [](char**) { false_sharing(); }},
    {"migratory", 0, [](char**) { migratory(); }},
    {"turns", 1, [](char** a) { turns(std::stol(a[0])); }},
    {"producer_consumer", 0, [](char**) { producer_consumer(); }},
    {"stencil", 0, [](char**) { stencil(); }},
    {"blobs", 0, [](char**) { blobs(30); }},
    {"random", 0,
     [](char**) {
       for (unsigned seed = 1; seed <= 6; ++seed) randomized(seed, 30);
     }},
    {"core_shared", 0,
     [](char**) {
       for (unsigned seed = 1; seed <= 4; ++seed) randomized(seed, 30, true);
     }},
    {"broken_promise", 0, [](char**) { broken_promise(); }},
    {"page_cost", 0, [](char**) { page_cost(); }},
    {"handoff", 0, [](char**) { handoff(); }},
    {"kept", 0, [](char**) { kept(120); }},
    {"late_reader", 0, [](char**) { late_reader(6); }},
    {"fetch_ahead", 0, [](char**) { fetch_ahead(); }},
    {"write_ahead", 0, [](char**) { write_ahead(); }},
    {"gc_copies", 0, [](char**) { gc_copies(40); }},
    {"init_pages", 0, [](char**) { init_pages(6); }},
    {"shared_edge", 0, [](char**) { shared_edge(120); }},
    {"within", 0, [](char**) { within(100); }},
    {"quiet_holds", 0, [](char**) { quiet_holds(60); }},
    {"moved_block", 0, [](char**) { moved_block(20); }},
    {"served_as_barrier_ends", 0, [](char**) { served_as_barrier_ends(40); }},
    {"renewed_holds", 0, [](char**) { renewed_holds(40); }},
    {"allocation_tail", 0, [](char**) { allocation_tail(30); }},
    {"boundary", 0, [](char**) { boundary(60); }},
    {"own_bad_rank", 0, [](char**) { own_bad_rank(); }},
    {"fabric", 0, [](char**) { fabric(); }},
    {"claims", 0,
     [](char**) {
       for (unsigned seed = 1; seed <= 4; ++seed) claims(seed, 40);
     }},
    // One seed and phase count, for debugging.
    {"seed", 2, [](char** a) { randomized(unsigned(std::stoul(a[0])), std::stoi(a[1])); }},
    {"barrier_notices", 1, [](char** a) { barrier_notices(std::stoi(a[0])); }},
    {"sync_for", 1, [](char** a) { sync_for(std::stod(a[0])); }},
    // Many phases: with a small DSM_GC_BOUND, collections happen.
    {"long", 0, [](char**) { randomized(42, 400); }},
};

}  // namespace
}  // namespace dsm_check

int main(int argc, char** argv) {
  using namespace dsm_check;
  dsm::init(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  const Mode* m = std::find_if(std::begin(modes), std::end(modes), [&](const Mode& candidate) {
    return mode == candidate.name && argc > 1 + candidate.args;
  });
  if (m == std::end(modes)) {
    std::fprintf(stderr, "dsm_check: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  m->run(argv + 2);
  dsm::finalize();
  if (failures) std::fprintf(stderr, "rank %d: %d mismatches\n", dsm::rank(), failures);
  else if (dsm::rank() == 0) std::printf("%s ok\n", mode.c_str());
  return failures ? 1 : 0;
}
