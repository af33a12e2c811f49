#include "proto/barrier_codec.hpp"

#include <algorithm>
#include <string>

#include "mem/region.hpp"

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

// At most: reader, proc, idx, page, the kind, an offset.
constexpr std::size_t push_head_bytes = 4 * 4 + 1 + 2;

void put_push_head(codec::Writer& w, const Push& p) {
  w.put(p.reader);
  w.put(p.proc);
  w.put(p.idx);
  w.put(p.page);
  // 0: a diff, 1: the whole page, 2: part of it, its offset next.
  w.put<std::uint8_t>(p.part() ? 2 : p.whole);
  if (p.part()) w.put(p.offset);
}

void put_pushes(codec::Writer& w, std::span<const Push* const> pushes) {
  std::size_t bytes = sizeof(std::uint32_t);
  for (const Push* p : pushes) bytes += push_head_bytes + sizeof(std::uint32_t) + p->data.size();
  w.reserve(bytes);
  w.put<std::uint32_t>(std::uint32_t(pushes.size()));
  for (const Push* p : pushes) {
    put_push_head(w, *p);
    w.bytes(p->data);
  }
}

void put_direct(codec::Writer& w, std::span<const DirectPush> direct) {
  w.put<std::uint32_t>(std::uint32_t(direct.size()));
  for (const DirectPush& d : direct) {
    w.put(d.writer);
    w.put(d.reader);
  }
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
  if (whole == 2) p.offset = r.get<std::uint16_t>();
  p.data = r.bytes();
  const bool size_ok = whole == 2 ? !p.data.empty() && p.data.size() < mem::page_size &&
                                        std::size_t(p.offset) + p.data.size() <= mem::page_size
                                  : !p.whole || p.data.size() == mem::page_size;
  if (p.reader >= nprocs || p.proc >= nprocs || p.reader == p.proc || !reader_ok(p.reader) || p.page >= npages ||
      whole > 2 || !size_ok)
    throw codec::DecodeError("malformed page push");
  return p;
}

// The ranks member `m` of this rank's gathering stands for: itself alone, or a child's subtree.
bool stands_for(int m, int rank, const BarrierView& v) {
  return m == v.me || v.exchange ? rank == m : in_subtree(rank, m, v.fanout);
}

// Direct pushes as put_direct left them; `ok` says which this message may name.
template <class Ok>
std::vector<DirectPush> decode_direct(codec::Reader& r, std::uint32_t nprocs, Ok ok) {
  std::vector<DirectPush> out(r.count(2 * sizeof(std::uint32_t)));
  for (auto& d : out) {
    d.writer = r.get<std::uint32_t>();
    d.reader = r.get<std::uint32_t>();
    if (d.writer >= nprocs || d.reader >= nprocs || d.writer == d.reader || !ok(d))
      throw codec::DecodeError("malformed direct push in a barrier message");
  }
  return out;
}

}  // namespace

Arrival decode_arrival(std::span<const std::byte> payload, int member, const BarrierView& v) {
  const auto nprocs = v.nprocs, npages = v.npages;
  codec::Reader r(payload);
  Arrival a;
  if (r.get<std::uint64_t>() != v.epoch) throw codec::DecodeError("barrier arrival out of sequence");
  a.vt = r.array<std::uint32_t>(nprocs);
  if (a.vt.size() != nprocs) throw codec::DecodeError("barrier arrival with a bad vector time");
  a.intervals = decode_list(r, nprocs, npages);
  for (const auto& in : a.intervals)
    if (!stands_for(member, int(in.proc), v)) throw codec::DecodeError("barrier arrival carries an interval of a rank it does not gather");
  std::vector<bool> seen(nprocs);
  a.ranks.resize(r.count(16));
  for (auto& k : a.ranks) {
    k.rank = r.get<std::uint32_t>();
    k.call = r.get<std::uint64_t>();
    k.blob = r.bytes();
    if (k.rank >= nprocs || !stands_for(member, int(k.rank), v) || seen[k.rank])
      throw codec::DecodeError("barrier arrival for a rank it does not gather");
    seen[k.rank] = true;
  }
  for (std::uint32_t q = 0; q < nprocs; ++q)
    if (!seen[q] && stands_for(member, int(q), v)) throw codec::DecodeError("barrier arrival without rank " + std::to_string(q));
  a.protocol_bytes = r.get<std::uint64_t>();
  a.pushes.resize(r.count(push_min_bytes));
  for (auto& p : a.pushes) {
    p = decode_push(r, nprocs, npages, [](std::uint32_t) { return true; });
    // A push is a change of its writer's newest interval, as that interval announces it. (A
    // diff's contents are checked where it is applied.)
    auto newest = std::find_if(a.intervals.rbegin(), a.intervals.rend(), [&](const Interval& in) { return in.proc == p.proc; });
    if (!stands_for(member, int(p.proc), v) || newest == a.intervals.rend() || newest->idx != p.idx ||
        written(*newest, p.page) != p.whole)
      throw codec::DecodeError("barrier arrival with a malformed page push");
  }
  a.direct = decode_direct(r, nprocs, [&](const DirectPush& d) { return stands_for(member, int(d.writer), v); });
  r.expect_end();
  return a;
}

Departure decode_departure(std::span<const std::byte> payload, const BarrierView& v, bool only_me) {
  const auto nprocs = v.nprocs, npages = v.npages;
  codec::Reader r(payload);
  if (r.get<std::uint64_t>() != v.epoch) throw codec::DecodeError("barrier departure out of sequence");
  Departure d;
  d.intervals = decode_list(r, nprocs, npages);
  d.blobs.resize(r.count(4));
  if (d.blobs.size() != nprocs) throw codec::DecodeError("barrier departure with a bad rank count");
  for (auto& blob : d.blobs) blob = r.bytes();
  d.gc = r.get<std::uint8_t>() != 0;
  d.mismatch = r.get<std::uint8_t>() != 0;
  d.pushes.resize(r.count(push_min_bytes));
  const auto for_here = [&](std::uint32_t reader) {
    return only_me ? reader == std::uint32_t(v.me) : in_subtree(int(reader), v.me, v.fanout);
  };
  for (auto& p : d.pushes) p = decode_push(r, nprocs, npages, for_here);
  d.direct = decode_direct(r, nprocs, [&](const DirectPush& x) { return for_here(x.reader); });
  r.expect_end();
  return d;
}

std::vector<Push> decode_direct_pushes(std::span<const std::byte> payload, int writer, const BarrierView& v) {
  codec::Reader r(payload);
  if (r.get<std::uint64_t>() != v.epoch) throw codec::DecodeError("direct push out of sequence");
  std::vector<Push> out(r.count(push_min_bytes));
  for (auto& p : out) {
    p = decode_push(r, v.nprocs, v.npages, [&](std::uint32_t reader) { return reader == std::uint32_t(v.me); });
    // Whether the push is a change the departure announced is the merge's to check: it
    // applies only pushes that match a notice the page lacks.
    if (p.proc != std::uint32_t(writer)) throw codec::DecodeError("direct push of another rank's change");
  }
  r.expect_end();
  return out;
}

}  // namespace dsm::proto
