// This rank's changes as others get them: diff requests answered by the service thread,
// and the changes pushed with a barrier to the ranks that read a page in small requests.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/codec.hpp"
#include "proto/intervals.hpp"

namespace dsm::proto {

void serve_diff_request(int src, codec::Reader& r);
// A barrier_push message for one reader.
struct DirectMessage {
  std::uint32_t reader;
  codec::Writer w;
};
// Pushes of the changes `newest` (this rank's newest interval, or none) made to pages that
// readers fetched, encoded into w as the barrier arrival carries them; but a reader other
// than `hub` (where the arrival goes) with Sync::direct_push_pages pushes or more gets them
// in a barrier_push of barrier `epoch`, returned. Called with mu held.
std::vector<DirectMessage> encode_pushes(codec::Writer& w, const Interval* newest, int hub, std::uint64_t epoch);
// `rank` will read pages [first, last) after the next barrier where this rank changes them
// (the balancer predicts it from reads that move: row k of an elimination at step k): those
// changes go to it pushed, as to a reader that fetched them in a small request; nothing
// for more pages than such a request (a block that moves). Under mu.
void expect_reader(std::uint32_t first, std::uint32_t last, std::uint32_t rank);

}  // namespace dsm::proto
