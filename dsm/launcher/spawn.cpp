#include "spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace dsm::launcher {

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The rank's command line for the launch command: to its working directory, its variables
// set, its program. The command line is seen by every user of both hosts (ps): the token
// goes through the launcher's standard input instead, which the rank reads when DSM_TOKEN is
// "stdin".
std::string remote_line(const Environment& env, const std::vector<std::string>& command) {
  char cwd[4096] = ".";
  if (!getcwd(cwd, sizeof cwd)) std::strcpy(cwd, ".");
  std::string line = "cd " + shell_quote(cwd) + " && exec env";
  for (const auto& [k, v] : env) line += " " + k + "=" + shell_quote(k == "DSM_TOKEN" ? "stdin" : v);
  for (const auto& a : command) line.append(" ").append(shell_quote(a));
  return line;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

// Found out before any rank starts: otherwise every forked rank prints it and exits 127 while
// the others wait for it.
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

// ssh and rsh hand their arguments to the remote user's shell as one line, and so does a
// launch command that ends in `sh -c`; any other launcher (ip netns exec, docker exec, ...)
// runs its arguments as a program, so the line goes to `sh -c`.
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

void Processes::spawn(int r, const Environment& env, const std::function<int()>& rank_stdin) {
  Rank& rk = ranks_[r];
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
    argv = launch_argv(opt_.launch, rk.host, remote_line(env, opt_.command));
    if (pipe2(token_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  }
  const int child_stdin = token_pipe[0] >= 0 ? token_pipe[0] : rank_stdin();
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
    const auto token = std::find_if(env.begin(), env.end(), [](const auto& kv) { return kv.first == "DSM_TOKEN"; });
    const std::string line = token->second + "\n";  // a pipe takes 33 bytes without blocking
    [[maybe_unused]] ssize_t w = write(token_pipe[1], line.data(), line.size());
    close(token_pipe[1]);
  }
  rk.pid = pid;
  rk.running = true;
}

void Processes::abort() {
  kill_all(SIGKILL);
  for (const auto& rk : ranks_)
    if (rk.running) waitpid(rk.pid, nullptr, 0);
}

void Processes::kill_all(int sig) {
  for (auto& rk : ranks_)
    if (rk.running) kill(-rk.pid, sig);
}

void Processes::fail(int code) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = code;
  stop_since_ = std::chrono::steady_clock::now();
  kill_all(SIGTERM);
  kill_all(SIGCONT);  // a stopped rank takes the SIGTERM now, not at the SIGKILL 2 s later
}

bool Processes::any_running() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; });
}

void Processes::reap(const std::function<void(int)>& drain) {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED);
    if (pid <= 0) return;
    const auto it = std::find_if(ranks_.begin(), ranks_.end(), [pid](const Rank& rk) { return rk.pid == pid; });
    if (it == ranks_.end()) continue;
    const int r = int(it - ranks_.begin());
    Rank& rk = *it;
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
      continue;
    }
    rk.running = false;
    rk.status = status;
    kill(-pid, SIGKILL);  // helpers the rank left behind in its group
    if (stopping_) continue;
    drain(r);  // the rank's last frames may still be in the socket
    report_exit(r);
  }
}

// Fails the job, with a message, unless rank r ended well: status 0 after dsm::finalize.
void Processes::report_exit(int r) {
  const Rank& rk = ranks_[r];
  const int status = rk.status;
  // srun exits with 128 + the signal that killed its task.
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status)
                  : rk.start == Start::srun && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + NSIG
                      ? WEXITSTATUS(status) - 128
                      : 0;
  if (sig) {
    std::fprintf(stderr, "dsmrun: rank %d (pid %d) killed by signal %s%s\n", r, rk.pid,
                 sigabbrev_np(sig) ? (std::string("SIG") + sigabbrev_np(sig)).c_str() : "?",
                 rk.start == Start::srun ? (" on " + rk.host + " (srun)").c_str() : "");
    fail(128 + sig);
  } else if (WEXITSTATUS(status) != 0) {
    // A remote rank's pid is its launch command's: say so when it never joined.
    const std::string where = rk.start == Start::fork || rk.joined ? std::string()
        : " on " + rk.host + " before joining (the launch command failed or could not reach the host)";
    std::fprintf(stderr, "dsmrun: rank %d (pid %d) exited with status %d%s\n", r, rk.pid, WEXITSTATUS(status), where.c_str());
    fail(WEXITSTATUS(status));
  } else if (!rk.finalized) {
    std::fprintf(stderr, "dsmrun: rank %d (pid %d) exited without dsm::finalize\n", r, rk.pid);
    fail(1);
  }
}

void Processes::enforce_deadlines(double elapsed) {
  if (!stopping_ && elapsed > opt_.join_timeout)
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
}

}  // namespace dsm::launcher
