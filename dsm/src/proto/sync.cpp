// Barriers and locks (TreadMarks): every acquire brings the write notices the acquirer has
// not seen; the barrier also carries the balancer's figures.
#include "proto/sync.hpp"

#include <cstdio>
#include <string>

#include "mem/heap.hpp"
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

std::uint32_t heap_pages_locked() { return state().heap.allocated.load(); }

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

void on_barrier_arrive(int src, std::span<const std::byte> payload) {
  auto& s = state();
  auto& m = s.sync.barrier_mgr;
  auto npages = heap_pages_locked();
  // The pushes point into the arrival: kept until the departures are sent, which the last
  // arrival's call does itself (its payload lives as long as the call).
  std::span<const std::byte> kept = payload;
  if (m.arrived + 1 < s.nprocs) {
    m.arrivals[src].assign(payload.begin(), payload.end());
    kept = m.arrivals[src];
  }
  codec::Reader r(kept);
  auto epoch = r.get<std::uint64_t>();
  if (s.me != 0 || epoch != m.epoch) throw codec::DecodeError("barrier arrival out of sequence");
  auto vt = r.array<std::uint32_t>(s.nprocs);
  if (vt.size() != std::size_t(s.nprocs)) throw codec::DecodeError("barrier arrival with a bad vector time");
  auto list = decode_list(r, std::uint32_t(s.nprocs), npages);
  auto blob = r.bytes();
  auto alloc = r.get<std::uint64_t>();
  auto bytes = r.get<std::uint64_t>();
  std::vector<std::pair<std::uint32_t, Push>> pushes(r.count(13));
  for (auto& [reader, push] : pushes) {
    reader = r.get<std::uint32_t>();
    push.page = r.get<std::uint32_t>();
    push.whole = r.get<std::uint8_t>() != 0;
    push.data = r.bytes();
    // A push is a change of the sender's newest interval, as that interval announces it, for
    // another rank. (A diff's contents are checked where it is applied.)
    if (reader >= std::uint32_t(s.nprocs) || reader == std::uint32_t(src) || list.empty() ||
        written(list.back(), push.page) != push.whole || (push.whole && push.data.size() != mem::page_size))
      throw codec::DecodeError("barrier arrival with a malformed page push");
    push.proc = std::uint32_t(src);
    push.idx = list.back().idx;
  }
  r.expect_end();
  if (!m.vts[src].empty()) throw codec::DecodeError("second barrier arrival from one rank");
  for (const auto& in : list)
    if (in.proc != std::uint32_t(src)) throw codec::DecodeError("barrier arrival carries another rank's interval");
  m.vts[src] = std::move(vt);
  m.intervals[src] = std::move(list);
  m.blobs[src].assign(blob.begin(), blob.end());
  m.allocs[src] = alloc;
  m.pushes[src] = std::move(pushes);
  m.max_protocol_bytes = std::max(m.max_protocol_bytes, bytes);
  if (++m.arrived < s.nprocs) return;

  bool mismatch = false;
  for (int p = 1; p < s.nprocs; ++p) mismatch |= m.allocs[p] != m.allocs[0];
  if (mismatch) {
    std::fprintf(stderr,
                 "dsm: ranks reached different collective calls (dsm::alloc with different sizes, or "
                 "dsm::barrier, dsm::alloc and dsm::finalize in a different order):");
    for (int p = 0; p < s.nprocs; ++p) {
      const std::uint64_t call = m.allocs[p];
      const std::string what = call == 0 ? "dsm::barrier"
                               : call == finalize_call ? "dsm::finalize"
                                                       : "dsm::alloc of " + std::to_string(call) + " bytes";
      std::fprintf(stderr, " rank %d: %s%s", p, what.c_str(), p + 1 < s.nprocs ? "," : "\n");
    }
  }
  std::uint8_t gc = m.max_protocol_bytes > s.gc.bound;
  // The manager's own departure last: it arrives at once, the others' cross the network.
  for (int k = 1; k <= s.nprocs; ++k) {
    const int r2 = k % s.nprocs;
    std::vector<const Interval*> missing;
    for (int p = 0; p < s.nprocs; ++p)
      for (const auto& in : m.intervals[p])
        if (in.idx >= m.vts[r2][p]) missing.push_back(&in);
    codec::Writer w;
    w.put(m.epoch);
    encode_list(w, missing);
    w.put<std::uint32_t>(std::uint32_t(s.nprocs));
    for (const auto& b : m.blobs) w.bytes(b);
    w.put(gc);
    w.put<std::uint8_t>(mismatch);
    std::vector<const Push*> to_r2;
    for (const auto& from : m.pushes)
      for (const auto& [reader, push] : from)
        if (reader == std::uint32_t(r2)) to_r2.push_back(&push);
    w.put<std::uint32_t>(std::uint32_t(to_r2.size()));
    for (const Push* p : to_r2) {
      w.put(p->proc);
      w.put(p->idx);
      w.put(p->page);
      w.put<std::uint8_t>(p->whole);
      w.bytes(p->data);
    }
    s.net->send(r2, barrier_depart, w.buffer());
  }
  ++m.epoch;
  m.arrived = 0;
  m.max_protocol_bytes = 0;
  for (auto& v : m.vts) v.clear();
  for (auto& p : m.pushes) p.clear();
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
    {
      std::lock_guard lk(s.mu);
      s.sync.in_barrier = true;
      for (std::size_t l = 0; s.sync.locks_in_use > 0 && l < s.sync.tokens.size(); ++l)
        check_held_through_barrier(int(l));
      w.put(s.sync.epoch);
      w.array<std::uint32_t>(s.intervals.log.vector_time());
      auto mine = s.intervals.log.since(std::uint32_t(s.me), s.intervals.last_sent);
      encode_list(w, mine);
      const Interval* newest = mine.empty() ? nullptr : mine.back();
      s.intervals.last_sent = s.intervals.log.known(std::uint32_t(s.me));
      w.bytes(s.balancer.my_blob);
      s.balancer.my_blob.clear();
      w.put(call);
      w.put<std::uint64_t>(collecting ? 0 : s.served.diff_bytes + s.intervals.log.bytes());
      encode_pushes(w, newest);
    }
    // Polling from before the send: the manager's own arrival (a message to itself) and the
    // others' are then taken by this thread, not by a service thread woken on the same core.
    if (s.poll_ns > 0) s.net->set_polling(true);
    s.net->send_lazy(0, barrier_arrive, w.buffer());
    const Reply reply = wait_inbox(barrier_depart, 0);
    std::uint8_t gc = 0, mismatch = 0;
    try {
      codec::Reader r(reply.payload());
      if (r.get<std::uint64_t>() != s.sync.epoch) throw codec::DecodeError("barrier departure out of sequence");
      auto list = decode_list(r, std::uint32_t(s.nprocs), s.heap.allocated);
      auto n = r.get<std::uint32_t>();
      if (n != std::uint32_t(s.nprocs)) throw codec::DecodeError("barrier departure with a bad rank count");
      std::vector<std::vector<std::byte>> blobs(n);
      for (auto& b : blobs) {
        auto span = r.bytes();
        b.assign(span.begin(), span.end());
      }
      gc = r.get<std::uint8_t>();
      mismatch = r.get<std::uint8_t>();
      std::vector<Push> pushes(r.count(17));
      for (auto& p : pushes) {
        p.proc = r.get<std::uint32_t>();
        p.idx = r.get<std::uint32_t>();
        p.page = r.get<std::uint32_t>();
        p.whole = r.get<std::uint8_t>() != 0;
        p.data = r.bytes();
        if (p.proc >= std::uint32_t(s.nprocs) || p.page >= s.heap.allocated || (p.whole && p.data.size() != mem::page_size))
          throw codec::DecodeError("malformed page push");
      }
      r.expect_end();
      s.balancer.blobs = std::move(blobs);
      merge(std::move(list), pushes);
    } catch (const codec::DecodeError& e) {
      fatal("rejected barrier departure: %s", e.what());
    }
    if (mismatch) fatal("ranks reached different collective calls (rank 0 names them)");
    {
      std::lock_guard lk(s.mu);
      s.sync.in_barrier = false;
      ++s.sync.epoch;
    }
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
