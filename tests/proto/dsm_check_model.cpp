// The randomized model test: random programs checked against a sequential model of release
// consistency.
#include "dsm_check.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <random>
#include <vector>

namespace dsm_check {

// A random program of writes, lock-protected updates and barriers, the same on every rank
// (same seed), checked against a sequential model of release consistency: in each phase
// every byte has at most one writer (race-free), lock-protected slots get additions (whose
// total does not depend on the order), and after each barrier every byte must match.
// With `flap`, each rank also says at random moments, with its own random stream, that
// another program shares its core or no longer does: waits then switch between polling and
// sleeping at once, in every state of the protocol.
void randomized(unsigned seed, int phases, bool flap) {
  const long bytes = 64 * 4096 + 123;
  const int slots = 16;
  auto* sh_mem = dsm::alloc<std::uint8_t>(bytes);
  auto* sh_slot = dsm::alloc<long>(slots);
  std::vector<std::uint8_t> model(bytes, 0);
  std::vector<long> slot_model(slots, 0);
  const int me = dsm::rank(), P = dsm::nprocs();
  std::mt19937 rng(seed), own_rng(seed * 31 + unsigned(me));
  auto maybe_flap = [&] {
    if (flap && own_rng() % 3 == 0) dsm::detail::set_core_shared(own_rng() % 2 == 0);
  };
  for (int phase = 0; phase < phases; ++phase) {
    // Runs of bytes with random owners. The first owner of a byte in a phase keeps it for
    // the phase (other owners skip it), so no byte is written by two ranks between barriers.
    std::vector<int> phase_owner(bytes, -1);
    long writes = 1 + long(rng() % 40);
    for (long w = 0; w < writes; ++w) {
      long at = long(rng() % bytes), len = 1 + long(rng() % (rng() % 2 ? 64 : 9000));
      if (at + len > bytes) len = bytes - at;
      int owner = int(rng() % P);
      std::uint8_t value = std::uint8_t(rng());
      const bool prefetch = rng() % 3 == 0;  // drawn on every rank: the streams stay equal
      if (owner == me && prefetch) dsm::prefetch(sh_mem + at, len, dsm::Mode::write);
      maybe_flap();
      for (long i = at; i < at + len; ++i) {
        if (phase_owner[i] != -1 && phase_owner[i] != owner) continue;
        phase_owner[i] = owner;
        model[i] = value;
        if (owner == me) sh_mem[i] = value;
      }
    }
    // Lock-protected additions.
    long updates = long(rng() % 20);
    for (long u = 0; u < updates; ++u) {
      int who = int(rng() % P), slot = int(rng() % slots);
      long add = long(rng() % 1000);
      if (who == me) {
        maybe_flap();
        dsm::lock_acquire(slot);
        sh_slot[slot] += add;
        dsm::lock_release(slot);
      }
      slot_model[slot] += add;
    }
    maybe_flap();
    dsm::barrier();
    // Reads only sometimes, so some pages stay invalid across phases with many notices.
    if (rng() % 2 == 0 || phase + 1 == phases) {
      for (long i = 0; i < bytes; ++i) expect(sh_mem[i] == model[i], "random bytes", i, sh_mem[i], model[i]);
      for (int s = 0; s < slots; ++s) expect(sh_slot[s] == slot_model[s], "lock slot", s, sh_slot[s], slot_model[s]);
    }
    dsm::barrier();
  }
}

}  // namespace dsm_check
