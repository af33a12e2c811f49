// Barriers and locks (TreadMarks): every acquire brings the write notices the acquirer has
// not seen; the barrier also carries the balancer's figures.
#include "proto/sync.hpp"

#include <string>

#include "mem/heap.hpp"
#include "proto/barrier.hpp"
#include "proto/gc.hpp"
#include "proto/inbox.hpp"
#include "proto/interval_end.hpp"
#include "proto/notices.hpp"
#include "proto/serve.hpp"
#include "proto/state.hpp"
#include "runtime/runtime_hooks.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

int lock_manager(int lock) { return lock % state().nprocs; }

// Sends the lock token to `to`, with the intervals it lacks. Called with mu held.
void grant(int lock, int to, const VectorTime& vt) {
  auto& s = state();
  codec::Writer w;
  w.put<std::uint32_t>(std::uint32_t(lock));
  encode_list(w, s.intervals.log.missing_for(vt));
  s.sync.tokens[lock].held = false;
  s.net->send(to, lock_grant, w.buffer());
}

// A lock held in a barrier that a rank asked for before completing that barrier: the
// requester waits for the lock and never reaches the barrier, the holder releases it only
// after the barrier; neither goes on. (A rank already past the barrier, whose departure came
// first, may ask too: its epoch is higher.) Called with mu held, when the barrier is entered
// and when a request reaches the holder inside it.
void check_held_through_barrier(int lock) {
  auto& s = state();
  const auto& t = s.sync.tokens[lock];
  if (s.sync.in_barrier && t.in_use && t.next && t.next->epoch <= s.sync.epoch)
    fatal("a barrier was entered holding lock %d, which rank %d waits for: neither can go on "
          "(release the lock before the barrier)", lock, t.next->rank);
}

}  // namespace

void on_lock_request(int src, codec::Reader& r) {
  auto& s = state();
  auto lock = r.get<std::uint32_t>();
  auto epoch = r.get<std::uint64_t>();
  auto vt = r.array<std::uint32_t>(s.nprocs);
  r.expect_end();
  if (lock >= s.sync.tokens.size() || lock_manager(int(lock)) != s.me || vt.size() != std::size_t(s.nprocs))
    throw codec::DecodeError("lock request for a lock this rank does not manage");
  int prev = s.sync.lock_last[lock];
  s.sync.lock_last[lock] = src;
  codec::Writer w;
  w.put(lock);
  w.put<std::uint32_t>(std::uint32_t(src));
  w.put(epoch);
  w.array<std::uint32_t>(vt);
  s.net->send(prev, lock_forward, w.buffer());
}

void on_lock_forward(int src, codec::Reader& r) {
  auto& s = state();
  auto lock = r.get<std::uint32_t>();
  auto to = r.get<std::uint32_t>();
  auto epoch = r.get<std::uint64_t>();
  auto vt = r.array<std::uint32_t>(s.nprocs);
  r.expect_end();
  if (lock >= s.sync.tokens.size() || to >= std::uint32_t(s.nprocs) || vt.size() != std::size_t(s.nprocs))
    throw codec::DecodeError("malformed lock forward");
  // Only the lock's manager forwards requests, one at a time: a second while one waits
  // would drop the first requester.
  if (src != lock_manager(int(lock))) throw codec::DecodeError("lock forward from a rank that does not manage the lock");
  std::lock_guard lk(s.mu);
  auto& t = s.sync.tokens[lock];
  if (t.next) throw codec::DecodeError("lock forward while another request waits for the token");
  if (t.held && !t.in_use) {
    grant(int(lock), int(to), vt);
    return;
  }
  t.next = LockRequest{int(to), epoch, std::move(vt)};  // granted at our release
  check_held_through_barrier(int(lock));
}

