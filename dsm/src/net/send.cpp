// The send path: eager messages (inline when small), large ones as a header and a tagged
// payload, sends to self, and backing off while the provider has no room.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <sys/uio.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "net/transport_impl.hpp"
#include "net/wire.hpp"

namespace dsm::net {

namespace {
using clock_type = std::chrono::steady_clock;
constexpr auto yield_window = std::chrono::milliseconds(2);
}  // namespace

// A caller that must wait for the provider spins a little, then yields for up to
// `yield_window` (a large transfer moves in that time, and yielding costs nothing when another
// thread wants the core), then naps. The nap comes last: waking from one (about 70 µs on a
// VM) takes longer than copying a MiB.
void Transport::Impl::backoff(int& round) {
  static thread_local clock_type::time_point since;
  if (round++ == 0) since = clock_type::now();
  if (round < 50) return;
  if (round % 64 != 0 || clock_type::now() - since < yield_window) {
    sched_yield();
    return;
  }
  timespec ts{0, 20'000};
  nanosleep(&ts, nullptr);
}

// Posts one eager message (header + payload, <= eager_limit) under tx_mu.
void Transport::Impl::post_eager(int dest, std::span<const std::byte> msg) {
  if (msg.size() <= fab.inject_size)
    return post("fi_inject", [&] { return fi_inject(fab.ep.p, msg.data(), msg.size(), fab.peers[dest]); });
  int round = 0;
  int slot = -1;
  while (slot < 0) {
    {
      std::lock_guard lock(pool_mu);
      if (!free_tx.empty()) {
        slot = free_tx.back();
        free_tx.pop_back();
        break;
      }
    }
    if (round == 0) traffic.send_waits.fetch_add(1, std::memory_order_relaxed);
    progress();
    keep_receiving();
    backoff(round);
  }
  std::byte* buf = tx_pool.data() + slot * eager_limit;
  std::memcpy(buf, msg.data(), msg.size());
  post("fi_send", [&] { return fi_send(fab.ep.p, buf, msg.size(), nullptr, fab.peers[dest], &tx_ops[slot]); });
}

void Transport::Impl::send(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts,
                           std::vector<std::byte>* adopt, bool lazy) {
  if (dest < 0 || dest >= env.size)
    throw std::invalid_argument("dsm: send to rank " + std::to_string(dest) + " of " + std::to_string(env.size));
  std::size_t total = 0;
  for (auto p : parts) total += p.size();
  if (total > max_payload) throw std::invalid_argument("dsm: message larger than 4 GiB");
  if (dest == env.rank) {
    traffic.msgs_self.fetch_add(1, std::memory_order_relaxed);
    traffic.bytes_self.fetch_add(total, std::memory_order_relaxed);
    std::vector<std::byte> copy;
    if (adopt) {
      copy = std::move(*adopt);
    } else {
      copy.reserve(total);
      for (auto p : parts) copy.insert(copy.end(), p.begin(), p.end());
    }
    {
      std::lock_guard lock(self_mu);
      self_queue.emplace_back(type, std::move(copy));
    }
    if (serving != this) wake(env.rank);
    return;
  }
  told_ns[dest].store(coarse_now_ns(), std::memory_order_relaxed);
  traffic.msgs_sent.fetch_add(1, std::memory_order_relaxed);
  traffic.bytes_sent.fetch_add(total, std::memory_order_relaxed);
  sent_to[dest].msgs.fetch_add(1, std::memory_order_relaxed);
  sent_to[dest].bytes.fetch_add(total, std::memory_order_relaxed);
  Header h;
  h.type = type;
  h.src = static_cast<std::uint32_t>(env.rank);
  h.length = total;
  h.token = token;
  const bool large = header_size + total > eager_limit;
  if (large) h.flags = flag_large;
  const bool on_service = serving == this;
  Op wait_op;
  wait_op.kind = Op::tx_large_wait;
  Op* wait_for = nullptr;
  {
    // Only the number is taken under tx_mu (the receiver puts messages back in order): a
    // sender that waits for room must not hold up this rank's other thread, which may be
    // the one whose receiving makes the room (it posts the receive of a large reply).
    {
      std::lock_guard lock(tx_mu);
      h.seq = next_seq[dest]++;
    }
    if (!large) {
      std::byte msg[eager_limit];
      encode(h, std::span<std::byte, header_size>(msg, header_size));
      std::size_t at = header_size;
      for (auto p : parts) {
        if (!p.empty()) std::memcpy(msg + at, p.data(), p.size());
        at += p.size();
      }
      post_eager(dest, {msg, at});
    } else {
      std::byte head[header_size];
      encode(h, head);
      post_eager(dest, head);
      // The service thread cannot wait for its own progress: it sends a private copy.
      Op* op = &wait_op;
      std::vector<iovec> iov;
      for (auto p : parts)
        if (!p.empty()) iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
      if (on_service || iov.size() > fab.info->tx_attr->iov_limit) {
        auto owned = std::make_unique<Op>();
        owned->kind = on_service ? Op::tx_large_owned : Op::tx_large_wait;
        if (adopt && on_service) {  // a reply of megabytes: no copy, no fresh pages for one
          owned->adopted = std::move(*adopt);
          iov.assign(1, {owned->adopted.data(), total});
        } else {
          owned->owned = buffers.take(total);
          std::size_t at = 0;
          for (auto& v : iov) {
            std::memcpy(owned->owned.get() + at, v.iov_base, v.iov_len);
            at += v.iov_len;
          }
          iov.assign(1, {owned->owned.get(), total});
        }
        op = owned.get();
        std::lock_guard ol(owned_mu);
        owned_ops.emplace(op, std::move(owned));
      }
      in_flight.fetch_add(1);
      post("fi_tsendv", [&] {
        return fi_tsendv(fab.ep.p, iov.data(), nullptr, iov.size(), fab.peers[dest], large_tag(h.src, h.seq), op);
      });
      if (!on_service) wait_for = op;
    }
  }
  // Lazy: the message is in the receiver's queue before its waiting flag is read, and the
  // receiver polls after raising the flag (set_waiting), so one of the two sees the other.
  // Only lazy sends pay for the fence.
  if (!lazy || !bell_mode) {
    wake(dest);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (bells[dest].waiting.load(std::memory_order_seq_cst)) wake(dest);
  }
  if (!wait_for) return;
  // A thread that polls (set_polling) has told senders not to wake the service thread, yet
  // waiting here it dispatches nothing: the receive of a large payload that another rank
  // sends meanwhile would wait for a service thread nobody wakes, while that rank may wait
  // the same way for this one (two ranks that send each other large barrier arrivals at
  // once). The flag is down while the send waits, and the service thread woken once for
  // what came before.
  const bool was_polling =
      bell_mode ? bells[env.rank].polling.exchange(0, std::memory_order_seq_cst) != 0 : app_polling.exchange(false);
  if (was_polling) wake(env.rank);
  int round = 0;
  while (!wait_for->done.load(std::memory_order_acquire)) {
    progress();
    keep_receiving();
    backoff(round);
  }
  if (was_polling && bell_mode) bells[env.rank].polling.store(1, std::memory_order_seq_cst);
  else if (was_polling) app_polling.store(true);
  if (wait_for != &wait_op) {
    std::lock_guard ol(owned_mu);
    owned_ops.erase(wait_for);
  }
}

}  // namespace dsm::net
