#include "net/transport.hpp"

#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mem/region.hpp"
#include "net/fabric_lib.hpp"
#include "net/wait_counter.hpp"
#include "net/wire.hpp"

namespace dsm::net {

namespace {

namespace bip = boost::interprocess;
using clock_type = std::chrono::steady_clock;

// Messages up to this size (header included) travel in one eager send into a posted
// buffer; larger payloads follow their header as a tagged zero-copy send.
constexpr std::size_t eager_limit = 64 << 10;
constexpr int rx_buffers = 32;
constexpr int tx_buffers = 64;
// Short: the service thread usually shares its core with the computation, which every
// microsecond of spinning takes from.
constexpr auto idle_spin = std::chrono::microseconds(3);
constexpr auto yield_window = std::chrono::milliseconds(2);
constexpr long idle_sleep_ns = 200'000'000;   // nothing in flight: sleep until woken
constexpr long busy_sleep_ns = 50'000;        // transfers in flight that need our progress
constexpr std::uint64_t max_reorder = 1 << 20;

[[noreturn]] void fail(const char* what, int rc) {
  throw std::runtime_error(std::string("dsm: libfabric ") + what + ": " + fabric::strerror(-rc));
}
void check(const char* what, int rc) {
  if (rc != 0) fail(what, rc);
}
struct FidCloser {
  void operator()(fid* f) const { fi_close(f); }
};
template <class T>
struct Fid {
  T* p = nullptr;
  std::unique_ptr<fid, FidCloser> owner;
  void reset(T* q) {
    p = q;
    owner.reset(&q->fid);
  }
};
struct InfoFree {
  void operator()(fi_info* i) const { fabric::freeinfo(i); }
};

// Doorbell of one rank in a per-job shared-memory segment (shm provider only): the shm
// provider has no wait fd, so senders wake a sleeping receiver with a futex.
struct alignas(64) Bell {
  std::atomic<std::uint32_t> ring{0};
  std::atomic<std::uint32_t> sleeping{0};
  // An application thread of this rank is polling (Transport::set_polling): it will see the
  // message, so waking the service thread would only cost two context switches.
  std::atomic<std::uint32_t> polling{0};
  // An application thread of this rank waits for a message (Transport::set_waiting):
  // messages sent with send_lazy wake it; otherwise they wait for its next wait.
  std::atomic<std::uint32_t> waiting{0};
};

}  // namespace

namespace {
// The transport whose service thread this is (a handler's sends must not wait for it).
thread_local const Transport::Impl* serving = nullptr;
}  // namespace

// Large payload buffers, kept for reuse: a fresh 1 MiB buffer costs 256 page faults (glibc
// maps and unmaps blocks that large), more than copying it.
class BufferPool;
struct ReturnToPool {
  BufferPool* pool = nullptr;
  std::size_t capacity = 0;
  void operator()(std::byte* p) const;
};
using Buffer = std::unique_ptr<std::byte[], ReturnToPool>;

class BufferPool {
 public:
  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool() {
    for (auto& [capacity, p] : free_) delete[] p;
  }
  // At least n bytes, uninitialized.
  Buffer take(std::size_t n) {
    {
      std::lock_guard lock(mu_);
      auto it = free_.lower_bound(n);
      if (it != free_.end() && it->first <= 2 * n) {
        Buffer b(it->second, {this, it->first});
        kept_ -= it->first;
        free_.erase(it);
        return b;
      }
    }
    const std::size_t capacity = (n + granule - 1) / granule * granule;
    Buffer b(new std::byte[capacity], {this, capacity});
    mem::prefault(b.get(), capacity);
    return b;
  }
  void give(std::byte* p, std::size_t capacity) {
    {
      std::lock_guard lock(mu_);
      if (kept_ + capacity <= keep_limit) {
        free_.emplace(capacity, p);
        kept_ += capacity;
        return;
      }
    }
    delete[] p;
  }

 private:
  static constexpr std::size_t granule = 64 << 10;
  static constexpr std::size_t keep_limit = 64 << 20;
  std::mutex mu_;
  std::multimap<std::size_t, std::byte*> free_;
  std::size_t kept_ = 0;
};

void ReturnToPool::operator()(std::byte* p) const { pool->give(p, capacity); }

// Context of every posted operation; a completion names it.
struct Op {
  enum Kind { rx_eager, tx_eager, tx_large_wait, tx_large_owned, rx_large } kind;
  int index = -1;                  // buffer index for eager ops
  std::atomic<bool> done{false};   // tx_large_wait
  Buffer owned;
  std::vector<std::byte> adopted;  // tx_large_owned: a payload taken over instead of copied
  std::size_t len = 0;             // completed length (rx)
  std::uint32_t src = 0;           // rx_large
  std::uint64_t seq = 0;           // rx_large
  bool failed = false;             // rx_large: the payload did not arrive whole; skipped in order
};

struct Transport::Impl {
  struct Completion {
    Op* op;
    std::size_t len;
    bool error;
    // An eager message copied out of its receive buffer by a thread waiting to send (the
    // buffer is posted again at once): its bytes, and op no longer describes it.
    bool copied = false;
    std::vector<std::byte> copy;
  };
  struct Pending {  // a message that must wait for an earlier one from the same source
    std::uint16_t type;
    std::vector<std::byte> eager;
    std::unique_ptr<Op> large;  // payload in large->owned, complete when large->done
  };
  struct Source {
    std::uint64_t next = 0;
    std::map<std::uint64_t, Pending> stash;
  };

