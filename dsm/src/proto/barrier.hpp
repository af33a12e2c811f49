// Barriers over a tree of the ranks. Rank r's parent is (r - 1) / fanout; rank 0 is the root.
// A rank's arrival goes to its parent, which gathers its own and its children's into one
// arrival for its own parent: the new intervals of its subtree, every rank's collective call
// and balancer figures, the entry-wise oldest vector time, and the pages pushed to readers
// outside the subtree. The root decides the departures; every rank with children passes on
// to each child what that child's subtree lacks (the intervals its oldest member has not
// seen, every rank's figures, the pushes to the subtree's ranks), pushes between ranks of
// one subtree never leaving it; large pushes go straight from writer to reader (DirectPush).
// A rank handles at most fanout + 1 barrier messages per barrier, and
// each carries what a subtree needs, so the busiest rank's bytes grow with the ranks that
// wrote, not with their square. Up to fanout + 1 ranks the tree is the centralized barrier
// of TreadMarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proto/barrier_codec.hpp"

namespace dsm::proto {

// The barrier tree's fan-out unless DSM_BARRIER_FANOUT says otherwise: at 32 ranks the
// busiest rank sends 4 messages per barrier, and a job of up to 4 ranks is one level.
constexpr int default_barrier_fanout = 3;

// Two ranks (on one host unless DSM_BARRIER_EXCHANGE says otherwise) send each other their
// arrivals instead: each departs on the other's, and a barrier is one message each way, where
// the tree's is an arrival, a departure and rank 0's messages to itself. Barriers of a loop
// of little work took 12-25 % less time so over shm; over tcp between namespace hosts 10-30 %
// more, for reasons not found (the same messages were sent, no rank slept). What this rank's
// own arrival said, to read the other's by:
struct Arrived {
  VectorTime vt;
  std::uint64_t call = 0, protocol_bytes = 0;
};
// The departure the other rank's arrival `payload` makes for this rank (its own blob left
// empty); a mismatch of collective calls is reported (on both ranks).
Departure exchanged_departure(std::span<const std::byte> payload, const BarrierView& v, const Arrived& mine);

// What decoding a barrier message of barrier `epoch` takes from this rank.
BarrierView barrier_view(std::uint64_t epoch);

// Where this rank's arrival goes and its departure comes from: itself where it gathers
// (rank 0 and every rank with children), its parent otherwise; under exchange the other
// rank (its pushes to that rank then ride in the arrival, however many).
int barrier_hub();

// Handlers (dispatch.cpp): an arrival of this rank's or a child's, and a departure, from the
// parent (passed on) or this rank's own (for the application thread).
void on_barrier_arrive(int src, std::span<const std::byte> payload);
void on_barrier_depart(int src, std::span<const std::byte> payload);

}  // namespace dsm::proto
