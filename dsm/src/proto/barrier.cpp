#include "proto/barrier.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "proto/dispatch.hpp"
#include "proto/inbox.hpp"
#include "proto/state.hpp"
#include "proto/sync.hpp"

namespace dsm::proto {

BarrierView barrier_view(std::uint64_t epoch) {
  const auto& s = state();
  return {std::uint32_t(s.nprocs), s.heap.allocated.load(), s.me, s.sync.barrier.fanout, epoch, s.sync.barrier.exchange};
}

int barrier_hub() {
  const auto& s = state();
  const auto& b = s.sync.barrier;
  if (b.exchange) return 1 - s.me;
  return b.members.size() > 1 || s.me == 0 ? s.me : barrier_parent(s.me, b.fanout);
}

namespace {

void report_mismatch(const std::vector<std::uint64_t>& calls) {
  std::string names;
  for (std::size_t p = 0; p < calls.size(); ++p) {
    const std::uint64_t call = calls[p];
    names += " rank " + std::to_string(p) + ": " +
             (call == 0 ? "dsm::barrier" : call == finalize_call ? "dsm::finalize" : "dsm::alloc of " + std::to_string(call) + " bytes") +
             (p + 1 < calls.size() ? "," : "\n");
  }
  std::fprintf(stderr,
               "dsm: ranks reached different collective calls (dsm::alloc with different sizes, or "
               "dsm::barrier, dsm::alloc and dsm::finalize in a different order):%s",
               names.c_str());
}

}  // namespace

Departure exchanged_departure(std::span<const std::byte> payload, const BarrierView& v, const Arrived& mine) {
  const int other = 1 - v.me;
  Arrival a = decode_arrival(payload, other, v);
  Departure d;
  for (Interval& in : a.intervals)
    if (in.idx >= mine.vt[in.proc]) d.intervals.push_back(std::move(in));
  d.blobs.resize(2);
  d.blobs[std::size_t(other)] = a.ranks.front().blob;
  d.gc = std::max(a.protocol_bytes, mine.protocol_bytes) > state().gc.bound;
  d.mismatch = a.ranks.front().call != mine.call;
  // Named on both ranks: the first to stop brings the job down, maybe before the other prints.
  if (d.mismatch) report_mismatch(v.me == 0 ? std::vector{mine.call, a.ranks.front().call} : std::vector{a.ranks.front().call, mine.call});
  d.pushes = std::move(a.pushes);
  d.direct = std::move(a.direct);
  return d;
}

namespace {

// Whether what goes to `reader` goes to the subtree of `root` (only `root` itself where exact).
bool goes_to(std::uint32_t reader, int root, bool exact) {
  return exact ? reader == std::uint32_t(root) : in_subtree(int(reader), root, state().sync.barrier.fanout);
}

std::uint32_t reader_of(const Push* p) { return p->reader; }
std::uint32_t reader_of(const DirectPush& d) { return d.reader; }

// The pushes, or the direct pushes, to readers in the subtree of `root` (see goes_to), or
// with `inside` false to readers beyond it.
template <class T>
std::vector<T> for_subtree(const std::vector<T>& all, int root, bool exact, bool inside = true) {
  std::vector<T> out;
  for (const T& x : all)
    if (goes_to(reader_of(x), root, exact) == inside) out.push_back(x);
  return out;
}

struct Outgoing {
  std::vector<const Interval*> intervals;
  std::vector<std::span<const std::byte>> blobs;  // by rank
  bool gc = false, mismatch = false;
  std::vector<const Push*> pushes;
  std::vector<DirectPush> direct;
};

// A handler's payload, kept: a large message's buffer or the rank's own message as they
// came (a buffer's move keeps its bytes where they are, so spans into it stay valid), a small
// one copied, and `payload` then pointed at the copy.
net::Payload keep_payload(std::span<const std::byte>& payload) {
  net::Payload kept = state().net->take_payload();
  if (!kept) {
    kept.own.assign(payload.begin(), payload.end());
    payload = kept.own;
  }
  return kept;
}

// To each member of this rank's gathering, children first, what its subtree lacks; the
// pushes to this rank itself are handed over with `parent` (the departure they came in, on a
// rank that is not the root) and the arrivals they point into.
void send_departures(const Outgoing& out, net::Payload parent = {}) {
  auto& s = state();
  auto& b = s.sync.barrier;
  for (std::size_t k = 1; k <= b.members.size(); ++k) {
    const std::size_t i = k % b.members.size();  // this rank's own last: it arrives at once
    const int to = b.members[i];
    const auto& vt = b.arrivals[i].vt;
    codec::Writer w;
    w.put(b.epoch);
    // A child has its subtree's intervals: it gathered them.
    std::vector<const Interval*> missing;
    for (const Interval* in : out.intervals)
      if (in->idx >= vt[in->proc] && (to == s.me || !in_subtree(int(in->proc), to, b.fanout))) missing.push_back(in);
    encode_list(w, missing);
    // Nor the figures of its subtree's ranks: they came up through it (to this rank itself,
    // its own: its application thread kept what it sent).
    w.put<std::uint32_t>(std::uint32_t(out.blobs.size()));
    for (std::size_t p = 0; p < out.blobs.size(); ++p)
      w.bytes(int(p) == to || (to != s.me && in_subtree(int(p), to, b.fanout)) ? std::span<const std::byte>{} : out.blobs[p]);
    w.put<std::uint8_t>(out.gc);
    w.put<std::uint8_t>(out.mismatch);
    if (to == s.me) {
      put_pushes(w, {});
      b.pushes_here.clear();
      for (const Push* p : for_subtree(out.pushes, to, true)) b.pushes_here.push_back(*p);
      b.pushes_kept = std::move(b.kept);
      b.pushes_kept.push_back(std::move(parent));
      b.kept = std::vector<net::Payload>(b.members.size());
    } else {
      put_pushes(w, for_subtree(out.pushes, to, false));
    }
    put_direct(w, for_subtree(out.direct, to, to == s.me));
    s.net->send_owned(to, barrier_depart, w.take());  // to itself, or from a handler: no copy
  }
  ++b.epoch;
  b.arrived = 0;
  for (auto& a : b.arrivals) a = Arrival{};
}

// Every member arrived: the root decides the departures, another rank gathers for its parent.
void gathered() {
  auto& s = state();
  auto& b = s.sync.barrier;
  Outgoing out;
  std::uint64_t protocol_bytes = 0;
  std::vector<const Push*> all_pushes;
  std::vector<DirectPush> all_direct;
  for (const auto& a : b.arrivals) {
    for (const auto& in : a.intervals) out.intervals.push_back(&in);
    for (const auto& p : a.pushes) all_pushes.push_back(&p);
    all_direct.insert(all_direct.end(), a.direct.begin(), a.direct.end());
    protocol_bytes = std::max(protocol_bytes, a.protocol_bytes);
  }
  if (s.me == 0) {
    std::vector<std::uint64_t> calls(s.nprocs);
    out.blobs.resize(s.nprocs);
    for (const auto& a : b.arrivals)
      for (const auto& k : a.ranks) {
        out.blobs[k.rank] = k.blob;
        calls[k.rank] = k.call;
      }
    out.mismatch = std::any_of(calls.begin(), calls.end(), [&](std::uint64_t c) { return c != calls[0]; });
    if (out.mismatch) report_mismatch(calls);
    out.gc = protocol_bytes > s.gc.bound;
    out.pushes = std::move(all_pushes);
    out.direct = std::move(all_direct);
    send_departures(out);
    return;
  }
  // Up to the parent: pushes to ranks outside this subtree travel on, the others wait here
  // for the departure.
  VectorTime oldest = b.arrivals[0].vt;
  for (const auto& a : b.arrivals)
    for (std::size_t q = 0; q < oldest.size(); ++q) oldest[q] = std::min(oldest[q], a.vt[q]);
  codec::Writer w;
  w.put(b.epoch);
  w.array<std::uint32_t>(oldest);
  encode_list(w, out.intervals);
  std::uint32_t n = 0;
  for (const auto& a : b.arrivals) n += std::uint32_t(a.ranks.size());
  w.put(n);
  for (const auto& a : b.arrivals)
    for (const auto& k : a.ranks) {
      w.put(k.rank);
      w.put(k.call);
      w.bytes(k.blob);
    }
  w.put(protocol_bytes);
  put_pushes(w, for_subtree(all_pushes, s.me, false, false));
  put_direct(w, for_subtree(all_direct, s.me, false, false));
  s.net->send_lazy(barrier_parent(s.me, b.fanout), barrier_arrive, w.take());
}

}  // namespace

void on_barrier_arrive(int src, std::span<const std::byte> payload) {
  auto& s = state();
  auto& b = s.sync.barrier;
  if (b.exchange) {
    if (src != 1 - s.me) throw codec::DecodeError("barrier arrival at a rank that does not gather for its sender");
    post_queued(src, barrier_arrive, payload);
    return;
  }
  const auto m = std::find(b.members.begin(), b.members.end(), src);
  if (m == b.members.end() || (b.members.size() == 1 && s.me != 0))
    throw codec::DecodeError("barrier arrival at a rank that does not gather for its sender");
  auto& a = b.arrivals[std::size_t(m - b.members.begin())];
  if (a.in) throw codec::DecodeError("second barrier arrival from one rank");
  // What the pushes and figures point into lives on until the departures are sent (the
  // root sends them inside the last arrival's call, another rank when its parent answers),
  // and the pushes to this rank until its application thread merged them.
  net::Payload kept = keep_payload(payload);
  a = decode_arrival(payload, src, barrier_view(b.epoch));
  a.in = true;
  b.kept[std::size_t(m - b.members.begin())] = std::move(kept);
  if (++b.arrived == int(b.members.size())) gathered();
}

void on_barrier_depart(int src, std::span<const std::byte> payload) {
  auto& s = state();
  auto& b = s.sync.barrier;
  if (src == s.me || b.members.size() == 1) {
    post_inbox(src, barrier_depart, payload);
    return;
  }
  // From the parent, for this subtree: passed on with the pushes gathered here.
  if (src != barrier_parent(s.me, b.fanout) || b.arrived != int(b.members.size()))
    throw codec::DecodeError("barrier departure from a rank that does not gather for this one");
  net::Payload kept = keep_payload(payload);
  const Departure d = decode_departure(payload, barrier_view(b.epoch), false);
  Outgoing out;
  for (const auto& in : d.intervals) {
    if (in_subtree(int(in.proc), s.me, b.fanout)) throw codec::DecodeError("barrier departure brings an interval gathered here");
    out.intervals.push_back(&in);
  }
  for (const auto& a : b.arrivals)
    for (const auto& in : a.intervals) out.intervals.push_back(&in);
  out.blobs.assign(d.blobs.begin(), d.blobs.end());
  for (const auto& a : b.arrivals)
    for (const auto& k : a.ranks) out.blobs[k.rank] = k.blob;
  out.gc = d.gc;
  out.mismatch = d.mismatch;
  for (const auto& p : d.pushes) out.pushes.push_back(&p);
  out.direct = d.direct;
  for (const auto& a : b.arrivals) {
    for (const auto& p : a.pushes)
      if (goes_to(p.reader, s.me, false)) out.pushes.push_back(&p);
    const auto here = for_subtree(a.direct, s.me, false);
    out.direct.insert(out.direct.end(), here.begin(), here.end());
  }
  send_departures(out, std::move(kept));
}

}  // namespace dsm::proto