  job::JobEnv env;
  std::string prov;
  std::uint64_t token = 0;
  bool bell_mode = false;

  // Buffers and contexts outlive the endpoint (declared first, destroyed last).
  BufferPool buffers;
  std::vector<std::byte> rx_pool, tx_pool;
  std::vector<Op> rx_ops{static_cast<std::size_t>(rx_buffers)};
  std::vector<Op> tx_ops{static_cast<std::size_t>(tx_buffers)};
  std::mutex owned_mu;
  std::map<Op*, std::unique_ptr<Op>> owned_ops;
  std::unique_ptr<bip::mapped_region> bells_region;
  Bell* bells = nullptr;
  int event_fd = -1;
  int cq_fd = -1;

  std::unique_ptr<fi_info, InfoFree> info;
  Fid<fid_fabric> fabric;
  Fid<fid_domain> domain;
  Fid<fid_av> av;
  Fid<fid_cq> cq;
  Fid<fid_ep> ep;
  std::vector<fi_addr_t> peers;
  std::size_t inject_size = 0;

  std::mutex tx_mu;  // sequence numbers
  std::vector<std::uint64_t> next_seq;
  std::mutex pool_mu;
  std::vector<int> free_tx;
  // Every call into the provider on the endpoint and its completion queue holds this. The
  // provider's own locks spin: a thread spinning on a lock held by the other thread of the
  // same core (ranks are bound to one core) spins for a whole time slice.
  std::mutex fab_mu;
  std::mutex ready_mu;
  std::deque<Completion> ready;
  std::mutex self_mu;
  std::deque<std::pair<std::uint16_t, std::vector<std::byte>>> self_queue;
  std::atomic<int> in_flight{0};  // operations whose completion needs our progress
  // tcp: while an application thread polls (set_polling), the service thread is parked on
  // event_fd alone; on the completion fd every arriving message would wake it only to find
  // that the poller took the message, and the two would contend for the socket.
  std::atomic<bool> app_polling{false};
  std::atomic<bool> parked{false};
  // shm: this rank's bell's ring when the application thread's last poll began. Senders do
  // not wake the service thread while that thread polls; a ring that moved since then, when
  // it stops, means something may have come that neither thread has seen.
  std::atomic<std::uint32_t> polled_ring{0};

  std::vector<Source> sources;
  Handler handler;
  std::mutex dispatch_mu;  // one thread at a time receives and dispatches: FIFO per source
  bool held_back = false;  // under dispatch_mu: messages taken in but not delivered
  std::thread service;
  std::atomic<bool> stop{false};
  Traffic own_traffic;
  Traffic& traffic;

  Impl(const job::JobEnv& e, job::Bootstrap& boot, Traffic* into);
  ~Impl();
  void open_endpoint();
  void open_bells();
  void post_rx(int i);
  std::size_t progress();
  void backoff(int& round);
  template <class Call>
  void post(const char* what, Call call);
  void wake(int dest);
  long sleep_ns() const;
  void block();
  void hand_off();
  void serve();
  bool poll();
  void keep_receiving();
  void take_in(const Completion& c, bool deliver);
  bool drain_ready();
  bool drain_self();
  void on_eager(std::span<const std::byte> msg, bool deliver = true);
  void on_large_done(Op& op, std::size_t len, bool deliver = true);
  void deliver_in_order(std::uint32_t src);
  void dispatch(int src, std::uint16_t type, std::span<const std::byte> payload);
  void reject(const std::string& why);
  // adopt: the payload's own buffer (one part), which the send may keep instead of copying.
  void send(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts,
            std::vector<std::byte>* adopt = nullptr, bool lazy = false);
  void post_eager(int dest, std::span<const std::byte> msg);
};

Transport::Impl::Impl(const job::JobEnv& e, job::Bootstrap& boot, Traffic* into)
    : env(e), traffic(into ? *into : own_traffic) {
  prov = env.provider.empty() ? "shm" : env.provider;
  if (prov != "shm" && prov != "tcp") throw std::runtime_error("dsm: unknown provider '" + prov + "'");
  token = token_digest(env.token);
  bell_mode = prov == "shm";
  rx_pool.resize(rx_buffers * eager_limit);
  tx_pool.resize(tx_buffers * eager_limit);
  for (int i = 0; i < tx_buffers; ++i) {
    tx_ops[i].kind = Op::tx_eager;
    tx_ops[i].index = i;
    free_tx.push_back(i);
  }
  event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd < 0) throw std::runtime_error("dsm: eventfd failed");
  open_endpoint();
  if (bell_mode) open_bells();
  for (int i = 0; i < rx_buffers; ++i) {
    rx_ops[i].kind = Op::rx_eager;
    rx_ops[i].index = i;
    post_rx(i);
  }

