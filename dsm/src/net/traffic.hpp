// Message counters of one endpoint, a header of their own: the statistics board holds them
// without needing the transport.
#pragma once

#include <atomic>
#include <cstdint>

namespace dsm::net {

// Traffic of one endpoint. X-macro, so the fields, their copies and their JSON names stay one
// list. The counters may live outside the transport (in the statistics board's slot).
#define DSM_TRAFFIC(X) X(msgs_sent) X(bytes_sent) X(msgs_received) X(bytes_received) X(rejected_msgs)
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

}  // namespace dsm::net
