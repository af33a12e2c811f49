// dsmrun: starts the ranks of a DSM job (local fork, remote through a launch command, or srun
// inside a Slurm allocation), runs the rendezvous where they exchange addresses (authenticated
// by a per-job random token), watches them, stops the whole job when one fails, and prints
// statistics.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dsm/balancer.hpp>

#include "cli.hpp"
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "job/board.hpp"
#include "job/bootstrap.hpp"
#include "net/segments.hpp"
#include "runtime/cpus.hpp"
#include "slurm.hpp"

namespace {

using namespace dsm::job;
using namespace dsm::net;
using clock_type = std::chrono::steady_clock;

// Bad use found only once the options are read together (or the hostfile, or the
// environment): exit status 2, as for the errors CLI11 finds.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  int n = 1;
  std::vector<std::string> hosts;
  std::string hostfile;
  std::string launch = "ssh {host}";
  bool launch_given = false;
  std::string launcher = "auto";
  std::string provider = "auto";
  std::string rendezvous_addr;  // IPv4 address the rendezvous listens on and tells the ranks
  bool bind = false;
  double timeout = 0;
  double join_timeout = 60;
  bool stats = false;
  std::string stats_json;
  double watch = 0;  // seconds between two tables of the local ranks (0: no live view)
  std::string lb;
  bool stdin_to_rank0 = true;  // --stdin 0 (else none: every rank reads /dev/null)
  std::vector<std::string> env;
  std::vector<std::string> command;
};

// How a rank is started: forked here, through the launch command (ssh), or as a one-task
// srun job step on its node.
enum class Start { fork, command, srun };

struct Rank {
  std::string host;
  bool local = true;  // on this host
  Start start = Start::fork;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  int conn = -1;
  bool joined = false;
  bool finalized = false;
  std::string stats;
  std::deque<std::vector<std::byte>> gathers;
};

int signal_pipe[2];
void on_signal(int sig) {
  const char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t w = write(signal_pipe[1], &c, 1);
}

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