  std::vector<std::byte> name(256);
  std::size_t len = name.size();
  check("fi_getname", fi_getname(&ep.p->fid, name.data(), &len));
  name.resize(len);
  const auto names = boot.allgather(name);
  if (names.size() != std::size_t(env.size)) throw std::runtime_error("dsm: the rendezvous returned a wrong number of addresses");
  peers.resize(env.size);
  for (int r = 0; r < env.size; ++r) {
    // The provider reads an address of its own length (shm: up to the NUL of its name).
    const std::vector<std::byte>& a = names[r];
    const bool whole = prov == "shm" ? std::find(a.begin(), a.end(), std::byte{0}) != a.end() : a.size() == len;
    if (!whole) throw std::runtime_error("dsm: the endpoint address of rank " + std::to_string(r) + " is malformed");
    if (fi_av_insert(av.p, a.data(), 1, &peers[r], 0, nullptr) != 1)
      throw std::runtime_error("dsm: fi_av_insert failed for rank " + std::to_string(r));
  }
  if (bell_mode && env.rank == 0) bip::shared_memory_object::remove((shm_segment_prefix(env.token) + "bell").c_str());
  next_seq.assign(env.size, 0);
  sources.resize(env.size);
}

void Transport::Impl::open_endpoint() {
  // shm's messages above its inject size (4 KiB) go by default through cross-memory attach
  // (process_vm_writev), which costs 2-4x the latency of its segmented copy through shared
  // buffers in a VM (a 12 KiB barrier departure: 6.5 -> 3 us) and half the bandwidth. The
  // provider reads this when libfabric initializes, at the first fi_getinfo: here. A value
  // the user set stays.
  if (prov == "shm") setenv("FI_SHM_DISABLE_CMA", "1", 0);
  std::unique_ptr<fi_info, InfoFree> hints(fabric::allocinfo());
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED;
  hints->mode = 0;
  hints->domain_attr->mr_mode = 0;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  hints->fabric_attr->prov_name = strdup(prov == "shm" ? "shm" : "tcp;ofi_rxm");
  fi_info* got = nullptr;
  if (int rc = fabric::getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &got); rc != 0)
    throw std::runtime_error("dsm: libfabric provider " + prov + " unavailable: " + fabric::strerror(-rc));
  info.reset(got);
  inject_size = info->tx_attr->inject_size;

  fid_fabric* f;
  check("fi_fabric", fabric::open_fabric(info->fabric_attr, &f, nullptr));
  fabric.reset(f);
  fid_domain* d;
  check("fi_domain", fi_domain(fabric.p, info.get(), &d, nullptr));
  domain.reset(d);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<std::size_t>(env.size);
  fid_av* a;
  check("fi_av_open", fi_av_open(domain.p, &av_attr, &a, nullptr));
  av.reset(a);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = 1024;
  cq_attr.wait_obj = bell_mode ? FI_WAIT_NONE : FI_WAIT_FD;
  fid_cq* c;
  check("fi_cq_open", fi_cq_open(domain.p, &cq_attr, &c, nullptr));
  cq.reset(c);
  if (!bell_mode) check("fi_control(FI_GETWAIT)", fi_control(&cq.p->fid, FI_GETWAIT, &cq_fd));
  fid_ep* e;
  check("fi_endpoint", fi_endpoint(domain.p, info.get(), &e, nullptr));
  ep.reset(e);
  if (bell_mode && env.under_dsmrun) {
    // shm names its segment after the pid by default; pids are reused quickly on a busy
    // host, and a crashed rank's segment would then block a new job. Name it by job and rank
    // instead (dsmrun removes what a crashed job leaves, by this prefix).
    std::string name = shm_segment_prefix(env.token) + std::to_string(env.rank);
    check("fi_setname", fi_setname(&ep.p->fid, name.data(), name.size() + 1));
  }
  check("fi_ep_bind(av)", fi_ep_bind(ep.p, &av.p->fid, 0));
  check("fi_ep_bind(cq)", fi_ep_bind(ep.p, &cq.p->fid, FI_TRANSMIT | FI_RECV));
  check("fi_enable", fi_enable(ep.p));
}

