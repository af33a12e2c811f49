#include "rendezvous.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "options.hpp"

namespace dsm::launcher {

using namespace dsm::job;

namespace {

bool same_token(std::string_view a, std::string_view b) {  // constant time
  unsigned diff = a.size() != b.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

}  // namespace

std::string random_token() {
  unsigned char bytes[16];
  if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes) {
    std::perror("dsmrun: getrandom");
    std::exit(1);
  }
  std::string hex;
  for (unsigned char b : bytes) {
    static const char digits[] = "0123456789abcdef";
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

Rendezvous::~Rendezvous() {
  for (auto& rk : ranks_)
    if (rk.conn >= 0) close(rk.conn);
}

void Rendezvous::open(const std::string& addr_text, bool all_local) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(all_local ? INADDR_LOOPBACK : INADDR_ANY);
  // Remote ranks may not resolve this host's name to an address they can reach (network
  // namespaces, a private cluster network): --rendezvous-addr names it explicitly.
  if (!addr_text.empty() && inet_pton(AF_INET, addr_text.c_str(), &addr.sin_addr) != 1)
    throw UsageError("--rendezvous-addr " + addr_text + " is not an IPv4 address");
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 128) != 0)
    throw std::runtime_error("cannot open the rendezvous socket" + (addr_text.empty() ? std::string() : " on " + addr_text) +
                             ": " + std::strerror(errno));
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  char name[256] = "127.0.0.1";
  if (!addr_text.empty())
    std::snprintf(name, sizeof name, "%s", addr_text.c_str());
  else if (!all_local)
    gethostname(name, sizeof name - 1);
  address_ = std::string(name) + ":" + std::to_string(ntohs(addr.sin_port));
}

void Rendezvous::poll_fds(std::vector<pollfd>& fds) const {
  for (auto& [fd, t] : pending_) fds.push_back({fd, POLLIN, 0});
  for (auto& rk : ranks_)
    if (rk.conn >= 0) fds.push_back({rk.conn, POLLIN, 0});
}

void Rendezvous::serve(std::span<const pollfd> mine, short listen_revents) {
  std::size_t at = 0;
  std::vector<std::pair<int, std::chrono::steady_clock::time_point>> still;
  for (auto& [fd, t] : pending_) {
    const pollfd& p = mine[at++];
    if (p.revents) hello(fd);
    else if (std::chrono::steady_clock::now() - t > std::chrono::seconds(5)) {
      std::fprintf(stderr, "dsmrun: refused a rendezvous connection: no hello within 5 s\n");
      close(fd);
    } else still.emplace_back(fd, t);
  }
  pending_ = std::move(still);
  // Accepted after the pending connections were walked: `mine` has no entry for a new one.
  if (listen_revents & POLLIN) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      // A peer that sends part of a hello and stops must not hold the job in read().
      const timeval limit{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      pending_.emplace_back(fd, std::chrono::steady_clock::now());
    }
  }
  // A rank that joined in this call has no entry either.
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    Rank& rk = ranks_[r];
    if (rk.conn < 0 || at >= mine.size() || mine[at].fd != rk.conn) continue;
    const pollfd& p = mine[at++];
    if (!p.revents) continue;
    auto f = read_frame(rk.conn);
    if (!f) {  // the rank closed its end; its exit status decides
      close(rk.conn);
      rk.conn = -1;
      continue;
    }
    on_frame(r, *f);
  }
}

void Rendezvous::drain(int r) {
  Rank& rk = ranks_[r];
  if (rk.conn < 0) return;
  pollfd p{rk.conn, POLLIN, 0};
  while (!rk.finalized && poll(&p, 1, 0) > 0) {
    auto f = read_frame(rk.conn);
    if (!f) break;
    on_frame(r, *f);
  }
}

void Rendezvous::hello(int fd) {
  auto f = read_frame(fd);
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len);
  const std::string from = std::string(inet_ntoa(peer.sin_addr)) + ":" + std::to_string(ntohs(peer.sin_port));
  std::uint32_t r = 0;
  std::string why;
  if (!f || f->kind != FrameKind::hello || f->payload.size() < 4) {
    why = "no hello";
  } else {
    std::memcpy(&r, f->payload.data(), 4);
    const std::string_view tok(reinterpret_cast<const char*>(f->payload.data()) + 4, f->payload.size() - 4);
    if (!same_token(tok, token_)) why = "wrong token";
    else if (r >= ranks_.size()) why = "rank " + std::to_string(r) + " out of range";
    else if (ranks_[r].joined) why = "rank " + std::to_string(r) + " joined twice";
  }
  if (!why.empty()) {
    std::fprintf(stderr, "dsmrun: refused a rendezvous connection from %s: %s\n", from.c_str(), why.c_str());
    close(fd);
    return;
  }
  ranks_[r].conn = fd;
  ranks_[r].joined = true;
}

void Rendezvous::on_frame(int r, const Frame& f) {
  Rank& rk = ranks_[r];
  if (f.kind == FrameKind::gather) {
    rk.gathers.push_back(f.payload);
    if (std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& x) { return !x.gathers.empty(); })) {
      std::vector<std::vector<std::byte>> blobs;
      for (auto& x : ranks_) {
        blobs.push_back(std::move(x.gathers.front()));
        x.gathers.pop_front();
      }
      const auto packed = pack_blobs(blobs);
      for (auto& x : ranks_) write_frame(x.conn, FrameKind::gather_result, packed);
    }
  } else if (f.kind == FrameKind::finalized) {
    rk.stats.assign(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
    rk.finalized = true;
    write_frame(rk.conn, FrameKind::finalized_ack, {});
  } else {
    std::fprintf(stderr, "dsmrun: rank %d sent an unknown frame %u\n", r, static_cast<unsigned>(f.kind));
  }
}

}  // namespace dsm::launcher
