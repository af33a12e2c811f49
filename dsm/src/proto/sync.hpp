// Synchronization: barriers (over the tree of barrier.hpp) and locks with a static manager per
// lock id and forwarding to the last requester. The application thread's side (barrier,
// acquire, release) and the service thread's handlers of the requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "proto/codec.hpp"

namespace dsm::proto {

// A barrier that checks every rank reached the same collective call: `call` is 0 for
// dsm::barrier, the size for dsm::alloc, finalize_call for dsm::finalize. The barrier inside
// garbage collection passes collecting = true, so it cannot start another.
constexpr std::uint64_t finalize_call = ~std::uint64_t{0};
void barrier_with(std::uint64_t call, bool collecting = false);
void acquire(int lock);
void release(int lock);
// Sends `bytes` to `peer`'s service thread and waits for them to come back.
void echo(int peer, std::span<const std::byte> bytes);

// Handlers of the service thread (dispatch.cpp).
void on_lock_request(int src, codec::Reader& r);
void on_lock_forward(int src, codec::Reader& r);

}  // namespace dsm::proto
