// The protocol's messages: their types and layouts (the transport's uint16 type, payloads
// encoded with codec.hpp), and the dispatcher the service thread runs for each one that
// arrives (dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>

namespace dsm::proto {

enum Msg : std::uint16_t {
  diff_request = 1,   // u32 req, u32 n, n x (u32 page, u32 idx, u8 kind[, u16 lo, u16 hi if req
                      // has `within`])  (item_* kinds)
  diff_reply = 2,     // u32 sender, u32 req, u32 n, n x (u32 page, u32 idx, u8 kind, [u32 through
                      // if whole_through], bytes) (item_diff, item_whole, valid_copy, end_copy
                      // or whole_through)
  lock_request = 3,   // u32 lock, u64 epoch, vt                 (to the lock's manager)
  lock_forward = 4,   // u32 lock, u32 requester, u64 epoch, vt  (manager to the last requester)
  lock_grant = 5,     // u32 lock, intervals             (holder to the next one)
  barrier_arrive = 6, // u64 epoch, vt (the subtree's oldest), intervals, u32 n, n x (u32 rank,
                      // u64 call, bytes blob), u64 protocol bytes, pushes, direct  (to the
                      // parent: barrier.hpp)
  barrier_depart = 7, // u64 epoch, intervals, u32 n, n x bytes blob (by rank), u8 gc,
                      // u8 call mismatch, pushes, direct  (to a child, or to itself)
                      // pushes: u32 n, n x (u32 reader, u32 writer, u32 idx, u32 page, u8 whole
                      // (0 a diff, 1 the page, 2 part of it: u16 offset follows), bytes)
                      // (Page::readers)
                      // direct: u32 n, n x (u32 writer, u32 reader): barrier_push messages
                      // (DirectPush)
  echo_request = 8,   // any bytes: answered with the same bytes (round-trip floor, diagnosis)
  echo_reply = 9,
  channel_data = 10,  // any bytes, queued by sender for the application thread (inbox.hpp);
                      // their layout is the sending layer's (a pipeline's strips: pipeline.cpp)
  barrier_push = 11,  // u64 epoch, pushes (all to the receiving rank), writer to reader
                      // before the writer's arrival, queued until that barrier's merge
};

// For messages that name a message.
constexpr const char* msg_name(std::uint16_t type) {
  constexpr const char* names[] = {"message of unknown type", "diff request", "diff reply", "lock request",
                                   "lock forward", "lock grant", "barrier arrival", "barrier departure",
                                   "echo request", "echo reply", "channel message",
                                   "direct push"};
  return type < std::size(names) ? names[type] : names[0];
}

// A diff request's `req` flags: sent by garbage collection (see make_valid); sent by a rank
// that will read the same pages again after the next barriers (a loop's steady ranges), which
// registers it as their reader whatever the request's size (serve.cpp).
constexpr std::uint32_t at_collection = 1;
constexpr std::uint32_t rereads = 2;
// Each item names the bytes [lo, hi) of its page that the asking rank reads (dsm::ReadsWithin):
// its pushes to that rank carry those bytes alone.
constexpr std::uint32_t within = 4;
// A request item's kind: the diff of an interval, its whole page (a whole notice), or its
// diff to be applied to a page that is all zero at the asking rank, which the writer may
// answer with end_copy.
constexpr std::uint8_t item_diff = 0;
constexpr std::uint8_t item_whole = 1;
constexpr std::uint8_t item_from_zeros = 2;
// A reply item's kind besides item_diff and item_whole: the server's valid copy of the page,
// for a request at_collection; or, for item_from_zeros, the page as the interval left it,
// when the writer's twin was all zero too (the same bytes as the diff applied to zeros).
constexpr std::uint8_t valid_copy = 3;
constexpr std::uint8_t end_copy = 4;
// For item_whole, served from the page itself while the server waits in a barrier (its
// interval closed, its pages unchanged until the barrier's merge): the page as its own
// interval `through` (newer than the one asked for) left it, the last one it closed. The asking rank then keeps its copy when that interval's notice reaches it: a
// block that moved to it is not fetched again because its old holder announced it whole
// at the barrier after the move.
constexpr std::uint8_t whole_through = 5;
// Items in one diff request. Requests are cut so that a reply is about a MiB: the writer
// encodes the next while this rank receives the last, and buffers of that size are soon
// reused, where replies of several MiB fault fresh memory in on both sides (a rank's first
// fetch of an 8 MiB block takes about half as long in 8 requests as in 2). A server
// refuses more, since each item may ask for a whole page.
constexpr std::uint32_t max_request_items = 256;

// Runs on the service thread (or a polling application thread) for every message that
// arrives: requests are answered, replies go to the inbox. A malformed message is fatal.
void handle_message(int src, std::uint16_t type, std::span<const std::byte> payload);

}  // namespace dsm::proto
