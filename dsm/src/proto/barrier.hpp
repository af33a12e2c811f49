// Barriers over a tree of the ranks. Rank r's parent is (r - 1) / fanout; rank 0 is the root.
// A rank's arrival goes to its parent, which gathers its own and its children's into one
// arrival for its own parent: the new intervals of its subtree, every rank's collective call
// and balancer figures, the entry-wise oldest vector time, and the pages pushed to readers
// outside the subtree. The root decides the departures; every rank with children passes on
// to each child what that child's subtree lacks (the intervals its oldest member has not
// seen, every rank's figures, the pushes to the subtree's ranks), pushes between ranks of
// one subtree never leaving it. A rank handles at most fanout + 1 messages per barrier, and
// each carries what a subtree needs, so the busiest rank's bytes grow with the ranks that
// wrote, not with their square. Up to fanout + 1 ranks the tree is the centralized barrier
// of TreadMarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proto/codec.hpp"
#include "proto/intervals.hpp"

namespace dsm::proto {

// The barrier tree's fan-out unless DSM_BARRIER_FANOUT says otherwise: at 32 ranks the
// busiest rank sends 4 messages per barrier, and a job of up to 4 ranks is one level.
constexpr int default_barrier_fanout = 3;

int barrier_parent(int rank, int fanout);  // -1 for rank 0
std::vector<int> barrier_children(int rank, int nprocs, int fanout);
// Whether `rank` lies in the subtree of `root` (itself included).
bool in_subtree(int rank, int root, int fanout);

// Where this rank's arrival goes and its departure comes from: itself where it gathers
// (rank 0 and every rank with children), its parent otherwise.
int barrier_hub();

// Writes a push without its bytes, as arrivals and departures carry it; the bytes follow as
// codec bytes.
void put_push_head(codec::Writer& w, const Push& p);

// What a departure brings, pointing into the payload decoded.
struct Departure {
  std::vector<Interval> intervals;
  std::vector<std::span<const std::byte>> blobs;  // by rank
  bool gc = false, mismatch = false;
  std::vector<Push> pushes;
};
// Decodes and checks a departure: for this rank's application thread (only_me: pushes to
// this rank alone), or from its parent, for its subtree (DecodeError).
Departure decode_departure(std::span<const std::byte> payload, std::uint64_t epoch, bool only_me);

// Handlers (dispatch.cpp): an arrival of this rank's or a child's, and a departure, from the
// parent (passed on) or this rank's own (for the application thread).
void on_barrier_arrive(int src, std::span<const std::byte> payload);
void on_barrier_depart(int src, std::span<const std::byte> payload);

}  // namespace dsm::proto
