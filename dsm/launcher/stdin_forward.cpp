#include "stdin_forward.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dsm::launcher {

int StdinForward::for_rank(int r) {
  if (r != 0 || !to_rank0_) {
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
    return null;
  }
  // A file, a pipe, or a terminal without job control here (not dsmrun's controlling one).
  if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) < 0) return -1;
  // Read through a descriptor of dsmrun's own: non-blocking, so that when another program of
  // the foreground (`dsmrun ... | less`) takes the input first, dsmrun does not block in
  // read(), and without changing the flags of the one it shares with the shell.
  const char* name = ttyname(STDIN_FILENO);
  terminal_ = name ? open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : -1;
  if (terminal_ < 0) return -1;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  fcntl(p[1], F_SETFL, O_NONBLOCK);
  pipe_ = p[1];
  return p[0];
}

pollfd StdinForward::poll_entry() const {
  if (pipe_ >= 0 && !pending_.empty()) return {pipe_, POLLOUT, 0};
  if (pipe_ >= 0 && tcgetpgrp(terminal_) == getpgrp()) return {terminal_, POLLIN, 0};
  return {-1, 0, 0};
}

// Reads the terminal when nothing is pending, else writes to the pipe. The end of input
// (^D), or rank 0 closing its end, ends the forwarding.
void StdinForward::step(short revents) {
  if (!revents) return;
  if (pending_.empty()) {
    char buf[4096];
    const ssize_t n = read(terminal_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) return stop();
    pending_.assign(buf, n);
  }
  const ssize_t w = write(pipe_, pending_.data(), pending_.size());
  if (w > 0) pending_.erase(0, w);
  else if (errno != EAGAIN && errno != EINTR) stop();
}

void StdinForward::stop() {
  if (pipe_ >= 0) close(pipe_);
  if (terminal_ >= 0) close(terminal_);
  pipe_ = terminal_ = -1;
  pending_.clear();
}

}  // namespace dsm::launcher
