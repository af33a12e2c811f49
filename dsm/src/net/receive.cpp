// The receive path: posted receive buffers, taking in what completed (checked, put back in
// order per source), and dispatch to the handler.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "net/transport_impl.hpp"
#include "net/wire.hpp"

namespace dsm::net {

void Transport::Impl::post_rx(int i) {
  post("fi_recv", [&] {
    return fi_recv(fab.ep.p, rx_pool.data() + i * eager_limit, eager_limit, nullptr, FI_ADDR_UNSPEC, &rx_ops[i]);
  });
}

// A thread that waits for room to send keeps this rank receiving, so that a peer whose
// sends to us wait for our receive buffers (or, for a large message, for the receive we post
// when its header is taken in) can make the room ours wait for; otherwise two ranks that
// send to each other at once (replies to each other's requests) would wait for ever. The
// dispatching thread takes the waiting messages in (their order restored, large receives
// posted) and delivers them once the handler it is in returns; another thread copies them
// out of their buffers for the dispatching thread. Either way the buffers are posted again.
void Transport::Impl::keep_receiving() {
  static thread_local bool inside = false;  // posting a receive may wait, and come back here
  if (inside) return;
  inside = true;
  // Called in a loop while a send waits: an empty deque takes an allocation.
  std::optional<std::deque<Completion>> taken;
  std::vector<int> repost;
  {
    std::lock_guard lock(ready_mu);
    if (serving == this) {
      if (!ready.empty()) taken.emplace().swap(ready);
    } else {
      for (Completion& c : ready) {
        if (c.copied || c.error || c.op->kind != Op::rx_eager) continue;
        const std::byte* at = rx_pool.data() + c.op->index * eager_limit;
        c.copy.assign(at, at + c.len);
        c.copied = true;
        repost.push_back(c.op->index);
      }
    }
  }
  for (int i : repost) post_rx(i);
  if (taken) {
    for (const Completion& c : *taken) take_in(c, false);
    held_back = true;  // only the dispatching thread takes any in
  }
  inside = false;
}

bool Transport::Impl::drain_ready() {
  bool any = false;
  for (;;) {
    Completion c;
    bool got = false;
    {
      std::lock_guard lock(ready_mu);
      if (!ready.empty()) {
        c = std::move(ready.front());
        ready.pop_front();
        got = true;
      }
    }
    if (!got) {
      if (!held_back) return any;
      held_back = false;  // what a waiting send took in (keep_receiving)
      for (std::uint32_t src = 0; src < sources.size(); ++src) deliver_in_order(src);
      any = true;
      continue;
    }
    any = true;
    take_in(c, true);
  }
}

// One completion of `ready`, by the dispatching thread: an eager message (whose buffer is
// posted again) or the payload of a large one; `deliver`: dispatch what is now in order.
void Transport::Impl::take_in(const Completion& c, bool deliver) {
  if (c.copied) {
    on_eager(c.copy, deliver);
  } else if (c.op->kind == Op::rx_eager) {
    if (c.error) reject("receive error");
    else on_eager({rx_pool.data() + c.op->index * eager_limit, c.len}, deliver);
    post_rx(c.op->index);
  } else {
    in_flight.fetch_sub(1);
    on_large_done(*c.op, c.error ? SIZE_MAX : c.len, deliver);
  }
}

bool Transport::Impl::drain_self() {
  bool any = false;
  for (;;) {
    std::pair<std::uint16_t, std::vector<std::byte>> m;
    {
      std::lock_guard lock(self_mu);
      if (self_queue.empty()) break;
      m = std::move(self_queue.front());
      self_queue.pop_front();
    }
    any = true;
    dispatch(env.rank, m.first, m.second, nullptr, &m.second);
  }
  // What a handler's waiting send took in is delivered now, not at the next message.
  if (held_back) drain_ready();
  return any;
}

void Transport::Impl::reject(const std::string& why) {
  traffic.rejected_msgs.fetch_add(1);
  std::fprintf(stderr, "dsm: rank %d dropped a message: %s\n", env.rank, why.c_str());
}

void Transport::Impl::on_eager(std::span<const std::byte> msg, bool deliver) {
  const Decoded d = decode(msg, token, static_cast<std::uint32_t>(env.size));
  if (d.error != WireError::none) return reject(std::string(to_string(d.error)));
  const Header& h = d.header;
  heard_ns[h.src].store(coarse_now_ns(), std::memory_order_relaxed);
  if (h.type == heartbeat_type) return;
  Reorder& s = sources[h.src];
  if (const std::string why = s.refuse(h.seq, h.length); !why.empty())
    return reject(why + " (from rank " + std::to_string(h.src) + ", seq " + std::to_string(h.seq) + ")");
  const auto payload = msg.subspan(header_size);
  if (!(h.flags & flag_large)) {
    if (deliver && s.due_alone(h.seq)) {
      s.pass();
      return dispatch(static_cast<int>(h.src), h.type, payload);
    }
    s.hold(h.seq, {h.type, {payload.begin(), payload.end()}, nullptr});
    if (deliver) deliver_in_order(h.src);
    return;
  }
  auto large = std::make_unique<Op>();
  Op& op = *large;
  op.kind = Op::rx_large;
  op.src = h.src;
  op.seq = h.seq;
  op.len = h.length;
  op.owned = buffers.take(h.length);
  // Held before the receive is posted: posting makes progress while the provider is out of
  // room, which takes in more messages, and a second header with this sequence number must
  // then find it taken, not replace (and free) the op the receive writes into.
  s.hold(h.seq, {h.type, {}, std::move(large)});
  in_flight.fetch_add(1);
  post("fi_trecv", [&] {
    return fi_trecv(fab.ep.p, op.owned.get(), h.length, nullptr, FI_ADDR_UNSPEC, large_tag(h.src, h.seq), 0, &op);
  });
}

void Transport::Impl::on_large_done(Op& op, std::size_t len, bool deliver) {
  if (!sources[op.src].holds(op.seq)) return;
  if (len != op.len) {
    // The payload never arrived whole: it is dropped when its turn comes, so the messages
    // after it from the same source still go out in order. (`op` lives in its held message.)
    reject("large payload of " + std::to_string(op.len) + " bytes arrived as " +
           std::to_string(len == SIZE_MAX ? 0 : len) + " (from rank " + std::to_string(op.src) + ")");
    op.failed = true;
  }
  op.done.store(true);
  if (deliver) deliver_in_order(op.src);
}

void Transport::Impl::deliver_in_order(std::uint32_t src) {
  while (auto m = sources[src].take()) {
    if (m->large && m->large->failed) continue;
    if (m->large) {
      dispatch(static_cast<int>(src), m->type, {m->large->owned.get(), m->large->len}, &m->large->owned);
    } else {
      dispatch(static_cast<int>(src), m->type, m->eager);
    }
  }
}

void Transport::Impl::dispatch(int src, std::uint16_t type, std::span<const std::byte> payload, Buffer* large,
                               std::vector<std::byte>* own) {
  if (src != env.rank) {  // a message to self was counted once, as such, when sent
    traffic.msgs_received.fetch_add(1, std::memory_order_relaxed);
    traffic.bytes_received.fetch_add(payload.size(), std::memory_order_relaxed);
  }
  // A handler may dispatch others (a send that waits for room receives meanwhile): each
  // hands over its own payload alone.
  struct Handing {
    Buffer* large;
    std::vector<std::byte>* own;
    ~Handing() { handed = large, handed_own = own; }
  } const outer{handed, handed_own};
  handed = large, handed_own = own;
  handler(src, type, payload);
}

}  // namespace dsm::net