void barrier_with(std::uint64_t call, bool collecting) {
  auto& s = state();
  auto& c = stats::counters();
  mem::populate_heap();
  // Whether to poll at this barrier and the waits up to the next: programs that never call
  // redistribute() (hand-parallelized ones) share a core with other users' programs too.
  if (!collecting) detail::watch_core();
  // The barrier inside garbage collection follows the previous barrier with no application
  // code between them: nothing was written, and an interval announcing the held pages would
  // outlive the log it is dropped from.
  if (!collecting) close_interval(true);
  {
    stats::Timer wait(c.barrier_wait_ns);
    board::StateScope in_barrier(board::RankState::barrier);
    codec::Writer w;
    const int hub = barrier_hub();
    const bool exchange = s.sync.barrier.exchange;
    Arrived arrived{{}, call, 0};
    std::vector<DirectMessage> direct;
    {
      std::lock_guard lk(s.mu);
      s.sync.in_barrier = s.sync.pages_as_closed = true;
      for (std::size_t l = 0; s.sync.locks_in_use > 0 && l < s.sync.tokens.size(); ++l)
        check_held_through_barrier(int(l));
      w.put(s.sync.epoch);
      arrived.vt = s.intervals.log.vector_time();
      w.array<std::uint32_t>(arrived.vt);
      auto mine = s.intervals.log.since(std::uint32_t(s.me), s.intervals.last_sent);
      encode_list(w, mine);
      const Interval* newest = mine.empty() ? nullptr : mine.back();
      s.intervals.last_sent = s.intervals.log.known(std::uint32_t(s.me));
      w.put<std::uint32_t>(1);  // the ranks this arrival stands for: this one
      w.put<std::uint32_t>(std::uint32_t(s.me));
      w.put(call);
      w.bytes(s.balancer.my_blob);
      s.balancer.sent_blob = std::move(s.balancer.my_blob);
      s.balancer.my_blob.clear();
      arrived.protocol_bytes = collecting ? 0 : s.served.diff_bytes + s.intervals.log.bytes();
      w.put(arrived.protocol_bytes);
      direct = encode_pushes(w, newest, hub, s.sync.epoch);
      std::vector<DirectPush> named;
      for (const DirectMessage& d : direct) named.push_back({std::uint32_t(s.me), d.reader});
      put_direct(w, named);
    }
    // Before the arrival: the reader takes them in while it still computes.
    for (DirectMessage& d : direct) s.net->send_owned(int(d.reader), barrier_push, d.w.take());
    // Polling from before the send: this rank's own arrival (a message to itself, where it
    // gathers) and its children's are then taken by this thread, not by a service thread
    // woken on the same core.
    if (s.poll_ns > 0) s.net->set_polling(true);
    s.net->send_lazy(hub, barrier_arrive, w.take());
    const Reply reply = exchange ? wait_queued(barrier_arrive, hub) : wait_inbox(barrier_depart, hub);
    bool gc = false, mismatch = false;
    try {
      const BarrierView view = barrier_view(s.sync.epoch);
      Departure d = exchange ? exchanged_departure(reply.payload(), view, arrived) : decode_departure(reply.payload(), view, true);
      gc = d.gc;
      mismatch = d.mismatch;
      s.balancer.blobs.resize(d.blobs.size());
      for (std::size_t p = 0; p < d.blobs.size(); ++p) s.balancer.blobs[p].assign(d.blobs[p].begin(), d.blobs[p].end());
      s.balancer.blobs[std::size_t(s.me)] = std::move(s.balancer.sent_blob);  // not sent back
      // Where this rank gathers, the pushes to it came handed over, not in its departure.
      auto& b = s.sync.barrier;
      const std::vector<net::Payload> kept = std::move(b.pushes_kept);
      d.pushes.insert(d.pushes.end(), b.pushes_here.begin(), b.pushes_here.end());
      b.pushes_here.clear();
      b.pushes_kept.clear();
      std::vector<Reply> direct_in;
      for (const DirectPush& x : d.direct) {
        direct_in.push_back(wait_queued(barrier_push, int(x.writer)));
        const std::vector<Push> pushed = decode_direct_pushes(direct_in.back().payload(), int(x.writer), view);
        d.pushes.insert(d.pushes.end(), pushed.begin(), pushed.end());
      }
      merge(std::move(d.intervals), d.pushes, /*ends_barrier=*/true);
    } catch (const codec::DecodeError& e) {
      fatal("rejected barrier departure: %s", e.what());
    }
    if (mismatch) fatal("ranks reached different collective calls (rank 0 names them)");
    c.barriers.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t bytes = protocol_bytes();
    if (bytes > c.protocol_bytes_peak.load()) c.protocol_bytes_peak.store(bytes);
    if (s.balancer.hook) s.balancer.hook();
    if (!gc) return;
  }
  garbage_collect();
}

