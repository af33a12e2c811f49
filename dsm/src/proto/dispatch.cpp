#include "proto/dispatch.hpp"

#include "proto/barrier.hpp"
#include "proto/codec.hpp"
#include "proto/inbox.hpp"
#include "proto/serve.hpp"
#include "proto/state.hpp"
#include "proto/sync.hpp"

namespace dsm::proto {

void handle_message(int src, std::uint16_t type, std::span<const std::byte> payload) {
  auto& s = state();
  try {
    codec::Reader r(payload);
    switch (type) {
      case diff_request: serve_diff_request(src, r); return;
      case lock_request: on_lock_request(src, r); return;
      case lock_forward: on_lock_forward(src, r); return;
      case barrier_arrive: on_barrier_arrive(src, payload); return;
      case barrier_depart: on_barrier_depart(src, payload); return;
      case diff_reply:
      case lock_grant:
      case echo_reply: post_inbox(src, Msg(type), payload); return;
      case echo_request: s.net->send(src, echo_reply, payload); return;
      case channel_data: post_channel(src, payload); return;
      case barrier_push: post_queued(src, barrier_push, payload); return;
      default: throw codec::DecodeError("unknown message type");
    }
  } catch (const codec::DecodeError& e) {
    fatal("rejected %s (type %u) from rank %d: %s", msg_name(type), unsigned(type), src, e.what());
  }
}

}  // namespace dsm::proto
