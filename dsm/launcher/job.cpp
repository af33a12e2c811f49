#include "job.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <stdexcept>

#include "net/segments.hpp"
#include "stats_report.hpp"

namespace dsm::launcher {

namespace {

using clock_type = std::chrono::steady_clock;

int signal_pipe[2];
void on_signal(int sig) {
  const char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t w = write(signal_pipe[1], &c, 1);
}

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

}  // namespace

Job::~Job() { net::remove_job_segments(token_); }

Environment Job::environment(int r) const {
  const Rank& rk = ranks_[r];
  // Ranks on one host decide whether they outnumber its cores: how many share it, and for
  // this host the CPUs dsmrun may use (a cpuset or taskset), not their own (--bind leaves
  // each rank one); elsewhere they count their own.
  const auto same_host = [&](const Rank& other) { return (rk.local && other.local) || other.host == rk.host; };
  RankPlace place{r, std::count_if(ranks_.begin(), ranks_.end(), same_host), std::nullopt, {}};
  if (rk.local) place.host_cpus = cpus_.size();
  else place.host = rk.host;
  return rank_environment(opt_, {rendezvous_.address(), token_, provider_}, place);
}

void Job::take_signals() {
  char sigs[64];
  const ssize_t n = read(signal_pipe[0], sigs, sizeof sigs);
  for (ssize_t i = 0; i < n; ++i)
    if (sigs[i] != SIGCHLD && !processes_.stopping()) {
      std::fprintf(stderr, "dsmrun: interrupted by signal %s; stopping all ranks\n", sigabbrev_np(sigs[i]));
      processes_.fail(128 + sigs[i]);
    }
}

void Job::watch(const std::string& label) {
  watched_ = clock_type::now();
  if (board_) show_board(*board_, label);
}

int Job::run() {
  Hosts hosts = assign_hosts(opt_);
  const auto local = std::count_if(hosts.ranks.begin(), hosts.ranks.end(), [](const Placement& p) { return p.local; });
  if (const auto available = memory_available(); available > 0)
    if (std::string why = memory_refusal(int(local), hosts.provider, available); !why.empty()) throw UsageError(why);
  provider_ = std::move(hosts.provider);
  for (auto& p : hosts.ranks) ranks_.emplace_back(std::move(p));
  warn_unknown_variables(opt_.env);
  if (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.start == Start::fork; }))
    if (const std::string why = program_problem(opt_.command.front()); !why.empty()) {
      const bool number = opt_.command.front().find_first_not_of("0123456789.") == std::string::npos;
      std::fprintf(stderr, "dsmrun: cannot run %s: %s%s\n", opt_.command.front().c_str(), why.c_str(),
                   number && opt_.watch > 0 ? " (--watch takes its period joined to it: --watch=S)" : "");
      return 127;
    }
  rendezvous_.open(opt_.rendezvous_addr, provider_ == "shm" || std::all_of(ranks_.begin(), ranks_.end(),
                                                                            [](const Rank& r) { return r.local; }));
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe failed");
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const auto start = clock_type::now();
  // The board of this host, before any rank opens it; other hosts' first rank makes theirs.
  try {
    board_ = std::make_unique<board::Board>(token_, opt_.n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsmrun: no statistics board: %s\n", e.what());
  }
  watched_ = start;
  try {
    for (int r = 0; r < opt_.n; ++r) processes_.spawn(r, environment(r), [this, r] { return stdin_.for_rank(r); });
  } catch (...) {  // the ranks already started would wait for the others until they time out
    processes_.abort();
    throw;
  }

  while (processes_.any_running()) {
    std::vector<pollfd> fds = {{signal_pipe[0], POLLIN, 0}, {rendezvous_.listen_fd(), POLLIN, 0}, stdin_.poll_entry()};
    rendezvous_.poll_fds(fds);
    poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) take_signals();
    processes_.reap([this](int r) { rendezvous_.drain(r); });
    stdin_.step(fds[2].revents);
    rendezvous_.serve(std::span(fds).subspan(3), fds[1].revents);
    if (!processes_.stopping() && opt_.timeout > 0 && seconds_since(start) > opt_.timeout) {
      std::fprintf(stderr, "dsmrun: job exceeded --timeout %g s; stopping all ranks\n", opt_.timeout);
      watch("dsmrun: where the ranks of this host were at the timeout");  // which one hangs, and where
      processes_.fail(124);
    }
    processes_.enforce_deadlines(seconds_since(start));
    if (opt_.watch > 0 && seconds_since(watched_) >= opt_.watch) watch("dsmrun --watch");
  }
  if (opt_.watch > 0) watch("dsmrun --watch (job ended)");
  stdin_.stop();
  int code = processes_.exit_code();
  if (code == 0 && (opt_.stats || !opt_.stats_json.empty())) {
    std::vector<std::string> reports;
    for (const auto& rk : ranks_) reports.push_back(rk.stats);
    if (!report_stats(reports, opt_)) code = 1;
  }
  return code;
}

}  // namespace dsm::launcher