bool same_token(std::string_view a, std::string_view b) {  // constant time
  unsigned diff = a.size() != b.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool is_local_host(const std::string& h) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return h == "localhost" || h.rfind("127.", 0) == 0 || h == name;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The launch command with {host} replaced, followed by the rank's command line `line`. ssh and
// rsh hand their arguments to the remote user's shell as one line, and so does a launch
// command that ends in `sh -c`; any other launcher (ip netns exec, docker exec, ...) runs its
// arguments as a program, so the line goes to `sh -c`.
std::vector<std::string> launch_argv(const std::string& launch, const std::string& host, const std::string& line) {
  std::vector<std::string> argv;
  for (auto w : split_words(launch)) {
    for (auto at = w.find("{host}"); at != std::string::npos; at = w.find("{host}", at + host.size()))
      w.replace(at, 6, host);
    argv.push_back(w);
  }
  const auto base = [](const std::string& w) { return w.substr(w.rfind('/') + 1); };
  const bool shell_line = (!argv.empty() && (base(argv[0]) == "ssh" || base(argv[0]) == "rsh")) ||
                          (argv.size() >= 2 && argv.back() == "-c" && base(argv[argv.size() - 2]).ends_with("sh"));
  if (!shell_line) argv.insert(argv.end(), {"sh", "-c"});
  argv.push_back(line);
  return argv;
}

class Job {
 public:
  Job(Options o) : opt_(std::move(o)), token_(random_token()) {}
  // Ranks that died leave their shm endpoints' segments behind: remove this job's (the
  // statistics board among them).
  ~Job() { dsm::net::remove_job_segments(token_); }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  int run();

 private:
  void assign_hosts();
  Start resolve_launcher() const;
  void open_rendezvous();
  void spawn(int r);
  void accept_conn();
  void on_frame(int r, const Frame& f);
  bool hello(int fd);
  void reap();
  int rank_stdin(int r);
  void forward_stdin(short revents);
  void fail(int code);
  void kill_all(int sig);
  bool print_stats() const;  // false: --stats-json could not be written
  void show_board(const std::string& label);  // the local ranks' line each, from the board

  Options opt_;
  std::string token_;
  // The CPUs dsmrun may use: --bind spreads the ranks over these, in turn, not over the machine's.
  std::vector<int> cpus_ = dsm::sys::allowed_cpus();
  std::vector<Rank> ranks_;
  int listen_fd_ = -1;
  std::string rendezvous_;
  std::string provider_;
  std::vector<std::pair<int, clock_type::time_point>> pending_;  // connections before hello
  int exit_code_ = 0;
  bool stopping_ = false;
  clock_type::time_point stop_since_;
  bool killed_hard_ = false;
  std::unique_ptr<dsm::board::Board> board_;  // this host's statistics board
  // Rank 0 gets dsmrun's standard input, as under mpirun, but a terminal is forwarded through
  // a pipe: a rank in its own process group that read the terminal would be stopped.
  int stdin_to_rank0_ = -1;  // the pipe's write end, non-blocking
  int terminal_ = -1;  // dsmrun's own non-blocking descriptor of the terminal
  std::string stdin_pending_;  // read from the terminal, not yet taken by the pipe
  clock_type::time_point watched_;
};

// Every DSM_* variable that something reads: the runtime and the job (dsm/src), the balancer
// (balancer/model.cpp), dsmc++, and the test scripts. Any other DSM_* name is most likely a
// misspelling, which would otherwise be ignored in silence.
constexpr std::string_view known_variables[] = {
    "DSM_RANK", "DSM_SIZE", "DSM_RENDEZVOUS", "DSM_TOKEN", "DSM_PROVIDER", "DSM_HOST_RANKS",
    "DSM_HOST_CPUS", "DSM_POLL_US", "DSM_WRITE_AHEAD", "DSM_GC_BOUND", "DSM_REGION_SIZE",
    "DSM_REGION_BASE", "DSM_POPULATE", "DSM_HEAP_STEP", "DSM_DIFF_KERNEL", "DSM_LB", "DSM_LB_WARMUP",
    "DSM_LB_THRESHOLD", "DSM_LB_EVIDENCE", "DSM_LB_MIN_MOVE", "DSM_LB_HEADROOM", "DSM_LB_FILTER",
    "DSM_LB_COST_BENEFIT", "DSM_LB_CHANGE_COST", "DSM_LB_PREFETCH", "DSM_LB_BULK_WRITE",
    "DSM_LB_EXCLUSIVE", "DSM_LB_TRACE", "DSM_CXX", "DSM_SANITIZE_BUILD_TYPE", "DSM_TEST_TIME_SCALE",
    "DSM_EXPECT_MARKER", "DSM_TEST_HOST"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A warning, not an error: the ranks still run, with the setting's default.
void warn_unknown_variables(const std::vector<std::string>& extra_env) {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) names.emplace_back(*e, std::strcspn(*e, "="));
  for (const auto& kv : extra_env) names.push_back(kv.substr(0, kv.find('=')));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& name : names) {
    if (name.rfind("DSM_", 0) != 0 ||
        std::find(std::begin(known_variables), std::end(known_variables), name) != std::end(known_variables))
      continue;
    std::string_view closest;
    std::size_t best = 3;  // more edits than this is another name, not a misspelling
    for (const auto known : known_variables)
      if (const std::size_t d = edit_distance(name, known); d < best) best = d, closest = known;
    std::fprintf(stderr, "dsmrun: warning: nothing reads %s%s%.*s%s (the settings are listed in the README)\n",
                 name.c_str(), closest.empty() ? "" : "; did you mean ", int(closest.size()), closest.data(),
                 closest.empty() ? "" : "?");
  }
}

