// Liveness: heartbeats on quiet links and the watch for peers gone silent. A crashed rank
// is seen at once (its process exits; dsmrun, or a closed connection, says so); a host
// that loses power or its link, or a rank stopped for good, sends nothing at all, and
// without this its peers would wait for it forever.
#include <rdma/fi_endpoint.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "net/transport_impl.hpp"
#include "net/wire.hpp"

namespace dsm::net {

std::int64_t coarse_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A header alone, sent only if the provider takes it now: waiting for room would tie the
// watch to the link it watches. It takes no sequence number, so one not sent leaves no gap.
bool Transport::Impl::heartbeat(int dest) {
  Header h;
  h.type = heartbeat_type;
  h.src = static_cast<std::uint32_t>(env.rank);
  h.token = token;
  std::byte msg[header_size];
  encode(h, msg);
  ssize_t rc;
  {
    std::lock_guard lock(fab_mu);
    rc = fi_inject(fab.ep.p, msg, sizeof msg, fab.peers[dest]);
  }
  if (rc != 0) return false;
  told_ns[dest].store(coarse_now_ns(), std::memory_order_relaxed);
  wake(dest);
  return true;
}

void Transport::Impl::watch(double bound_s, const std::function<void(int, double)>& silent) {
  const auto bound = std::int64_t(bound_s * 1e9);
  // A quarter of the bound between heartbeats: three can be lost or late before a peer is
  // taken for gone. Looked at eight times per bound, at most once a second.
  const std::int64_t every = bound / 4;
  const auto tick = std::chrono::nanoseconds(std::clamp<std::int64_t>(bound / 8, 10'000'000, 1'000'000'000));
  {
    const std::int64_t now = coarse_now_ns();
    for (int r = 0; r < env.size; ++r) heard_ns[r].store(std::max(heard_ns[r].load(), now - every));
  }
  watcher = std::thread([this, bound, every, tick, silent] {
    std::unique_lock lk(watch_mu);
    while (!watch_cv.wait_for(lk, tick, [&] { return watch_stop; })) {
      const std::int64_t now = coarse_now_ns();
      for (int r = 0; r < env.size; ++r) {
        if (r == env.rank) continue;
        if (now - told_ns[r].load(std::memory_order_relaxed) >= every) heartbeat(r);
        const std::int64_t quiet = now - heard_ns[r].load(std::memory_order_relaxed);
        if (quiet >= bound) {
          lk.unlock();
          silent(r, double(quiet) * 1e-9);  // ends the rank
          return;
        }
      }
    }
  });
}

void Transport::Impl::end_watch() {
  {
    std::lock_guard lk(watch_mu);
    watch_stop = true;
  }
  watch_cv.notify_all();
  if (watcher.joinable() && watcher.get_id() != std::this_thread::get_id()) watcher.join();
}

}  // namespace dsm::net