void echo(int peer, std::span<const std::byte> bytes) {
  auto& s = state();
  s.net->send(peer, echo_request, bytes);
  if (wait_inbox(echo_reply, peer).payload().size() != bytes.size()) fatal("echo from rank %d came back with another length", peer);
}

void acquire(int lock) {
  auto& s = state();
  auto& c = stats::counters();
  c.lock_acquires.fetch_add(1, std::memory_order_relaxed);
  close_interval(false);
  // A rank that takes a lock it holds again and again (a loop that waits for its turn)
  // would keep it from a rank that asked: the request forwarded to it waits for the service
  // thread, which on a rank bound to one core runs only once the scheduler preempts this
  // thread (up to a scheduler tick). Taking in what has arrived first hands the lock on
  // (and serves the request itself where this rank is the lock's manager); every 20 us at
  // most, so that a loop of local acquires stays cheap. Not on a core another program
  // shares (a rank that sleeps when it waits): the lock would go back and forth more often,
  // and each time it comes back the rank waits for its core.
  if (s.poll_ns > 0) {
    if (const std::uint64_t now = stats::now_ns(); now - s.sync.acquire_poll_ns >= 20'000) {
      s.sync.acquire_poll_ns = now;
      s.net->poll();
    }
  }
  {
    std::lock_guard lk(s.mu);
    auto& t = s.sync.tokens[lock];
    if (t.held) {  // released here last and nobody asked since: no messages
      t.in_use = true;
      ++s.sync.locks_in_use;
      return;
    }
  }
  // Programs that synchronize with locks alone learn here whether to poll while they wait.
  detail::watch_core();
  stats::Timer wait(c.lock_wait_ns);
  board::StateScope in_lock_wait(board::RankState::lock_wait);
  codec::Writer w;
  {
    std::lock_guard lk(s.mu);
    w.put<std::uint32_t>(std::uint32_t(lock));
    w.put(s.sync.epoch);
    w.array<std::uint32_t>(s.intervals.log.vector_time());
  }
  s.net->send(lock_manager(lock), lock_request, w.buffer());
  const Reply reply = wait_inbox(lock_grant, -1);
  try {
    codec::Reader r(reply.payload());
    if (r.get<std::uint32_t>() != std::uint32_t(lock)) throw codec::DecodeError("grant of another lock");
    auto list = decode_list(r, std::uint32_t(s.nprocs), s.heap.allocated);
    r.expect_end();
    merge(std::move(list));
  } catch (const codec::DecodeError& e) {
    fatal("rejected lock grant: %s", e.what());
  }
  std::lock_guard lk(s.mu);
  s.sync.tokens[lock].held = true;
  s.sync.tokens[lock].in_use = true;
  ++s.sync.locks_in_use;
}

void release(int lock) {
  auto& s = state();
  close_interval(false);
  std::lock_guard lk(s.mu);
  auto& t = s.sync.tokens[lock];
  if (!t.held || !t.in_use) fatal("dsm::lock_release(%d) of a lock this rank does not hold", lock);
  t.in_use = false;
  --s.sync.locks_in_use;
  if (t.next) {
    LockRequest next = std::move(*t.next);
    t.next.reset();
    grant(lock, next.rank, next.vt);
  }
}

}  // namespace dsm::proto