// Why execvp would fail to start the program, found out before any rank starts: otherwise
// every forked rank prints it and exits 127 while the others wait for it.
std::string program_problem(const std::string& program) {
  const auto problem = [](const std::string& path) -> int {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    return access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (program.find('/') != std::string::npos) {
    const int e = problem(program);
    return e ? std::strerror(e) : "";
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/bin:/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (problem((dir.empty() ? "." : dir) + "/" + program) == 0) return "";
  return "not found in PATH";
}

// auto: srun inside a Slurm allocation unless hosts or a launch command were given, else
// forked here and through the launch command elsewhere.
Start Job::resolve_launcher() const {
  const bool hosts_given = !opt_.hosts.empty() || !opt_.hostfile.empty();
  if (opt_.launcher == "fork") {
    if (hosts_given || opt_.launch_given)
      throw UsageError("--launcher fork starts every rank on this host: it takes no --hosts, --hostfile or --launch");
    return Start::fork;
  }
  if (opt_.launcher == "srun") {
    if (!dsm::slurm::in_allocation())
      throw UsageError("--launcher srun needs a Slurm allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST are not set): "
                       "run dsmrun inside salloc or an sbatch script");
    if (opt_.launch_given) throw UsageError("--launcher srun takes no --launch");
    return Start::srun;
  }
  if (opt_.launcher == "auto" && !hosts_given && !opt_.launch_given && dsm::slurm::in_allocation()) return Start::srun;
  return Start::command;
}

void Job::assign_hosts() {
  const Start start = resolve_launcher();
  std::vector<std::string> hosts = opt_.hosts;
  if (!opt_.hostfile.empty()) {
    std::ifstream in(opt_.hostfile);
    if (!in) throw UsageError("cannot read hostfile " + opt_.hostfile + ": " + std::strerror(errno));
    // One host per line, optionally with Open MPI's slots=N: N ranks in a row there.
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      auto words = split_words(line.substr(0, line.find('#')));
      if (words.empty()) continue;
      long slots = 1;
      for (std::size_t w = 1; w < words.size(); ++w) {
        char* end = nullptr;
        if (words[w].rfind("slots=", 0) == 0) slots = std::strtol(words[w].c_str() + 6, &end, 10);
        if (!end || *end || slots < 1 || slots > 4096)
          throw UsageError("hostfile " + opt_.hostfile + " line " + std::to_string(number) + ": '" + words[w] +
                           "' is not slots=N (N from 1 to 4096); a line is: host [slots=N]");
      }
      hosts.insert(hosts.end(), slots, words[0]);
    }
    if (hosts.empty()) throw UsageError("hostfile " + opt_.hostfile + " names no host");
  }
  if (hosts.empty() && start == Start::srun) hosts = dsm::slurm::allocation_hosts(opt_.n);
  if (hosts.empty()) hosts.push_back("localhost");
  ranks_.resize(opt_.n);
  bool all_local = true;
  for (int r = 0; r < opt_.n; ++r) {
    Rank& rk = ranks_[r];
    rk.host = hosts[r % hosts.size()];
    rk.local = is_local_host(rk.host);
    rk.start = start == Start::command && rk.local ? Start::fork : start;
    all_local &= rk.local;
  }
  provider_ = opt_.provider == "auto" ? (all_local ? "shm" : "tcp") : opt_.provider;
  if (provider_ == "shm" && !all_local)
    throw UsageError("--provider shm needs every rank on this host");
}

void Job::open_rendezvous() {
  const bool all_local = provider_ == "shm" ||
                         std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.local; });
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(all_local ? INADDR_LOOPBACK : INADDR_ANY);
  // Remote ranks may not resolve this host's name to an address they can reach (network
  // namespaces, a private cluster network): --rendezvous-addr names it explicitly.
  if (!opt_.rendezvous_addr.empty() && inet_pton(AF_INET, opt_.rendezvous_addr.c_str(), &addr.sin_addr) != 1)
    throw UsageError("--rendezvous-addr " + opt_.rendezvous_addr + " is not an IPv4 address");
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 128) != 0)
    throw std::runtime_error("cannot open the rendezvous socket" +
                             (opt_.rendezvous_addr.empty() ? std::string() : " on " + opt_.rendezvous_addr) + ": " +
                             std::strerror(errno));
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  char name[256] = "127.0.0.1";
  if (!opt_.rendezvous_addr.empty())
    std::snprintf(name, sizeof name, "%s", opt_.rendezvous_addr.c_str());
  else if (!all_local)
    gethostname(name, sizeof name - 1);
  rendezvous_ = std::string(name) + ":" + std::to_string(ntohs(addr.sin_port));
}

