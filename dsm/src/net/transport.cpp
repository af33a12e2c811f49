// Setting the transport up and tearing it down, and its public face; the parts are named
// in transport_impl.hpp.
#include "net/transport.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "net/transport_impl.hpp"
#include "net/wire.hpp"

namespace dsm::net {

Transport::Impl::Impl(const job::JobEnv& e, job::Bootstrap& boot, Traffic* into)
    : env(e), traffic(into ? *into : own_traffic), sent_to(e.size) {
  prov = choose_provider(env);
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
  fab.open(prov, env);
  if (bell_mode) bells.open(env);
  for (int i = 0; i < rx_buffers; ++i) {
    rx_ops[i].kind = Op::rx_eager;
    rx_ops[i].index = i;
    post_rx(i);
  }
  fab.connect(boot, env);
  if (bell_mode && env.rank == 0) bells.unlink(env);  // every rank has mapped it by now
  next_seq.assign(env.size, 0);
  sources.resize(env.size);
  heard_ns = std::make_unique<std::atomic<std::int64_t>[]>(std::size_t(env.size));
  told_ns = std::make_unique<std::atomic<std::int64_t>[]>(std::size_t(env.size));
  const std::int64_t now = coarse_now_ns();
  for (int r = 0; r < env.size; ++r) heard_ns[r] = told_ns[r] = now;
}

Transport::Impl::~Impl() {
  end_watch();
  stop = true;
  if (service.joinable()) {
    wake(env.rank);
    service.join();
  }
  // Let sends still in flight finish, so peers get what we sent before we leave.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int round = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(pool_mu);
      std::lock_guard lock2(owned_mu);
      if (free_tx.size() == static_cast<std::size_t>(tx_buffers) && owned_ops.empty()) break;
    }
    progress();
    backoff(round);
  }
  fab.ep.owner.reset();  // cancels posted receives before the buffers go
  if (event_fd >= 0) close(event_fd);
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
void Transport::send_lazy(int dest, std::uint16_t type, std::vector<std::byte>&& payload) {
  const std::span<const std::byte> parts[] = {payload};
  impl_->send(dest, type, parts, &payload, true);
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

Payload Transport::take_payload() {
  Payload p;
  if (Impl::handed) p.large = std::move(*Impl::handed);
  if (Impl::handed_own) p.own = std::move(*Impl::handed_own);
  return p;
}

bool Transport::poll() { return impl_->service.joinable() && impl_->poll(); }

void Transport::watch_liveness(double bound_s, std::function<void(int, double)> silent) {
  if (impl_->watcher.joinable()) throw std::logic_error("dsm: Transport::watch_liveness called twice");
  impl_->watch(bound_s, std::move(silent));
}
void Transport::stop_liveness() { impl_->end_watch(); }

const Traffic& Transport::counters() const { return impl_->traffic; }
std::span<const PeerTraffic> Transport::sent_to() const { return impl_->sent_to; }

}  // namespace dsm::net