void Transport::Impl::open_bells() {
  // Every rank of a shm job is on this host; the segment name comes from the job token and
  // is removed by rank 0 once every rank has mapped it (after the address exchange).
  const std::string name = env.under_dsmrun ? shm_segment_prefix(env.token) + "bell" : "dsm-bell-" + std::to_string(getpid());
  bip::shared_memory_object shm(bip::open_or_create, name.c_str(), bip::read_write);
  shm.truncate(static_cast<bip::offset_t>(sizeof(Bell) * env.size));
  bells_region = std::make_unique<bip::mapped_region>(shm, bip::read_write);
  bells = static_cast<Bell*>(bells_region->get_address());
  if (!env.under_dsmrun) bip::shared_memory_object::remove(name.c_str());
}

Transport::Impl::~Impl() {
  stop = true;
  if (service.joinable()) {
    wake(env.rank);
    service.join();
  }
  // Let sends still in flight finish, so peers get what we sent before we leave.
  const auto deadline = clock_type::now() + std::chrono::seconds(2);
  int round = 0;
  while (clock_type::now() < deadline) {
    {
      std::lock_guard lock(pool_mu);
      std::lock_guard lock2(owned_mu);
      if (free_tx.size() == static_cast<std::size_t>(tx_buffers) && owned_ops.empty()) break;
    }
    progress();
    backoff(round);
  }
  ep.owner.reset();  // cancels posted receives before the buffers go
  if (event_fd >= 0) close(event_fd);
}

// Posts one operation: `call` runs under fab_mu and returns the provider's code. While the
// provider is out of room (-FI_EAGAIN), makes progress and backs off; other errors throw.
template <class Call>
void Transport::Impl::post(const char* what, Call call) {
  int round = 0;
  for (;;) {
    ssize_t rc;
    {
      std::lock_guard lock(fab_mu);
      rc = call();
    }
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) fail(what, static_cast<int>(rc));
    progress();
    keep_receiving();
    backoff(round);
  }
}

void Transport::Impl::post_rx(int i) {
  post("fi_recv", [&] {
    return fi_recv(ep.p, rx_pool.data() + i * eager_limit, eager_limit, nullptr, FI_ADDR_UNSPEC, &rx_ops[i]);
  });
}

// Reads completions (either thread may); transmit completions are finished here, receive
// completions queue for the service thread.
std::size_t Transport::Impl::progress() {
  std::lock_guard lock(fab_mu);
  fi_cq_msg_entry entries[16];
  const ssize_t n = fi_cq_read(cq.p, entries, 16);
  std::vector<Completion> done;
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq.p, &err, 0) == 1 && err.op_context) {
      if (err.err != FI_ECANCELED)
        std::fprintf(stderr, "dsm: rank %d: transfer failed: %s\n", env.rank,
                     fi_cq_strerror(cq.p, err.prov_errno, err.err_data, nullptr, 0));
      done.push_back({static_cast<Op*>(err.op_context), 0, true, false, {}});
    }
  } else if (n < 0 && n != -FI_EAGAIN) {
    fail("fi_cq_read", static_cast<int>(n));
  }
  for (ssize_t i = 0; i < n; ++i) done.push_back({static_cast<Op*>(entries[i].op_context), entries[i].len, false, false, {}});
  bool queued = false;
  for (const Completion& c : done) {
    switch (c.op->kind) {
      case Op::tx_eager: {
        std::lock_guard pl(pool_mu);
        free_tx.push_back(c.op->index);
        break;
      }
      case Op::tx_large_wait:
        in_flight.fetch_sub(1);
        c.op->done.store(true, std::memory_order_release);
        break;
      case Op::tx_large_owned: {
        in_flight.fetch_sub(1);
        std::lock_guard ol(owned_mu);
        owned_ops.erase(c.op);
        break;
      }
      case Op::rx_eager:
      case Op::rx_large: {
        std::lock_guard rl(ready_mu);
        ready.push_back(c);
        queued = true;
        break;
      }
    }
  }
  if (queued && serving != this) wake(env.rank);
  return done.size();
}

// A caller that must wait for the provider spins a little, then yields for up to
// `yield_window` (a large transfer moves in that time, and yielding costs nothing when another
// thread wants the core), then naps: a nap takes 60-80 us here, longer than a 1 MiB copy.
void Transport::Impl::backoff(int& round) {
  static thread_local clock_type::time_point since;
  if (round++ == 0) since = clock_type::now();
  if (round < 50) return;
  if (round % 64 != 0 || clock_type::now() - since < yield_window) {
    sched_yield();
    return;
  }
  timespec ts{0, 20'000};
  nanosleep(&ts, nullptr);
}

void Transport::Impl::wake(int dest) {
  if (bell_mode) {
    Bell& b = bells[dest];
    b.ring.fetch_add(1, std::memory_order_seq_cst);
    if (b.sleeping.load(std::memory_order_seq_cst) && !b.polling.load(std::memory_order_seq_cst))
      futex_wake_all(b.ring, true);
  } else if (dest == env.rank) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t w = write(event_fd, &one, sizeof one);
  }
}

