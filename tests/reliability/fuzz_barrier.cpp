// libFuzzer target for the decoders of the barrier's messages (dsm/src/proto/barrier_codec.cpp):
// arrivals gathered up the barrier tree and departures passed down it come from the network.
// A malformed message must throw codec::DecodeError, never read out of bounds or allocate
// without bound, and what decodes must keep the promises the barrier relies on: intervals,
// ranks and pushes only of the ranks the sender stands for, each such rank once, pushes to
// readers the receiver serves, each a change of its writer's newest interval in the message;
// direct pushes (barrier_push) only to the receiver and of their writer's changes, and the
// arrivals and departures naming them only for writers and readers they may name.
//
// Input: byte 0 = job size - 1 (1..64 ranks), byte 1 = fan-out - 1 (1..4) and, above, whether
// two ranks exchange arrivals (barrier.hpp), byte 2 = the
// receiving rank, byte 3 = which decoder and sender (and the writer of a direct push), bytes 4-5 = allocated pages, the rest =
// the message (its epoch is whatever it says: the receiver's is taken from it, then checked).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "mem/region.hpp"
#include "proto/barrier_codec.hpp"

using namespace dsm;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_push(const proto::Push& p, const proto::BarrierView& v) {
  check(p.reader < v.nprocs && p.proc < v.nprocs && p.reader != p.proc && p.page < v.npages);
  check(!p.whole || p.data.size() == mem::page_size ||
        (p.part() && !p.data.empty() && p.offset + p.data.size() <= mem::page_size));
}

void check_arrival(const proto::Arrival& a, int member, const proto::BarrierView& v) {
  auto stands_for = [&](std::uint32_t r) {
    return member == v.me || v.exchange ? r == std::uint32_t(member) : proto::in_subtree(int(r), member, v.fanout);
  };
  check(a.vt.size() == v.nprocs);
  for (const auto& in : a.intervals) check(in.proc < v.nprocs && stands_for(in.proc) && in.vt.size() == v.nprocs);
  std::vector<int> seen(v.nprocs);
  for (const auto& k : a.ranks) {
    check(k.rank < v.nprocs && stands_for(k.rank));
    check(++seen[k.rank] == 1);
  }
  for (std::uint32_t q = 0; q < v.nprocs; ++q) check(seen[q] == int(stands_for(q)));
  for (const auto& p : a.pushes) {
    check_push(p, v);
    check(stands_for(p.proc));
  }
  for (const auto& d : a.direct) check(d.writer < v.nprocs && d.reader < v.nprocs && d.writer != d.reader && stands_for(d.writer));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 14) return 0;
  proto::BarrierView v{};
  v.nprocs = 1 + data[0] % 64;
  v.fanout = 1 + data[1] % 4;
  v.exchange = v.nprocs == 2 && data[1] / 4 % 2 == 1;
  v.me = data[2] % int(v.nprocs);
  const int which = data[3] % 4;
  v.npages = std::uint32_t(data[4]) | std::uint32_t(data[5]) << 8;
  std::memcpy(&v.epoch, data + 6, sizeof v.epoch);  // the message's own epoch, so most pass that check
  const std::span<const std::byte> msg(reinterpret_cast<const std::byte*>(data + 6), size - 6);
  try {
    if (which == 3) {
      const int writer = data[3] / 4 % int(v.nprocs);
      for (const auto& p : proto::decode_direct_pushes(msg, writer, v)) {
        check_push(p, v);
        check(p.reader == std::uint32_t(v.me) && p.proc == std::uint32_t(writer));
      }
    } else if (which == 2) {
      for (bool only_me : {true, false}) {
        const auto d = proto::decode_departure(msg, v, only_me);
        check(d.blobs.size() == v.nprocs);
        auto for_here = [&](std::uint32_t reader) {
          return only_me ? reader == std::uint32_t(v.me) : proto::in_subtree(int(reader), v.me, v.fanout);
        };
        for (const auto& p : d.pushes) {
          check_push(p, v);
          check(for_here(p.reader));
        }
        for (const auto& x : d.direct) check(x.writer < v.nprocs && x.writer != x.reader && for_here(x.reader));
      }
    } else {
      // From this rank itself, or from its first child (if it has one), or under exchange
      // from the other rank.
      const auto children = proto::barrier_children(v.me, int(v.nprocs), v.fanout);
      const int member = which == 0 ? v.me : v.exchange ? 1 - v.me : children.empty() ? v.me : children.front();
      check_arrival(proto::decode_arrival(msg, member, v), member, v);
    }
  } catch (const proto::codec::DecodeError&) {
  }
  return 0;
}
