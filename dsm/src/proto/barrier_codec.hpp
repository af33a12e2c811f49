// The barrier's messages (barrier.hpp) on the wire, and the tree they travel over: pure
// functions of what a rank knows (BarrierView), so that the decoders can be fuzzed. Every
// decoder checks what a message may carry for the rank receiving it (DecodeError).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proto/codec.hpp"
#include "proto/intervals.hpp"

namespace dsm::proto {

// The tree: rank r's parent is (r - 1) / fanout, rank 0 the root.
int barrier_parent(int rank, int fanout);  // -1 for rank 0
std::vector<int> barrier_children(int rank, int nprocs, int fanout);
// Whether `rank` lies in the subtree of `root` (itself included).
bool in_subtree(int rank, int root, int fanout);

// What decoding a barrier message takes from the receiving rank.
struct BarrierView {
  std::uint32_t nprocs, npages;  // job size, allocated pages
  int me, fanout;
  std::uint64_t epoch;    // the barrier under way
  bool exchange = false;  // an arrival stands for its sender alone (two ranks, barrier.hpp)
};

// A writer's pushes to one reader that travel in a message of their own (barrier_push),
// straight from writer to reader, rather than in the arrivals and departures: a gathering
// rank copied each such page into a departure again, and the departure waited for it. The
// arrivals name them up the tree, the departures tell each reader whom to wait for.
struct DirectPush {
  std::uint32_t writer, reader;
};

// What one member of a barrier's gathering brought: a rank's own arrival, or a child's,
// which stands for the child's whole subtree. Points into the payload decoded.
struct Arrival {
  VectorTime vt;                    // entry-wise oldest of the subtree's vector times
  std::vector<Interval> intervals;  // the subtree's intervals since the last barrier
  struct Rank {
    std::uint32_t rank;
    std::uint64_t call;               // the collective call it reached (barrier_with)
    std::span<const std::byte> blob;  // its balancer figures
  };
  std::vector<Rank> ranks;           // every rank of the subtree
  std::uint64_t protocol_bytes = 0;  // the subtree's largest
  std::vector<Push> pushes;
  std::vector<DirectPush> direct;
  bool in = false;
};

// The arrival of `member` (the receiving rank itself, or one of its children).
Arrival decode_arrival(std::span<const std::byte> payload, int member, const BarrierView& v);

// What a departure brings, pointing into the payload decoded.
struct Departure {
  std::vector<Interval> intervals;
  std::vector<std::span<const std::byte>> blobs;  // by rank
  bool gc = false, mismatch = false;
  std::vector<Push> pushes;
  std::vector<DirectPush> direct;  // whose barrier_push the subtree's readers wait for
};
// A departure for the receiving rank's application thread (only_me: pushes to it alone), or
// from its parent, for its subtree.
Departure decode_departure(std::span<const std::byte> payload, const BarrierView& v, bool only_me);

// A push as arrivals and departures carry it, without its bytes, which follow as codec bytes.
void put_push_head(codec::Writer& w, const Push& p);
void put_pushes(codec::Writer& w, std::span<const Push* const> pushes);
void put_direct(codec::Writer& w, std::span<const DirectPush> direct);

// A barrier_push of barrier v.epoch from `writer` to the receiving rank, pointing into the
// payload decoded.
std::vector<Push> decode_direct_pushes(std::span<const std::byte> payload, int writer, const BarrierView& v);

}  // namespace dsm::proto