// How long the service thread may sleep: until woken when nothing needs its progress, a nap
// while transfers do. Read after the thread announced its sleep (Bell::sleeping, parked):
// a transfer a poller starts before that is seen here, one started after it wakes the
// thread (set_polling), so no transfer waits out the idle timeout.
long Transport::Impl::sleep_ns() const { return in_flight.load() > 0 ? busy_sleep_ns : idle_sleep_ns; }

void Transport::Impl::block() {
  auto has_work = [&] {
    std::scoped_lock lock(ready_mu, self_mu);
    return !ready.empty() || !self_queue.empty() || stop.load();
  };
  if (bell_mode) {
    Bell& b = bells[env.rank];
    b.sleeping.store(1, std::memory_order_seq_cst);
    const std::uint32_t ring = b.ring.load(std::memory_order_seq_cst);
    if (progress() == 0 && !has_work()) futex_wait(b.ring, ring, sleep_ns(), true);
    b.sleeping.store(0, std::memory_order_seq_cst);
    return;
  }
  pollfd fds[] = {{event_fd, POLLIN, 0}, {cq_fd, POLLIN, 0}};
  nfds_t nfds = 1;
  // parked is set before app_polling is read (both sequentially consistent): set_polling(false)
  // either sees parked and rings event_fd, or this thread sees the poller gone.
  parked.store(true);
  if (!app_polling.load()) {
    fid* fids[] = {&cq.p->fid};
    bool ready_to_wait;
    {
      std::lock_guard lock(fab_mu);
      ready_to_wait = fi_trywait(fabric.p, fids, 1) == FI_SUCCESS;
    }
    if (!ready_to_wait || has_work()) {
      parked.store(false);
      return;
    }
    nfds = 2;
  }
  const timespec ts{0, sleep_ns()};
  const int n = ppoll(fds, nfds, &ts, nullptr);
  parked.store(false);
  if (n > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t v;
    [[maybe_unused]] ssize_t r = read(event_fd, &v, sizeof v);
  }
}

void Transport::Impl::serve() {
  serving = this;
  // Requests wait for this thread while the rank computes on the same core: ask the
  // scheduler to run it first when it wakes (allowed for root or CAP_SYS_NICE; else ignored).
  [[maybe_unused]] int rc = setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10);
  auto last_work = clock_type::now();
  while (!stop.load(std::memory_order_relaxed)) {
    const bool worked = progress() > 0;
    bool delivered;
    {
      std::lock_guard lock(dispatch_mu);
      delivered = drain_ready() | drain_self();
    }
    if (worked || delivered) {
      last_work = clock_type::now();
      continue;
    }
    if (may_spin() && clock_type::now() - last_work < idle_spin) continue;
    block();
    last_work = clock_type::now() - idle_spin;  // after a sleep, check once and sleep again
  }
}

bool Transport::Impl::poll() {
  std::unique_lock lock(dispatch_mu, std::try_to_lock);
  if (!lock) {
    // The service thread is dispatching; on a rank bound to one core it runs only when this
    // poller lets it, so spinning here would hold up the very message being waited for.
    if (!may_spin()) sched_yield();
    return false;
  }
  if (bell_mode) polled_ring.store(bells[env.rank].ring.load(std::memory_order_seq_cst), std::memory_order_relaxed);
  const Impl* outer = serving;
  serving = this;  // like the service thread: no wake-up of ourselves, no waiting for our own progress
  bool any = progress() > 0;
  any |= drain_ready();
  any |= drain_self();
  serving = outer;
  hand_off();
  return any;
}

// Senders do not wake the service thread while the application thread polls, and what the
// poller took may have started transfers that need this rank's progress after it stops (a
// large payload it receives, a large reply it sent from a handler). The service thread
// chose its sleep before those began: it is woken to choose again, or the transfer waited
// for its idle timeout (200 ms; Jacobi under load, whenever a block moved and its pages
// came from the loaded rank). Called by the application thread after a poll and when it
// stops polling.
void Transport::Impl::hand_off() {
  const bool polling = bell_mode ? bells[env.rank].polling.load(std::memory_order_seq_cst) : app_polling.load();
  if (!polling && in_flight.load() > 0) wake(env.rank);
}

