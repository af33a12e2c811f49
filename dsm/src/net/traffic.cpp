// The traffic counters as JSON, under the names of dsmrun --stats-json.
#include "net/traffic.hpp"

namespace dsm::net {

std::string json_fields(const Traffic& t) {
  std::string out;
#define DSM_EMIT(name) out += std::string(out.empty() ? "" : ", ") + "\"" #name "\": " + std::to_string(t.name.load());
  DSM_TRAFFIC(DSM_EMIT)
#undef DSM_EMIT
  return out;
}

std::string sent_to_json(std::span<const PeerTraffic> sent_to) {
  std::string msgs, bytes;
  for (const PeerTraffic& p : sent_to) {
    if (!msgs.empty()) {
      msgs += ", ";
      bytes += ", ";
    }
    msgs += std::to_string(p.msgs.load(std::memory_order_relaxed));
    bytes += std::to_string(p.bytes.load(std::memory_order_relaxed));
  }
  return "{\"msgs\": [" + msgs + "], \"bytes\": [" + bytes + "]}";
}

}  // namespace dsm::net