void Job::spawn(int r) {
  Rank& rk = ranks_[r];
  std::vector<std::pair<std::string, std::string>> env = {
      {"DSM_RANK", std::to_string(r)}, {"DSM_SIZE", std::to_string(opt_.n)},
      {"DSM_RENDEZVOUS", rendezvous_}, {"DSM_TOKEN", token_}, {"DSM_PROVIDER", provider_}};
  // Ranks on one host decide whether they outnumber its cores: how many share it, and for
  // this host the CPUs dsmrun may use (a cpuset or taskset), not their own (--bind leaves
  // each rank one); elsewhere they count their own.
  const auto same_host = [&](const Rank& other) { return (rk.local && other.local) || other.host == rk.host; };
  env.emplace_back("DSM_HOST_RANKS", std::to_string(std::count_if(ranks_.begin(), ranks_.end(), same_host)));
  if (rk.local) env.emplace_back("DSM_HOST_CPUS", std::to_string(cpus_.size()));
  if (!opt_.lb.empty()) env.emplace_back("DSM_LB", opt_.lb);
  for (const auto& kv : opt_.env) {
    const auto eq = kv.find('=');
    env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::vector<std::string> argv;
  int token_pipe[2] = {-1, -1};
  if (rk.start == Start::srun) {
    // One task on the rank's node, sharing the allocation's CPUs with the other ranks' steps
    // (--overlap: without it a step may wait for the CPUs or memory another step holds). The
    // environment set below and the working directory go along (srun's defaults).
    argv = {"srun", "--quiet", "--nodes=1", "--ntasks=1", "--overlap", "--nodelist=" + rk.host,
            "--job-name=dsm-rank" + std::to_string(r), "--"};
  }
  if (rk.start != Start::command) {
    argv.insert(argv.end(), opt_.command.begin(), opt_.command.end());
  } else {
    char cwd[4096] = ".";
    if (!getcwd(cwd, sizeof cwd)) std::strcpy(cwd, ".");
    // The command line is seen by every user of both hosts (ps): the token goes through the
    // launcher's standard input instead, which the rank reads when DSM_TOKEN is "stdin".
    std::string remote = "cd " + shell_quote(cwd) + " && exec env";
    for (const auto& [k, v] : env) remote += " " + k + "=" + shell_quote(k == "DSM_TOKEN" ? "stdin" : v);
    for (const auto& a : opt_.command) remote += " " + shell_quote(a);
    argv = launch_argv(opt_.launch, rk.host, remote);
    if (pipe2(token_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  }
  const int child_stdin = token_pipe[0] >= 0 ? token_pipe[0] : rank_stdin(r);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);  // dsmrun ignores it; `dsmrun ... | head` must stop the ranks
    if (rk.start != Start::command)
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (child_stdin >= 0) dup2(child_stdin, STDIN_FILENO);
    if (opt_.bind && rk.start == Start::fork) {
      const int cpu = cpus_[r % cpus_.size()];
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0)
        std::fprintf(stderr, "dsmrun: --bind: rank %d runs unbound: cannot bind it to CPU %d: %s\n", r, cpu,
                     std::strerror(errno));
    }
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "dsmrun: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also from here, so a kill right after fork reaches the group
  if (child_stdin >= 0) close(child_stdin);
  if (token_pipe[0] >= 0) {
    const std::string line = token_ + "\n";  // a pipe takes 33 bytes without blocking
    [[maybe_unused]] ssize_t w = write(token_pipe[1], line.data(), line.size());
    close(token_pipe[1]);
  }
  rk.pid = pid;
  rk.running = true;
}

// The descriptor the rank reads as its standard input (closed here after the fork), or -1 to
// inherit dsmrun's.
int Job::rank_stdin(int r) {
  if (r != 0 || !opt_.stdin_to_rank0) {
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
  stdin_to_rank0_ = p[1];
  return p[0];
}

// One step of the forwarding: read the terminal when nothing is pending, else write to the
// pipe. The end of input (^D), or rank 0 closing its end, ends the forwarding.
void Job::forward_stdin(short revents) {
  if (!revents) return;
  const auto stop = [this] {
    close(stdin_to_rank0_);
    close(terminal_);
    stdin_to_rank0_ = terminal_ = -1;
    stdin_pending_.clear();
  };
  if (stdin_pending_.empty()) {
    char buf[4096];
    const ssize_t n = read(terminal_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) return stop();
    stdin_pending_.assign(buf, n);
  }
  const ssize_t w = write(stdin_to_rank0_, stdin_pending_.data(), stdin_pending_.size());
  if (w > 0) stdin_pending_.erase(0, w);
  else if (errno != EAGAIN && errno != EINTR) stop();
}

bool Job::hello(int fd) {
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
    return false;
  }
  ranks_[r].conn = fd;
  ranks_[r].joined = true;
  return true;
}

void Job::on_frame(int r, const Frame& f) {
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

void Job::kill_all(int sig) {
  for (auto& rk : ranks_)
    if (rk.running) kill(-rk.pid, sig);
}

void Job::fail(int code) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = code;
  stop_since_ = clock_type::now();
  kill_all(SIGTERM);
  kill_all(SIGCONT);  // a stopped rank takes the SIGTERM now, not at the SIGKILL 2 s later
}

void Job::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED);
    if (pid <= 0) return;
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      Rank& rk = ranks_[r];
      if (rk.pid != pid) continue;
      if (WIFSTOPPED(status)) {
        // Stopped for using the terminal from outside its foreground: it would wait for ever.
        // (A rank stopped on purpose, SIGSTOP, is left to the user and --timeout.)
        const int sig = WSTOPSIG(status);
        if ((sig == SIGTTIN || sig == SIGTTOU) && !stopping_) {
          std::fprintf(stderr,
                       "dsmrun: rank %d (pid %d) was stopped by SIG%s: it %s, which a rank cannot do "
                       "(rank 0's standard input is dsmrun's)%s; stopping all ranks\n",
                       r, pid, sigabbrev_np(sig),
                       sig == SIGTTIN ? "read from the terminal" : "wrote to the terminal or changed its settings",
                       sig == SIGTTOU ? "; with `stty tostop` set, run `stty -tostop` to let ranks print" : "");
          fail(1);
        }
        break;
      }
      rk.running = false;
      rk.status = status;
      kill(-pid, SIGKILL);  // helpers the rank left behind in its group
      if (stopping_) break;
      // The rank's last frames may still be in the socket: read them first.
      if (rk.conn >= 0) {
        pollfd p{rk.conn, POLLIN, 0};
        while (!rk.finalized && poll(&p, 1, 0) > 0) {
          auto f = read_frame(rk.conn);
          if (!f) break;
          on_frame(r, *f);
        }
      }
      // srun exits with 128 + the signal that killed its task.
      const int sig = WIFSIGNALED(status) ? WTERMSIG(status)
                      : rk.start == Start::srun && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + NSIG
                          ? WEXITSTATUS(status) - 128
                          : 0;
      if (sig) {
        std::fprintf(stderr, "dsmrun: rank %d (pid %d) killed by signal %s%s\n", r, pid,
                     sigabbrev_np(sig) ? (std::string("SIG") + sigabbrev_np(sig)).c_str() : "?",
                     rk.start == Start::srun ? (" on " + rk.host + " (srun)").c_str() : "");
        fail(128 + sig);
      } else if (WEXITSTATUS(status) != 0) {
        // A remote rank's pid is its launch command's: say so when it never joined.
        const std::string where = rk.start == Start::fork || rk.joined ? std::string()
            : " on " + rk.host + " before joining (the launch command failed or could not reach the host)";
        std::fprintf(stderr, "dsmrun: rank %d (pid %d) exited with status %d%s\n", r, pid, WEXITSTATUS(status), where.c_str());
        fail(WEXITSTATUS(status));
      } else if (!rk.finalized) {
        std::fprintf(stderr, "dsmrun: rank %d (pid %d) exited without dsm::finalize\n", r, pid);
        fail(1);
      }
    }
  }
}

