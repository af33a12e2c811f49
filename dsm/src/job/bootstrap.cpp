#include "job/bootstrap.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "net/segments.hpp"

namespace dsm::job {

namespace {
bool write_all(int fd, const void* data, std::size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}
bool read_all(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}
void append_u32(std::vector<std::byte>& out, std::uint32_t v) {
  out.resize(out.size() + 4);
  std::memcpy(out.data() + out.size() - 4, &v, 4);
}
}  // namespace

bool write_frame(int fd, FrameKind kind, std::span<const std::byte> payload) {
  std::vector<std::byte> buf;
  buf.reserve(8 + payload.size());
  append_u32(buf, static_cast<std::uint32_t>(kind));
  append_u32(buf, static_cast<std::uint32_t>(payload.size()));
  buf.insert(buf.end(), payload.begin(), payload.end());
  return write_all(fd, buf.data(), buf.size());
}

std::optional<Frame> read_frame(int fd) {
  std::uint32_t head[2];
  if (!read_all(fd, head, sizeof head) || head[1] > max_frame) return std::nullopt;
  Frame f{static_cast<FrameKind>(head[0]), std::vector<std::byte>(head[1])};
  if (!read_all(fd, f.payload.data(), f.payload.size())) return std::nullopt;
  return f;
}

std::vector<std::byte> pack_blobs(const std::vector<std::vector<std::byte>>& blobs) {
  std::vector<std::byte> out;
  append_u32(out, static_cast<std::uint32_t>(blobs.size()));
  for (const auto& b : blobs) {
    append_u32(out, static_cast<std::uint32_t>(b.size()));
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

std::vector<std::vector<std::byte>> unpack_blobs(std::span<const std::byte> in) {
  auto take_u32 = [&] {
    if (in.size() < 4) throw std::runtime_error("dsm: truncated all-gather result");
    std::uint32_t v;
    std::memcpy(&v, in.data(), 4);
    in = in.subspan(4);
    return v;
  };
  const std::uint32_t count = take_u32();
  if (count > in.size() / 4) throw std::runtime_error("dsm: all-gather result claims more blobs than it holds");
  std::vector<std::vector<std::byte>> blobs(count);
  for (auto& b : blobs) {
    const std::uint32_t n = take_u32();
    if (in.size() < n) throw std::runtime_error("dsm: truncated all-gather result");
    b.assign(in.begin(), in.begin() + n);
    in = in.subspan(n);
  }
  return blobs;
}

Bootstrap::Bootstrap(const JobEnv& env) : env_(env) {
  if (!env.under_dsmrun) return;
  const auto colon = env.rendezvous.rfind(':');
  const std::string host = env.rendezvous.substr(0, colon), port = env.rendezvous.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("dsm: cannot resolve rendezvous " + env.rendezvous + ": " + gai_strerror(rc));
  for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  freeaddrinfo(res);
  if (fd_ < 0)
    throw std::runtime_error("dsm: cannot connect to dsmrun's rendezvous at " + env.rendezvous);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::vector<std::byte> hello;
  append_u32(hello, static_cast<std::uint32_t>(env.rank));
  const auto* t = reinterpret_cast<const std::byte*>(env.token.data());
  hello.insert(hello.end(), t, t + env.token.size());
  if (!write_frame(fd_, FrameKind::hello, hello)) {
    ::close(fd_);
    throw std::runtime_error("dsm: rendezvous at " + env.rendezvous + " closed the connection");
  }
  reader_ = std::thread([this] { watchdog(); });
}

Bootstrap::~Bootstrap() {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  ::shutdown(fd_, SHUT_RDWR);
  reader_.join();
  ::close(fd_);
}

void Bootstrap::watchdog() {
  for (;;) {
    auto f = read_frame(fd_);
    std::unique_lock lock(mu_);
    if (!f) {
      if (closing_ || acked_) return;
      std::fprintf(stderr, "dsm: rank %d lost its connection to dsmrun; exiting\n", env_.rank);
      std::fflush(stderr);
      // dsmrun removes a failed job's shm segments, but it is gone (killed): remove them
      // here (every rank is leaving) so they do not stay in /dev/shm.
      net::remove_job_segments(env_.token);
      ::_exit(70);
    }
    if (f->kind == FrameKind::gather_result) {
      try {
        results_.push_back(unpack_blobs(f->payload));
      } catch (const std::exception& e) {  // this thread has no caller to take it
        std::fprintf(stderr, "dsm: rank %d: %s\n", env_.rank, e.what());
        std::fflush(stderr);
        ::_exit(70);
      }
    } else if (f->kind == FrameKind::finalized_ack) {
      acked_ = true;
    } else {
      std::fprintf(stderr, "dsm: rank %d: unexpected frame %u from dsmrun\n", env_.rank,
                   static_cast<unsigned>(f->kind));
    }
    cv_.notify_all();
  }
}

std::vector<std::vector<std::byte>> Bootstrap::allgather(std::span<const std::byte> mine) {
  if (fd_ < 0) return {std::vector<std::byte>(mine.begin(), mine.end())};
  if (!write_frame(fd_, FrameKind::gather, mine))
    throw std::runtime_error("dsm: lost the connection to dsmrun during an all-gather");
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !results_.empty(); });
  auto out = std::move(results_.front());
  results_.pop_front();
  if (out.size() != static_cast<std::size_t>(env_.size))
    throw std::runtime_error("dsm: all-gather returned the wrong number of blobs");
  return out;
}

void Bootstrap::report_finalized(std::string_view stats_json) {
  if (fd_ < 0) return;
  const auto* p = reinterpret_cast<const std::byte*>(stats_json.data());
  if (!write_frame(fd_, FrameKind::finalized, {p, stats_json.size()}))
    throw std::runtime_error("dsm: lost the connection to dsmrun while finalizing");
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return acked_; });
}

}  // namespace dsm::job
