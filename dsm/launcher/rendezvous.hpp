// The rendezvous: the ranks connect to dsmrun, prove with the job's token that they belong to
// it, and through it exchange the blobs of gathers (their addresses among them) and report
// their statistics at dsm::finalize.
#pragma once

#include <poll.h>

#include <chrono>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "job/bootstrap.hpp"
#include "rank.hpp"

namespace dsm::launcher {

// A per-job random token: 32 hex digits.
std::string random_token();

class Rendezvous {
 public:
  Rendezvous(std::vector<Rank>& ranks, std::string token) : ranks_(ranks), token_(std::move(token)) {}
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // Listens on the loopback when `all_local`, else on every address or on `addr` (IPv4)
  // when given. Throws UsageError for an `addr` that is not one.
  void open(const std::string& addr, bool all_local);
  // host:port, as the ranks reach it.
  const std::string& address() const { return address_; }
  int listen_fd() const { return listen_fd_; }

  // Appends what to poll: connections waiting for their hello, then the ranks'.
  void poll_fds(std::vector<pollfd>& fds) const;
  // Serves one poll: `mine`, the entries poll_fds appended, and the listening socket's events.
  void serve(std::span<const pollfd> mine, short listen_revents);
  // Reads what rank r sent before it ended.
  void drain(int r);

 private:
  void hello(int fd);
  void on_frame(int r, const job::Frame& f);

  std::vector<Rank>& ranks_;
  const std::string token_;
  int listen_fd_ = -1;
  std::string address_;
  std::vector<std::pair<int, std::chrono::steady_clock::time_point>> pending_;  // connections before hello
};

}  // namespace dsm::launcher