// A thread that waits for room to send keeps this rank receiving, so that a peer whose
// sends to us wait for our receive buffers (or, for a large message, for the receive we post
// when its header is taken in) can make the room ours wait for; otherwise two ranks that
// send to each other at once (replies to each other's requests) would wait for ever. The
// dispatching thread takes the waiting messages in (their order restored, large receives
// posted) and delivers them once the handler it is in returns; another thread copies them
// out of their buffers for the dispatching thread. Either way the buffers are posted again.
void Transport::Impl::keep_receiving() {
  static thread_local bool inside = false;  // posting a receive may wait, and come back here
  if (inside) return;
  inside = true;
  std::deque<Completion> taken;
  std::vector<int> repost;
  {
    std::lock_guard lock(ready_mu);
    if (serving == this) {
      taken.swap(ready);
    } else {
      for (Completion& c : ready) {
        if (c.copied || c.error || c.op->kind != Op::rx_eager) continue;
        const std::byte* at = rx_pool.data() + c.op->index * eager_limit;
        c.copy.assign(at, at + c.len);
        c.copied = true;
        repost.push_back(c.op->index);
      }
    }
  }
  for (int i : repost) post_rx(i);
  for (const Completion& c : taken) take_in(c, false);
  if (!taken.empty()) held_back = true;  // only the dispatching thread takes any in
  inside = false;
}

bool Transport::Impl::drain_ready() {
  bool any = false;
  for (;;) {
    Completion c;
    bool got = false;
    {
      std::lock_guard lock(ready_mu);
      if (!ready.empty()) {
        c = std::move(ready.front());
        ready.pop_front();
        got = true;
      }
    }
    if (!got) {
      if (!held_back) return any;
      held_back = false;  // what a waiting send took in (keep_receiving)
      for (std::uint32_t src = 0; src < sources.size(); ++src) deliver_in_order(src);
      any = true;
      continue;
    }
    any = true;
    take_in(c, true);
  }
}

// One completion of `ready`, by the dispatching thread: an eager message (whose buffer is
// posted again) or the payload of a large one; `deliver`: dispatch what is now in order.
void Transport::Impl::take_in(const Completion& c, bool deliver) {
  if (c.copied) {
    on_eager(c.copy, deliver);
  } else if (c.op->kind == Op::rx_eager) {
    if (c.error) reject("receive error");
    else on_eager({rx_pool.data() + c.op->index * eager_limit, c.len}, deliver);
    post_rx(c.op->index);
  } else {
    in_flight.fetch_sub(1);
    on_large_done(*c.op, c.error ? SIZE_MAX : c.len, deliver);
  }
}

bool Transport::Impl::drain_self() {
  bool any = false;
  for (;;) {
    std::pair<std::uint16_t, std::vector<std::byte>> m;
    {
      std::lock_guard lock(self_mu);
      if (self_queue.empty()) break;
      m = std::move(self_queue.front());
      self_queue.pop_front();
    }
    any = true;
    dispatch(env.rank, m.first, m.second);
  }
  // What a handler's waiting send took in is delivered now, not at the next message.
  if (held_back) drain_ready();
  return any;
}

void Transport::Impl::reject(const std::string& why) {
  traffic.rejected_msgs.fetch_add(1);
  std::fprintf(stderr, "dsm: rank %d dropped a message: %s\n", env.rank, why.c_str());
}

void Transport::Impl::on_eager(std::span<const std::byte> msg, bool deliver) {
  const Decoded d = decode(msg, token, static_cast<std::uint32_t>(env.size));
  if (d.error != WireError::none) return reject(std::string(to_string(d.error)));
  const Header& h = d.header;
  Source& s = sources[h.src];
  const std::string from = " (from rank " + std::to_string(h.src) + ", seq " + std::to_string(h.seq) + ")";
  if (h.seq < s.next || h.seq > s.next + max_reorder || s.stash.count(h.seq))
    return reject("out of sequence" + from);
  const auto payload = msg.subspan(header_size);
  if (!(h.flags & flag_large)) {
    if (deliver && h.seq == s.next && s.stash.empty()) {
      ++s.next;
      return dispatch(static_cast<int>(h.src), h.type, payload);
    }
    s.stash.emplace(h.seq, Pending{h.type, {payload.begin(), payload.end()}, nullptr});
    if (deliver) deliver_in_order(h.src);
    return;
  }
  auto large = std::make_unique<Op>();
  Op& op = *large;
  op.kind = Op::rx_large;
  op.src = h.src;
  op.seq = h.seq;
  op.len = h.length;
  op.owned = buffers.take(h.length);
  // Stashed before the receive is posted: posting makes progress while the provider is out
  // of room, which takes in more messages, and a second header with this sequence number
  // must then find it taken, not replace (and free) the op the receive writes into.
  s.stash.emplace(h.seq, Pending{h.type, {}, std::move(large)});
  in_flight.fetch_add(1);
  post("fi_trecv", [&] {
    return fi_trecv(ep.p, op.owned.get(), h.length, nullptr, FI_ADDR_UNSPEC, large_tag(h.src, h.seq), 0, &op);
  });
}

