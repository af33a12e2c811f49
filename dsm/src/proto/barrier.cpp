#include "proto/barrier.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "mem/region.hpp"
#include "proto/dispatch.hpp"
#include "proto/inbox.hpp"
#include "proto/state.hpp"
#include "proto/sync.hpp"

namespace dsm::proto {

int barrier_parent(int rank, int fanout) { return rank == 0 ? -1 : (rank - 1) / fanout; }

std::vector<int> barrier_children(int rank, int nprocs, int fanout) {
  std::vector<int> out;
  for (long c = long(rank) * fanout + 1; c <= long(rank) * fanout + fanout && c < nprocs; ++c) out.push_back(int(c));
  return out;
}

bool in_subtree(int rank, int root, int fanout) {
  while (rank > root) rank = barrier_parent(rank, fanout);
  return rank == root;
}

int barrier_hub() {
  const auto& s = state();
  return s.sync.barrier.members.size() > 1 || s.me == 0 ? s.me : barrier_parent(s.me, s.sync.barrier.fanout);
}

void put_push_head(codec::Writer& w, const Push& p) {
  w.put(p.reader);
  w.put(p.proc);
  w.put(p.idx);
  w.put(p.page);
  w.put<std::uint8_t>(p.whole);
}

namespace {

constexpr std::size_t push_min_bytes = 4 * 4 + 1 + 4;

// A push as put_push_head and its bytes left it; `reader_ok` says whom this message may
// carry pushes for.
template <class ReaderOk>
Push decode_push(codec::Reader& r, std::uint32_t nprocs, std::uint32_t npages, ReaderOk reader_ok) {
  Push p;
  p.reader = r.get<std::uint32_t>();
  p.proc = r.get<std::uint32_t>();
  p.idx = r.get<std::uint32_t>();
  p.page = r.get<std::uint32_t>();
  const auto whole = r.get<std::uint8_t>();
  p.whole = whole != 0;
  p.data = r.bytes();
  if (p.reader >= nprocs || p.proc >= nprocs || p.reader == p.proc || !reader_ok(p.reader) || p.page >= npages ||
      whole > 1 || (p.whole && p.data.size() != mem::page_size))
    throw codec::DecodeError("malformed page push");
  return p;
}

// Pushes whose reader lies in the subtree of `root` (only `root` itself where exact).
std::vector<const Push*> pushes_for(const std::vector<const Push*>& all, int root, bool exact) {
  std::vector<const Push*> out;
  const int fanout = state().sync.barrier.fanout;
  for (const Push* p : all)
    if (exact ? p->reader == std::uint32_t(root) : in_subtree(int(p->reader), root, fanout)) out.push_back(p);
  return out;
}

void put_pushes(codec::Writer& w, std::span<const Push* const> pushes) {
  w.put<std::uint32_t>(std::uint32_t(pushes.size()));
  for (const Push* p : pushes) {
    put_push_head(w, *p);
    w.bytes(p->data);
  }
}

// The ranks member `m` of this rank's gathering stands for: itself alone, or a child's subtree.
bool stands_for(int m, int rank) {
  const auto& s = state();
  return m == s.me ? rank == s.me : in_subtree(rank, m, s.sync.barrier.fanout);
}

Arrival decode_arrival(std::span<const std::byte> payload, int member) {
  auto& s = state();
  const auto nprocs = std::uint32_t(s.nprocs);
  const auto npages = s.heap.allocated.load();
  codec::Reader r(payload);
  Arrival a;
  if (r.get<std::uint64_t>() != s.sync.barrier.epoch) throw codec::DecodeError("barrier arrival out of sequence");
  a.vt = r.array<std::uint32_t>(nprocs);
  if (a.vt.size() != nprocs) throw codec::DecodeError("barrier arrival with a bad vector time");
  a.intervals = decode_list(r, nprocs, npages);
  for (const auto& in : a.intervals)
    if (!stands_for(member, int(in.proc))) throw codec::DecodeError("barrier arrival carries an interval of a rank it does not gather");
  std::vector<bool> seen(nprocs);
  a.ranks.resize(r.count(16));
  for (auto& k : a.ranks) {
    k.rank = r.get<std::uint32_t>();
    k.call = r.get<std::uint64_t>();
    k.blob = r.bytes();
    if (k.rank >= nprocs || !stands_for(member, int(k.rank)) || seen[k.rank])
      throw codec::DecodeError("barrier arrival for a rank it does not gather");
    seen[k.rank] = true;
  }
  for (std::uint32_t q = 0; q < nprocs; ++q)
    if (!seen[q] && stands_for(member, int(q))) throw codec::DecodeError("barrier arrival without rank " + std::to_string(q));
  a.protocol_bytes = r.get<std::uint64_t>();
  a.pushes.resize(r.count(push_min_bytes));
  for (auto& p : a.pushes) {
    p = decode_push(r, nprocs, npages, [](std::uint32_t) { return true; });
    // A push is a change of its writer's newest interval, as that interval announces it. (A
    // diff's contents are checked where it is applied.)
    auto newest = std::find_if(a.intervals.rbegin(), a.intervals.rend(), [&](const Interval& in) { return in.proc == p.proc; });
    if (!stands_for(member, int(p.proc)) || newest == a.intervals.rend() || newest->idx != p.idx ||
        written(*newest, p.page) != p.whole)
      throw codec::DecodeError("barrier arrival with a malformed page push");
  }
  r.expect_end();
  return a;
}

struct Outgoing {
  std::vector<const Interval*> intervals;
  std::vector<std::span<const std::byte>> blobs;  // by rank
  bool gc = false, mismatch = false;
  std::vector<const Push*> pushes;
};

// To each member of this rank's gathering, children first, what its subtree lacks.
void send_departures(const Outgoing& out) {
  auto& s = state();
  auto& b = s.sync.barrier;
  for (std::size_t k = b.members.size(); k-- > 0;) {
    const std::size_t i = (k + 1) % b.members.size();  // this rank's own last: it arrives at once
    const int to = b.members[i];
    const auto& vt = b.arrivals[i].vt;
    codec::Writer w;
    w.put(b.epoch);
    // A child has its subtree's intervals: it gathered them.
    std::vector<const Interval*> missing;
    for (const Interval* in : out.intervals)
      if (in->idx >= vt[in->proc] && (to == s.me || !in_subtree(int(in->proc), to, b.fanout))) missing.push_back(in);
    encode_list(w, missing);
    w.put<std::uint32_t>(std::uint32_t(out.blobs.size()));
    for (auto blob : out.blobs) w.bytes(blob);
    w.put<std::uint8_t>(out.gc);
    w.put<std::uint8_t>(out.mismatch);
    put_pushes(w, pushes_for(out.pushes, to, to == s.me));
    s.net->send(to, barrier_depart, w.buffer());
  }
  ++b.epoch;
  b.arrived = 0;
  for (auto& a : b.arrivals) a = Arrival{};
}

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

// Every member arrived: the root decides the departures, another rank gathers for its parent.
void gathered() {
  auto& s = state();
  auto& b = s.sync.barrier;
  Outgoing out;
  std::uint64_t protocol_bytes = 0;
  std::vector<const Push*> all_pushes;
  std::vector<std::uint64_t> calls(s.nprocs);
  out.blobs.resize(s.nprocs);
  VectorTime oldest = b.arrivals[0].vt;
  for (const auto& a : b.arrivals) {
    for (const auto& in : a.intervals) out.intervals.push_back(&in);
    for (const auto& k : a.ranks) {
      out.blobs[k.rank] = k.blob;
      calls[k.rank] = k.call;
    }
    for (const auto& p : a.pushes) all_pushes.push_back(&p);
    protocol_bytes = std::max(protocol_bytes, a.protocol_bytes);
    for (std::size_t q = 0; q < oldest.size(); ++q) oldest[q] = std::min(oldest[q], a.vt[q]);
  }
  if (s.me == 0) {
    out.mismatch = std::any_of(calls.begin(), calls.end(), [&](std::uint64_t c) { return c != calls[0]; });
    if (out.mismatch) report_mismatch(calls);
    out.gc = protocol_bytes > s.gc.bound;
    out.pushes = std::move(all_pushes);
    send_departures(out);
    return;
  }
  // Up to the parent: pushes to ranks outside this subtree travel on, the others wait here
  // for the departure.
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
  std::vector<const Push*> up;
  for (const Push* p : all_pushes)
    if (!in_subtree(int(p->reader), s.me, b.fanout)) up.push_back(p);
  put_pushes(w, up);
  s.net->send_lazy(barrier_parent(s.me, b.fanout), barrier_arrive, w.buffer());
}

}  // namespace

void on_barrier_arrive(int src, std::span<const std::byte> payload) {
  auto& s = state();
  auto& b = s.sync.barrier;
  const auto m = std::find(b.members.begin(), b.members.end(), src);
  if (m == b.members.end() || (b.members.size() == 1 && s.me != 0))
    throw codec::DecodeError("barrier arrival at a rank that does not gather for its sender");
  auto& a = b.arrivals[std::size_t(m - b.members.begin())];
  if (a.in) throw codec::DecodeError("second barrier arrival from one rank");
  // What the pushes and figures point into lives on until the departures are sent: the
  // root sends them inside the last arrival's call, another rank when its parent answers.
  const bool last = b.arrived + 1 == int(b.members.size());
  std::span<const std::byte> kept = payload;
  std::vector<std::byte> message;
  if (!last || s.me != 0) {
    message.assign(payload.begin(), payload.end());
    kept = message;
  }
  a = decode_arrival(kept, src);
  a.message = std::move(message);  // a vector's move keeps its buffer: the spans stay valid
  a.in = true;
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
  const Departure d = decode_departure(payload, b.epoch, false);
  Outgoing out;
  for (const auto& in : d.intervals) {
    if (in_subtree(int(in.proc), s.me, b.fanout)) throw codec::DecodeError("barrier departure brings an interval gathered here");
    out.intervals.push_back(&in);
  }
  for (const auto& a : b.arrivals)
    for (const auto& in : a.intervals) out.intervals.push_back(&in);
  out.blobs.assign(d.blobs.begin(), d.blobs.end());
  out.gc = d.gc;
  out.mismatch = d.mismatch;
  for (const auto& p : d.pushes) out.pushes.push_back(&p);
  for (const auto& a : b.arrivals)
    for (const auto& p : a.pushes)
      if (in_subtree(int(p.reader), s.me, b.fanout)) out.pushes.push_back(&p);
  send_departures(out);
}

Departure decode_departure(std::span<const std::byte> payload, std::uint64_t epoch, bool only_me) {
  auto& s = state();
  const auto nprocs = std::uint32_t(s.nprocs);
  const auto npages = s.heap.allocated.load();
  codec::Reader r(payload);
  if (r.get<std::uint64_t>() != epoch) throw codec::DecodeError("barrier departure out of sequence");
  Departure d;
  d.intervals = decode_list(r, nprocs, npages);
  d.blobs.resize(r.count(4));
  if (d.blobs.size() != nprocs) throw codec::DecodeError("barrier departure with a bad rank count");
  for (auto& blob : d.blobs) blob = r.bytes();
  d.gc = r.get<std::uint8_t>() != 0;
  d.mismatch = r.get<std::uint8_t>() != 0;
  d.pushes.resize(r.count(push_min_bytes));
  for (auto& p : d.pushes)
    p = decode_push(r, nprocs, npages, [&](std::uint32_t reader) {
      return only_me ? reader == std::uint32_t(s.me) : in_subtree(int(reader), s.me, s.sync.barrier.fanout);
    });
  r.expect_end();
  return d;
}

}  // namespace dsm::proto