int Job::run() {
  assign_hosts();
  warn_unknown_variables(opt_.env);
  if (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.start == Start::fork; }))
    if (const std::string why = program_problem(opt_.command.front()); !why.empty()) {
      const bool number = opt_.command.front().find_first_not_of("0123456789.") == std::string::npos;
      std::fprintf(stderr, "dsmrun: cannot run %s: %s%s\n", opt_.command.front().c_str(), why.c_str(),
                   number && opt_.watch > 0 ? " (--watch takes its period joined to it: --watch=S)" : "");
      return 127;
    }
  open_rendezvous();
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe failed");
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const auto start = clock_type::now();
  // The board of this host, before any rank opens it; other hosts' first rank makes theirs.
  try {
    board_ = std::make_unique<dsm::board::Board>(token_, opt_.n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsmrun: no statistics board: %s\n", e.what());
  }
  watched_ = start;
  try {
    for (int r = 0; r < opt_.n; ++r) spawn(r);
  } catch (...) {  // the ranks already started would wait for the others until they time out
    kill_all(SIGKILL);
    for (const auto& rk : ranks_)
      if (rk.running) waitpid(rk.pid, nullptr, 0);
    throw;
  }

  auto seconds_since = [](clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
  };
  while (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; })) {
    // The terminal is read only while dsmrun is in the foreground (else the read stops it).
    pollfd forward{-1, 0, 0};
    if (stdin_to_rank0_ >= 0 && !stdin_pending_.empty()) forward = {stdin_to_rank0_, POLLOUT, 0};
    else if (stdin_to_rank0_ >= 0 && tcgetpgrp(terminal_) == getpgrp()) forward = {terminal_, POLLIN, 0};
    std::vector<pollfd> fds = {{signal_pipe[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}, forward};
    for (auto& [fd, t] : pending_) fds.push_back({fd, POLLIN, 0});
    for (auto& rk : ranks_)
      if (rk.conn >= 0) fds.push_back({rk.conn, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);

    if (fds[0].revents & POLLIN) {
      char sigs[64];
      const ssize_t n = read(signal_pipe[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < n; ++i)
        if (sigs[i] != SIGCHLD && !stopping_) {
          std::fprintf(stderr, "dsmrun: interrupted by signal %s; stopping all ranks\n", sigabbrev_np(sigs[i]));
          fail(128 + sigs[i]);
        }
    }
    reap();
    forward_stdin(fds[2].revents);
    std::size_t at = 3;
    std::vector<std::pair<int, clock_type::time_point>> still;
    for (auto& [fd, t] : pending_) {
      const pollfd& p = fds[at++];
      if (p.revents) hello(fd);
      else if (seconds_since(t) > 5) {
        std::fprintf(stderr, "dsmrun: refused a rendezvous connection: no hello within 5 s\n");
        close(fd);
      } else still.emplace_back(fd, t);
    }
    pending_ = std::move(still);
    // Accepted after the pending connections were walked: fds has no entry for a new one.
    if (fds[1].revents & POLLIN) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        // A peer that sends part of a hello and stops must not hold the job in read().
        const timeval limit{1, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        pending_.emplace_back(fd, clock_type::now());
      }
    }
    for (int r = 0; r < opt_.n; ++r) {
      Rank& rk = ranks_[r];
      if (rk.conn < 0 || at >= fds.size() || fds[at].fd != rk.conn) continue;
      const pollfd& p = fds[at++];
      if (!p.revents) continue;
      auto f = read_frame(rk.conn);
      if (!f) {  // the rank closed its end; its exit status decides
        close(rk.conn);
        rk.conn = -1;
        continue;
      }
      on_frame(r, *f);
    }

    if (!stopping_ && opt_.timeout > 0 && seconds_since(start) > opt_.timeout) {
      std::fprintf(stderr, "dsmrun: job exceeded --timeout %g s; stopping all ranks\n", opt_.timeout);
      show_board("dsmrun: where the ranks of this host were at the timeout");  // which one hangs, and where
      fail(124);
    }
    if (!stopping_ && seconds_since(start) > opt_.join_timeout)
      for (int r = 0; r < opt_.n && !stopping_; ++r)
        if (!ranks_[r].joined) {
          std::fprintf(stderr,
                       "dsmrun: rank %d (pid %d) did not join the rendezvous within %g s "
                       "(is it a DSM program?); stopping all ranks\n",
                       r, ranks_[r].pid, opt_.join_timeout);
          fail(1);
        }
    if (stopping_ && !killed_hard_ && seconds_since(stop_since_) > 2) {
      kill_all(SIGKILL);
      killed_hard_ = true;
    }
    if (opt_.watch > 0 && seconds_since(watched_) >= opt_.watch) show_board("dsmrun --watch");
  }
  if (opt_.watch > 0) show_board("dsmrun --watch (job ended)");
  for (auto& rk : ranks_)
    if (rk.conn >= 0) close(rk.conn);
  if (stdin_to_rank0_ >= 0) close(stdin_to_rank0_);
  if (terminal_ >= 0) close(terminal_);
  if (exit_code_ == 0 && (opt_.stats || !opt_.stats_json.empty()) && !print_stats()) exit_code_ = 1;
  return exit_code_;
}

// The local ranks' line each from the board (stderr: the program's output stays apart).
void Job::show_board(const std::string& label) {
  watched_ = clock_type::now();
  if (!board_) return;
  try {
    std::fprintf(stderr, "%s: %s", label.c_str(), dsm::board::format_table(board_->read()).c_str());
  } catch (const dsm::board::BadBoard& e) {
    std::fprintf(stderr, "%s: the statistics board %s is %s\n", label.c_str(), board_->name().c_str(), e.what());
  }
}

bool Job::print_stats() const {
  namespace pt = boost::property_tree;
  std::vector<std::string> names;
  std::vector<std::map<std::string, std::string>> values(ranks_.size());
  pt::ptree sites;  // every rank computes the same distribution: rank 0's figures tell it
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    pt::ptree tree;
    try {
      std::istringstream in(ranks_[r].stats);
      pt::read_json(in, tree);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dsmrun: rank %zu reported unreadable statistics: %s\n", r, e.what());
      continue;
    }
    if (auto counters = tree.get_child_optional("counters"))
      for (const auto& [name, v] : *counters) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        values[r][name] = v.data();
      }
    if (auto balancer = tree.get_child_optional("sections.balancer"); balancer && r == 0) sites = *balancer;
  }
  if (opt_.stats) {
    std::printf("%-24s", "counter");
    for (std::size_t r = 0; r < ranks_.size(); ++r) std::printf(" %14s", ("rank " + std::to_string(r)).c_str());
    std::printf("\n");
    for (const auto& name : names) {
      std::printf("%-24s", name.c_str());
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        auto it = values[r].find(name);
        std::printf(" %14s", it == values[r].end() ? "-" : it->second.c_str());
      }
      std::printf("\n");
    }
    for (const auto& [name, site] : sites) {
      const std::string follows = site.get("follows", "");
      std::printf("\nloop %s: policy %s, %s executions, %s redistributions, %s iterations and %s pages moved%s\n",
                  name.c_str(), site.get("policy", "?").c_str(), site.get("executions", "0").c_str(),
                  site.get("redistributions", "0").c_str(), site.get("iterations_moved", "0").c_str(),
                  site.get("pages_moved", "0").c_str(),
                  follows.empty() ? "" : ("; ranges follow loop " + follows + " (same rows, its powers)").c_str());
      if (auto per_rank = site.get_child_optional("ranks"))
        for (const auto& [unused, rank] : *per_rank) {
          std::string ranges;
          if (auto rs = rank.get_child_optional("ranges"))
            for (const auto& [unused2, range] : *rs) {
              std::vector<std::string> b;
              for (const auto& [unused3, x] : range) b.push_back(x.data());
              if (b.size() >= 2) ranges += " [" + b[0] + ", " + b[1] + ")";
            }
          std::printf("  rank %s: power %s, ranges%s\n", rank.get("rank", "?").c_str(), rank.get("power", "?").c_str(),
                      ranges.c_str());
        }
    }
  }
  if (!opt_.stats_json.empty()) {
    std::ofstream out(opt_.stats_json);
    out << "[";
    for (std::size_t r = 0; r < ranks_.size(); ++r) out << (r ? ",\n" : "\n") << ranks_[r].stats;
    out << "\n]\n";
    out.close();
    if (!out) {
      std::fprintf(stderr, "dsmrun: cannot write --stats-json %s: %s\n", opt_.stats_json.c_str(), std::strerror(errno));
      return false;
    }
  }
  return true;
}

}  // namespace

