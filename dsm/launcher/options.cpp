#include "options.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <dsm/balancer.hpp>

#include "cli.hpp"
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "settings.hpp"

namespace dsm::launcher {

namespace {

// CLI::Range lets NaN through (every comparison with it is false): a --timeout nan would mean
// never.
const CLI::Validator finite_seconds(
    [](const std::string& s) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      return std::isfinite(v) ? std::string() : s + " is not a number of seconds";
    },
    "");

// Split here, not by CLI11's delimiter: that drops empty names, so that "--hosts ," would
// take the next argument, the program, as a host.
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

// Found out before the job runs, not after it.
std::string writable_file(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st{};
  if (path.empty()) return "expected a file name";
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + " is a directory";
  if (access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) != 0 : access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}

std::string known_policy(const std::string& name) {
  try {
    lb::parse_policy(name, "--lb");
    return "";
  } catch (const std::invalid_argument& e) {  // "--lb=NAME: why": CLI11 names the option
    const std::string what = e.what();
    return what.substr(what.find(": ") + 2);
  }
}

std::string env_assignment(const std::string& s) {
  if (s.find('=') == std::string::npos || s.front() == '=') return "expected K=V";
  // What dsmrun sets for each rank itself: overriding it breaks the job's start.
  const std::string name = s.substr(0, s.find('='));
  return set_for_each_rank(name) ? name + " is set by dsmrun for each rank" : "";
}

}  // namespace

std::optional<Options> parse_options(int argc, char** argv) {
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
  app.add_option("--liveness", opt.liveness,
                 "end the job when a rank hears nothing from another (not even a heartbeat) for S seconds "
                 "(0: never; default 10, or DSM_LIVENESS)")
      ->check(CLI::Range(0u, 86400u));
  app.add_option("--join-timeout", opt.join_timeout, "seconds for every rank to join the rendezvous")
      ->check(CLI::Range(0.001, 1e7))
      ->check(finite_seconds)
      ->capture_default_str();
  app.add_flag("--stats", opt.stats, "print each rank's statistics after the job");
  app.add_option("--stats-json", opt.stats_json, "write every rank's statistics as a JSON array")->check(writable_file);
  std::string watch;
  app.add_flag("--watch{2}", watch,
               "--watch[=S]: every S seconds (default 2) and at the end, print a line per rank of this host "
               "(state, messages, bytes, time in communication, barriers, locks, faults) on stderr; "
               "dsm-top shows the same for a job already running");
  app.add_option("--lb", opt.lb, "load-balancing policy (DSM_LB): static, shift, multi, locality, fgdls, auto")
      ->check(known_policy);
  app.add_option("--lb-trace", opt.lb_trace,
                 "write a CSV line per rank for every execution of every balanced loop to FILE (DSM_LB_TRACE_CSV; "
                 "scripts/plot-balance.sh draws it)")
      ->option_text("FILE")
      ->check(writable_file);
  std::string stdin_mode = "0";
  app.add_option("--stdin", stdin_mode,
                 "which rank reads dsmrun's standard input: 0 (a terminal is forwarded while dsmrun runs in "
                 "the foreground), or none (every rank reads /dev/null; for `dsmrun ... | less`)")
      ->check(CLI::IsMember({"0", "none"}))
      ->capture_default_str();
  app.add_option("--env", opt.env, "extra K=V for every rank (repeat for more)")->option_text("K=V")->allow_extra_args(false)->check(env_assignment);
  // Everything from the program on belongs to the program, even options dsmrun also has.
  app.prefix_command();
  app.footer("Usage: dsmrun -n N [options] ./prog args...");
  // mpirun's -np N, which CLI11 would read as -n p; a -np from the program on is the program's.
  std::vector<char*> args(argv, argv + argc);
  std::vector<int> np_at;
  static char long_np[] = "--np";
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "-np") == 0) args[i] = long_np, np_at.push_back(i);
  cli::parse_or_exit(app, argc, args.data());
  opt.command = app.remaining();
  // Rank 0 writes it from its own working directory, which may be another host's.
  if (!opt.lb_trace.empty()) opt.lb_trace = std::filesystem::absolute(opt.lb_trace).string();
  const int program_at = argc - int(opt.command.size());
  for (const int i : np_at)
    if (i >= program_at) opt.command[i - program_at] = argv[i];
  // CLI11 reads "--hosts=" as no value yet and takes the next argument.
  for (int i = 1; i < program_at; ++i)
    if (std::strcmp(argv[i], "--hosts=") == 0) {
      std::fprintf(stderr, "--hosts: '' has an empty host name\nRun with --help for more information.\n");
      return std::nullopt;
    }
  if (!watch.empty()) {
    char* end = nullptr;
    opt.watch = std::strtod(watch.c_str(), &end);
    if (*end || !(opt.watch > 0)) {
      std::fprintf(stderr, "dsmrun: --watch=%s: expected a number of seconds above 0\n", watch.c_str());
      return std::nullopt;
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
    return std::nullopt;
  }
  if (opt.command.empty()) {
    std::fprintf(stderr, "dsmrun: no program given\nRun with --help for more information.\n");
    return std::nullopt;
  }
  return opt;
}

}  // namespace dsm::launcher
