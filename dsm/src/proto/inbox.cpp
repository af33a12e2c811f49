#include "proto/inbox.hpp"

#include <optional>
#include <string>

#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

// Marks the application thread as waiting for a reply, for as long as it lives.
class Waiting {
 public:
  Waiting(Msg type, int from) {
    state().inbox.waiting_from.store(from, std::memory_order_relaxed);
    state().inbox.waiting_type.store(type, std::memory_order_release);
  }
  ~Waiting() { state().inbox.waiting_type.store(0, std::memory_order_release); }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;
};

}  // namespace

std::string waiting_for() {
  auto& s = state();
  const std::uint16_t type = s.inbox.waiting_type.load(std::memory_order_acquire);
  if (type == 0) return "nothing: it was computing";
  const int from = s.inbox.waiting_from.load(std::memory_order_relaxed);
  std::string what = std::string("a ") + msg_name(type) + (from >= 0 ? " from rank " + std::to_string(from) : " from any rank");
  if (type == barrier_depart) what += " (barrier " + std::to_string(s.sync.epoch + 1) + ")";
  if (type == diff_reply) what += " (pages it faulted on or prefetched)";
  return what;
}

namespace {

// The application thread's wait for what `take` finds (it takes s.mu itself): polls for
// DSM_POLL_US, then sleeps until something arrives.
template <class Take>
auto wait_for(Msg type, int from, Take take) {
  auto& s = state();
  const Waiting waiting(type, from);
  const std::uint64_t poll_until = stats::now_ns() + s.poll_ns;
  bool polling = s.poll_ns > 0;
  // A polling rank raises its waiting flag (lazy messages that came while it was busy are
  // found by its first poll below); one that never polls keeps it raised (dsm::init).
  const bool lazy = polling;
  bool slept = false;
  if (polling) {
    s.net->set_polling(true);
    s.net->set_waiting(true);
  }
  for (std::uint64_t seen = ~0ull;;) {
    // The mutex only when something arrived: a poller holding it would make the service
    // thread that posts the reply sleep on it.
    if (s.inbox.arrived.value() != seen) {
      seen = s.inbox.arrived.value();  // posts notify after they queued under mu
      if (auto m = take()) {
        if (lazy) s.net->set_waiting(false);
        if (polling) s.net->set_polling(false);  // may run handlers: not under mu
        return std::move(*m);
      }
    }
    // Poll for a short while (the reply usually comes within microseconds), then sleep.
    if (polling) {
      if (stats::now_ns() >= poll_until) {
        s.net->set_polling(false);
        polling = false;
      }
      s.net->poll();
      continue;
    }
    if (!slept) {
      stats::counters().sleeps.fetch_add(1, std::memory_order_relaxed);
      if (!lazy && s.configured_poll_ns > 0)
        stats::counters().shared_core_waits.fetch_add(1, std::memory_order_relaxed);
    }
    slept = true;
    s.inbox.arrived.wait_until(seen + 1);
  }
}

// The first reply in the inbox, under s.mu.
std::optional<Reply> first_reply() {
  auto& s = state();
  if (s.inbox.replies.empty()) return std::nullopt;
  Reply r = std::move(s.inbox.replies.front());
  s.inbox.replies.pop_front();
  return r;
}

// Fatal unless `m` is of `type` and from `from` (-1: any rank).
Reply expected(Reply m, Msg type, int from) {
  if (m.type != type || (from >= 0 && m.src != from))
    fatal("a %s from rank %d where a %s from %s was due", msg_name(m.type), m.src, msg_name(type),
          from >= 0 ? ("rank " + std::to_string(from)).c_str() : "any rank");
  return m;
}

}  // namespace

Reply wait_inbox(Msg type, int from) {
  auto& s = state();
  return expected(wait_for(type, from, [&] {
                    std::lock_guard lk(s.mu);
                    return first_reply();
                  }),
                  type, from);
}

void send_channel(int dest, std::span<const std::byte> data) {
  auto& s = state();
  if (dest < 0 || dest >= s.nprocs || dest == s.me) fatal("a channel message to rank %d", dest);
  s.net->send(dest, channel_data, data);
}

std::vector<std::byte> wait_channel(int from) {
  auto& s = state();
  return wait_for(channel_data, from, [&]() -> std::optional<std::vector<std::byte>> {
    std::lock_guard lk(s.mu);
    const auto it = s.inbox.channel.find(from);
    if (it == s.inbox.channel.end() || it->second.empty()) return std::nullopt;
    std::vector<std::byte> m = std::move(it->second.front());
    it->second.pop_front();
    return m;
  });
}

void post_channel(int src, std::span<const std::byte> payload) {
  auto& s = state();
  {
    std::lock_guard lk(s.mu);
    s.inbox.channel[src].emplace_back(payload.begin(), payload.end());
  }
  s.inbox.arrived.notify();
}

namespace {

// A handler's payload as a Reply: a large message's buffer taken over, a small one copied.
Reply kept_reply(int src, Msg type, std::span<const std::byte> payload) {
  auto& s = state();
  net::Payload taken = s.net ? s.net->take_payload() : net::Payload{};
  if (!taken) taken.own.assign(payload.begin(), payload.end());
  return {src, type, std::move(taken.own), std::move(taken.large), payload.size()};
}

}  // namespace

void post_inbox(int src, Msg type, std::span<const std::byte> payload) {
  auto& s = state();
  Reply reply = kept_reply(src, type, payload);
  {
    std::lock_guard lk(s.mu);
    s.inbox.replies.push_back(std::move(reply));
  }
  s.inbox.arrived.notify();
}

Reply wait_queued(Msg type, int from) {
  auto& s = state();
  return expected(wait_for(type, from, [&]() -> std::optional<Reply> {
    std::lock_guard lk(s.mu);
    // The application thread asked for no reply: one in the inbox is forged or duplicated.
    if (auto stray = first_reply()) return stray;
    const auto it = s.inbox.queued.find({type, from});
    if (it == s.inbox.queued.end() || it->second.empty()) return std::nullopt;
    Reply m = std::move(it->second.front());
    it->second.pop_front();
    return m;
  }), type, from);
}

void post_queued(int src, Msg type, std::span<const std::byte> payload) {
  auto& s = state();
  Reply reply = kept_reply(src, type, payload);
  {
    std::lock_guard lk(s.mu);
    s.inbox.queued[{type, src}].push_back(std::move(reply));
  }
  s.inbox.arrived.notify();
}

}  // namespace dsm::proto