// CLI::Range lets NaN through (every comparison with it is false): a --timeout nan would mean
// never.
const CLI::Validator finite_seconds(
    [](const std::string& s) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      return std::isfinite(v) ? std::string() : s + " is not a number of seconds";
    },
    "");

// Split here, not by CLI11's delimiter: that drops empty names, and "--hosts ," then took
// the next argument, the program, as a host.
std::vector<std::string> split_hosts(const std::string& list) {
  std::vector<std::string> hosts;
  std::stringstream in(list);
  for (std::string h; std::getline(in, h, ',');) hosts.push_back(h);
  if (list.empty() || list.back() == ',') hosts.emplace_back();
  return hosts;
}
const CLI::Validator host_list(
    [](const std::string& list) {
      const auto hosts = split_hosts(list);
      return std::find(hosts.begin(), hosts.end(), "") == hosts.end() ? std::string()
                                                                       : "'" + list + "' has an empty host name";
    },
    "");

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"dsmrun: run a DSM program on N ranks (like mpirun)"};
  app.add_option("-n,--np", opt.n, "number of ranks (mpirun's -np N works too)")->required()->check(CLI::Range(1, 4096));
  std::vector<std::string> host_lists;
  auto* hosts = app.add_option("--hosts", host_lists, "hosts, comma-separated (ranks go round-robin)")->option_text("HOST,HOST,...")->allow_extra_args(false)->check(host_list);
  app.add_option("--hostfile", opt.hostfile, "file with one host per line")->excludes(hosts)->check(CLI::ExistingFile);
  auto* launch = app.add_option("--launch", opt.launch, "command that starts a remote rank; {host} is replaced")->capture_default_str();
  app.add_option("--launcher", opt.launcher,
                 "how ranks start: fork (all here), ssh (here by fork, other hosts through --launch), "
                 "srun (one job step per rank, inside a Slurm allocation), auto (srun inside an allocation "
                 "when no --hosts, --hostfile or --launch is given, else ssh)")
      ->check(CLI::IsMember({"auto", "fork", "ssh", "srun"}))
      ->capture_default_str();
  app.add_option("--provider", opt.provider, "libfabric provider")->check(CLI::IsMember({"auto", "shm", "tcp"}))->capture_default_str();
  app.add_option("--rendezvous-addr", opt.rendezvous_addr, "IPv4 address of this host that the ranks can reach (default: its name)");
  app.add_flag("--bind", opt.bind, "pin rank r to the r-th CPU (mod their number) of those dsmrun may use (forked ranks)");
  app.add_option("--timeout", opt.timeout, "stop the job after S seconds (0: never)")->check(CLI::Range(0.0, 1e7))->check(finite_seconds);
  app.add_option("--join-timeout", opt.join_timeout, "seconds for every rank to join the rendezvous")
      ->check(CLI::Range(0.001, 1e7))
      ->check(finite_seconds)
      ->capture_default_str();
  app.add_flag("--stats", opt.stats, "print each rank's statistics after the job");
  app.add_option("--stats-json", opt.stats_json, "write every rank's statistics as a JSON array")
      ->check([](const std::string& path) {
        // Found out before the job runs, not after it.
        const auto slash = path.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
        struct stat st{};
        if (path.empty()) return std::string("expected a file name");
        if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + " is a directory";
        if (access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) != 0 : access(dir.c_str(), W_OK | X_OK) != 0)
          return "cannot write " + path + ": " + std::strerror(errno);
        return std::string();
      });
  std::string watch;
  app.add_flag("--watch{2}", watch,
               "--watch[=S]: every S seconds (default 2) and at the end, print a line per rank of this host "
               "(state, messages, bytes, time in communication, barriers, locks, faults) on stderr; "
               "dsm-top shows the same for a job already running");
  app.add_option("--lb", opt.lb, "load-balancing policy (DSM_LB): static, shift, multi, locality, fgdls, auto")
      ->check([](const std::string& name) {
        try {
          dsm::lb::parse_policy(name, "--lb");
          return std::string();
        } catch (const std::invalid_argument& e) {  // "--lb=NAME: why": CLI11 names the option
          const std::string what = e.what();
          return what.substr(what.find(": ") + 2);
        }
      });
  std::string stdin_mode = "0";
  app.add_option("--stdin", stdin_mode,
                 "which rank reads dsmrun's standard input: 0 (a terminal is forwarded while dsmrun runs in "
                 "the foreground), or none (every rank reads /dev/null; for `dsmrun ... | less`)")
      ->check(CLI::IsMember({"0", "none"}))
      ->capture_default_str();
  app.add_option("--env", opt.env, "extra K=V for every rank (repeat for more)")->option_text("K=V")->allow_extra_args(false)->check([](const std::string& s) {
    if (s.find('=') == std::string::npos || s.front() == '=') return std::string("expected K=V");
    // What dsmrun sets for each rank itself: overriding it breaks the job's start.
    const std::string name = s.substr(0, s.find('='));
    for (const char* own : {"DSM_RANK", "DSM_SIZE", "DSM_TOKEN", "DSM_RENDEZVOUS", "DSM_HOST_RANKS"})
      if (name == own) return name + " is set by dsmrun for each rank";
    return std::string();
  });
  // Everything from the program on belongs to the program, even options dsmrun also has.
  app.prefix_command();
  app.footer("Usage: dsmrun -n N [options] ./prog args...");
  // mpirun's -np N, which CLI11 would read as -n p; a -np from the program on is the program's.
  std::vector<char*> args(argv, argv + argc);
  std::vector<int> np_at;
  static char long_np[] = "--np";
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "-np") == 0) args[i] = long_np, np_at.push_back(i);
  dsm::cli::parse_or_exit(app, argc, args.data());
  opt.command = app.remaining();
  const int program_at = argc - int(opt.command.size());
  for (const int i : np_at)
    if (i >= program_at) opt.command[i - program_at] = argv[i];
  // CLI11 reads "--hosts=" as no value yet and takes the next argument.
  for (int i = 1; i < program_at; ++i)
    if (std::strcmp(argv[i], "--hosts=") == 0) {
      std::fprintf(stderr, "--hosts: '' has an empty host name\nRun with --help for more information.\n");
      return 2;
    }
  if (!watch.empty()) {
    char* end = nullptr;
    opt.watch = std::strtod(watch.c_str(), &end);
    if (*end || !(opt.watch > 0)) {
      std::fprintf(stderr, "dsmrun: --watch=%s: expected a number of seconds above 0\n", watch.c_str());
      return 2;
    }
  }
  opt.launch_given = launch->count() > 0;
  opt.stdin_to_rank0 = stdin_mode == "0";
  for (const auto& list : host_lists)
    for (auto& h : split_hosts(list)) opt.hosts.push_back(std::move(h));
  if (!opt.command.empty() && opt.command.front() == "--") {
    opt.command.erase(opt.command.begin());
  } else if (!opt.command.empty() && opt.command.front().size() > 1 && opt.command.front()[0] == '-') {
    // Not one of dsmrun's options, and no program starts with '-': a typo, not a program.
    std::fprintf(stderr,
                 "dsmrun: unknown option %s (dsmrun's options come before the program; a program "
                 "whose name starts with - goes after --)\nRun with --help for more information.\n",
                 opt.command.front().c_str());
    return 2;
  }
  if (opt.command.empty()) {
    std::fprintf(stderr, "dsmrun: no program given\nRun with --help for more information.\n");
    return 2;
  }
  try {
    return Job(std::move(opt)).run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dsmrun: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsmrun: %s\n", e.what());
    return 1;
  }
}
