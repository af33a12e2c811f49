// Message counters of one endpoint, a header of their own: the statistics board holds them
// without needing the transport.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace dsm::net {

// Traffic of one endpoint. X-macro, so the fields, their copies and their JSON names stay one
// list. The counters may live outside the transport (in the statistics board's slot).
// msgs_sent .. bytes_received count what crossed the network, payload bytes (the wire header
// not included); messages a rank sends to itself never leave it and count only as
// msgs_self and bytes_self. send_waits: posts (of a message, or of its payload) that found
// the provider out of room, or no eager buffer free, and waited for it.
#define DSM_TRAFFIC(X)                                                          \
  X(msgs_sent) X(bytes_sent) X(msgs_received) X(bytes_received) X(msgs_self) \
  X(bytes_self) X(rejected_msgs) X(send_waits)
struct Traffic {
#define DSM_DECLARE(name) std::atomic<std::uint64_t> name{0};
  DSM_TRAFFIC(DSM_DECLARE)
#undef DSM_DECLARE
};
inline void copy(const Traffic& from, Traffic& to) {
#define DSM_COPY(name) to.name.store(from.name.load(std::memory_order_relaxed), std::memory_order_relaxed);
  DSM_TRAFFIC(DSM_COPY)
#undef DSM_COPY
}

// What an endpoint sent over the network to one other rank (its share of msgs_sent and
// bytes_sent). Kept by the transport, one per rank of the job: its size depends on the job,
// so it has no place in the board's fixed slots.
struct PeerTraffic {
  std::atomic<std::uint64_t> msgs{0};
  std::atomic<std::uint64_t> bytes{0};
};

// "msgs_sent": N, "bytes_sent": N, ...: every counter under its JSON name, for a caller to
// put in an object.
std::string json_fields(const Traffic&);
// {"msgs": [to rank 0, to rank 1, ...], "bytes": [...]}.
std::string sent_to_json(std::span<const PeerTraffic> sent_to);

}  // namespace dsm::net
