// Rank 0 gets dsmrun's standard input, as under mpirun, but a terminal is forwarded through
// a pipe: a rank in its own process group that read the terminal would be stopped.
#pragma once

#include <poll.h>

#include <string>

namespace dsm::launcher {

class StdinForward {
 public:
  // `to_rank0`: --stdin 0 (else none: every rank reads /dev/null).
  explicit StdinForward(bool to_rank0) : to_rank0_(to_rank0) {}
  ~StdinForward() { stop(); }
  StdinForward(const StdinForward&) = delete;
  StdinForward& operator=(const StdinForward&) = delete;

  // The descriptor rank r reads as its standard input (for its parent to close after the
  // fork), or -1 to inherit dsmrun's.
  int for_rank(int r);
  // What to poll for the next step: the pipe while data waits for it, else the terminal while
  // dsmrun is in the foreground (else the read stops it); fd -1 for neither.
  pollfd poll_entry() const;
  // One step of the forwarding, for the events of poll_entry's descriptor.
  void step(short revents);
  // Ends the forwarding: rank 0 sees the end of its input.
  void stop();

 private:
  const bool to_rank0_;
  int pipe_ = -1;      // the write end of rank 0's standard input, non-blocking
  int terminal_ = -1;  // dsmrun's own non-blocking descriptor of the terminal
  std::string pending_;  // read from the terminal, not yet taken by the pipe
};

}  // namespace dsm::launcher