void Transport::Impl::on_large_done(Op& op, std::size_t len, bool deliver) {
  Source& s = sources[op.src];
  auto it = s.stash.find(op.seq);
  if (it == s.stash.end()) return;
  if (len != op.len) {
    // The payload never arrived whole: it is dropped when its turn comes, so the messages
    // after it from the same source still go out in order. (`op` lives in the stash entry.)
    reject("large payload of " + std::to_string(op.len) + " bytes arrived as " +
           std::to_string(len == SIZE_MAX ? 0 : len) + " (from rank " + std::to_string(op.src) + ")");
    op.failed = true;
  }
  op.done.store(true);
  if (deliver) deliver_in_order(op.src);
}

void Transport::Impl::deliver_in_order(std::uint32_t src) {
  Source& s = sources[src];
  while (!s.stash.empty() && s.stash.begin()->first == s.next) {
    Pending& p = s.stash.begin()->second;
    if (p.large && !p.large->done.load()) return;
    auto node = s.stash.extract(s.stash.begin());
    ++s.next;
    Pending& m = node.mapped();
    if (m.large && m.large->failed) continue;
    if (m.large) dispatch(static_cast<int>(src), m.type, {m.large->owned.get(), m.large->len});
    else dispatch(static_cast<int>(src), m.type, m.eager);
  }
}

void Transport::Impl::dispatch(int src, std::uint16_t type, std::span<const std::byte> payload) {
  traffic.msgs_received.fetch_add(1, std::memory_order_relaxed);
  traffic.bytes_received.fetch_add(payload.size(), std::memory_order_relaxed);
  handler(src, type, payload);
}

// Posts one eager message (header + payload, <= eager_limit) under tx_mu.
void Transport::Impl::post_eager(int dest, std::span<const std::byte> msg) {
  if (msg.size() <= inject_size)
    return post("fi_inject", [&] { return fi_inject(ep.p, msg.data(), msg.size(), peers[dest]); });
  int round = 0;
  int slot = -1;
  while (slot < 0) {
    {
      std::lock_guard lock(pool_mu);
      if (!free_tx.empty()) {
        slot = free_tx.back();
        free_tx.pop_back();
        break;
      }
    }
    progress();
    keep_receiving();
    backoff(round);
  }
  std::byte* buf = tx_pool.data() + slot * eager_limit;
  std::memcpy(buf, msg.data(), msg.size());
  post("fi_send", [&] { return fi_send(ep.p, buf, msg.size(), nullptr, peers[dest], &tx_ops[slot]); });
}

void Transport::Impl::send(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts,
                           std::vector<std::byte>* adopt, bool lazy) {
  if (dest < 0 || dest >= env.size)
    throw std::invalid_argument("dsm: send to rank " + std::to_string(dest) + " of " + std::to_string(env.size));
  std::size_t total = 0;
  for (auto p : parts) total += p.size();
  if (total > max_payload) throw std::invalid_argument("dsm: message larger than 4 GiB");
  traffic.msgs_sent.fetch_add(1, std::memory_order_relaxed);
  traffic.bytes_sent.fetch_add(total, std::memory_order_relaxed);
  if (dest == env.rank) {
    std::vector<std::byte> copy;
    if (adopt) {
      copy = std::move(*adopt);
    } else {
      copy.reserve(total);
      for (auto p : parts) copy.insert(copy.end(), p.begin(), p.end());
    }
    {
      std::lock_guard lock(self_mu);
      self_queue.emplace_back(type, std::move(copy));
    }
    if (serving != this) wake(env.rank);
    return;
  }
  Header h;
  h.type = type;
  h.src = static_cast<std::uint32_t>(env.rank);
  h.length = total;
  h.token = token;
  const bool large = header_size + total > eager_limit;
  if (large) h.flags = flag_large;
  const bool on_service = serving == this;
  Op wait_op;
  wait_op.kind = Op::tx_large_wait;
  Op* wait_for = nullptr;
  {
    // Only the number is taken under tx_mu (the receiver puts messages back in order): a
    // sender that waits for room must not hold up this rank's other thread, which may be
    // the one whose receiving makes the room (it posts the receive of a large reply).
    {
      std::lock_guard lock(tx_mu);
      h.seq = next_seq[dest]++;
    }
    if (!large) {
      std::byte msg[eager_limit];
      encode(h, std::span<std::byte, header_size>(msg, header_size));
      std::size_t at = header_size;
      for (auto p : parts) {
        if (!p.empty()) std::memcpy(msg + at, p.data(), p.size());
        at += p.size();
      }
      post_eager(dest, {msg, at});
    } else {
      std::byte head[header_size];
      encode(h, head);
      post_eager(dest, head);
      // The service thread cannot wait for its own progress: it sends a private copy.
      Op* op = &wait_op;
      std::vector<iovec> iov;
      for (auto p : parts)
        if (!p.empty()) iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
      if (on_service || iov.size() > info->tx_attr->iov_limit) {
        auto owned = std::make_unique<Op>();
        owned->kind = on_service ? Op::tx_large_owned : Op::tx_large_wait;
        if (adopt && on_service) {  // a reply of megabytes: no copy, no fresh pages for one
          owned->adopted = std::move(*adopt);
          iov.assign(1, {owned->adopted.data(), total});
        } else {
          owned->owned = buffers.take(total);
          std::size_t at = 0;
          for (auto& v : iov) {
            std::memcpy(owned->owned.get() + at, v.iov_base, v.iov_len);
            at += v.iov_len;
          }
          iov.assign(1, {owned->owned.get(), total});
        }
        op = owned.get();
        std::lock_guard ol(owned_mu);
        owned_ops.emplace(op, std::move(owned));
      }
      in_flight.fetch_add(1);
      post("fi_tsendv",
           [&] { return fi_tsendv(ep.p, iov.data(), nullptr, iov.size(), peers[dest], large_tag(h.src, h.seq), op); });
      if (!on_service) wait_for = op;
    }
  }
  // Lazy: the message is in the receiver's queue before its waiting flag is read, and the
  // receiver polls after raising the flag (set_waiting), so one of the two sees the other.
  // Only lazy sends pay for the fence.
  if (!lazy || !bell_mode) {
    wake(dest);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (bells[dest].waiting.load(std::memory_order_seq_cst)) wake(dest);
  }
  if (!wait_for) return;
  int round = 0;
  while (!wait_for->done.load(std::memory_order_acquire)) {
    progress();
    keep_receiving();
    backoff(round);
  }
  if (wait_for != &wait_op) {
    std::lock_guard ol(owned_mu);
    owned_ops.erase(wait_for);
  }
}

Transport::Transport(const job::JobEnv& env, job::Bootstrap& boot, Traffic* traffic)
    : impl_(std::make_unique<Impl>(env, boot, traffic)) {}
Transport::~Transport() = default;
int Transport::rank() const { return impl_->env.rank; }
int Transport::size() const { return impl_->env.size; }
std::string Transport::provider() const { return impl_->prov; }

void Transport::send(int dest, std::uint16_t type, std::span<const std::byte> payload) {
  const std::span<const std::byte> parts[] = {payload};
  impl_->send(dest, type, parts);
}
void Transport::send_owned(int dest, std::uint16_t type, std::vector<std::byte>&& payload) {
  const std::span<const std::byte> parts[] = {payload};
  impl_->send(dest, type, parts, &payload);
}
void Transport::sendv(int dest, std::uint16_t type, std::span<const std::span<const std::byte>> parts) {
  impl_->send(dest, type, parts);
}
void Transport::send_lazy(int dest, std::uint16_t type, std::span<const std::byte> payload) {
  const std::span<const std::byte> parts[] = {payload};
  impl_->send(dest, type, parts, nullptr, true);
}

void Transport::start(Handler handler) {
  if (impl_->service.joinable()) throw std::logic_error("dsm: Transport::start called twice");
  impl_->handler = std::move(handler);
  impl_->service = std::thread([this] { impl_->serve(); });
}

void Transport::set_waiting(bool on) {
  Impl& m = *impl_;
  if (m.bell_mode) m.bells[m.env.rank].waiting.store(on, std::memory_order_seq_cst);
}

void Transport::set_polling(bool on) {
  Impl& m = *impl_;
  if (m.bell_mode) {
    Bell& b = m.bells[m.env.rank];
    b.polling.store(on, std::memory_order_seq_cst);
    if (on) return;
    // A sender that rings from now on sees the flag down and wakes the service thread; one
    // that rang since the last poll began did not, and that thread may sleep through its
    // message for the idle timeout (200 ms), so this thread takes it in. (A false alarm, the
    // ring of the very message that poll found, costs one empty poll.)
    if (m.service.joinable() && b.ring.load(std::memory_order_seq_cst) != m.polled_ring.load(std::memory_order_relaxed))
      m.poll();
    m.hand_off();
    return;
  }
  m.app_polling.store(on);
  if (!on && m.parked.load()) m.wake(m.env.rank);
}

bool Transport::poll() { return impl_->service.joinable() && impl_->poll(); }

const Traffic& Transport::counters() const { return impl_->traffic; }

}  // namespace dsm::net
