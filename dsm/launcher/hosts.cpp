#include "hosts.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "slurm.hpp"

namespace dsm::launcher {

namespace {

bool is_local_host(const std::string& h) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return h == "localhost" || h.rfind("127.", 0) == 0 || h == name;
}

// auto: srun inside a Slurm allocation unless hosts or a launch command were given, else
// forked here and through the launch command elsewhere.
Start resolve_launcher(const Options& opt) {
  const bool hosts_given = !opt.hosts.empty() || !opt.hostfile.empty();
  if (opt.launcher == "fork") {
    if (hosts_given || opt.launch_given)
      throw UsageError("--launcher fork starts every rank on this host: it takes no --hosts, --hostfile or --launch");
    return Start::fork;
  }
  if (opt.launcher == "srun") {
    if (!slurm::in_allocation())
      throw UsageError("--launcher srun needs a Slurm allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST are not set): "
                       "run dsmrun inside salloc or an sbatch script");
    if (opt.launch_given) throw UsageError("--launcher srun takes no --launch");
    return Start::srun;
  }
  if (opt.launcher == "auto" && !hosts_given && !opt.launch_given && slurm::in_allocation()) return Start::srun;
  return Start::command;
}

// One host per line, optionally with Open MPI's slots=N: N ranks in a row there.
std::vector<std::string> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read hostfile " + path + ": " + std::strerror(errno));
  std::vector<std::string> hosts;
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
        throw UsageError("hostfile " + path + " line " + std::to_string(number) + ": '" + words[w] +
                         "' is not slots=N (N from 1 to 4096); a line is: host [slots=N]");
    }
    hosts.insert(hosts.end(), slots, words[0]);
  }
  if (hosts.empty()) throw UsageError("hostfile " + path + " names no host");
  return hosts;
}

}  // namespace

std::string memory_refusal(int ranks, const std::string& provider, std::uint64_t available) {
  constexpr std::uint64_t mib = 1 << 20;
  const std::uint64_t floor = (provider == "tcp" ? 128 : 24) * mib;
  if (ranks <= 0 || std::uint64_t(ranks) * floor <= available) return {};
  const auto gib = [](std::uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(b) / double(1 << 30));
    return std::string(buf);
  };
  return std::to_string(ranks) + " ranks on this host need at least " + gib(std::uint64_t(ranks) * floor) +
         " of memory before the program allocates any (about " + std::to_string(floor / mib) + " MiB each over " +
         provider + "), and " + gib(available) + " is available: run at most " + std::to_string(available / floor) +
         " ranks here, and the others on other hosts (--hosts)";
}

std::uint64_t memory_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    std::uint64_t kib = 0;
    if (key == "MemAvailable:" && in >> kib) return kib << 10;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

Hosts assign_hosts(const Options& opt) {
  const Start start = resolve_launcher(opt);
  std::vector<std::string> hosts = opt.hosts;
  if (!opt.hostfile.empty()) {
    const auto listed = read_hostfile(opt.hostfile);
    hosts.insert(hosts.end(), listed.begin(), listed.end());
  }
  if (hosts.empty() && start == Start::srun) hosts = slurm::allocation_hosts(opt.n);
  if (hosts.empty()) hosts.push_back("localhost");
  Hosts out;
  out.ranks.resize(opt.n);
  bool all_local = true;
  for (int r = 0; r < opt.n; ++r) {
    Placement& p = out.ranks[r];
    p.host = hosts[r % hosts.size()];
    p.local = is_local_host(p.host);
    p.start = start == Start::command && p.local ? Start::fork : start;
    all_local &= p.local;
  }
  // libfabric's shm provider joins at most this many endpoints (its domain's ep_cnt, the
  // size of its address vectors); tcp runs any number on one host.
  constexpr int shm_max_ranks = 256;
  out.provider = opt.provider == "auto" ? (all_local && opt.n <= shm_max_ranks ? "shm" : "tcp") : opt.provider;
  if (out.provider == "shm" && !all_local) throw UsageError("--provider shm needs every rank on this host");
  if (out.provider == "shm" && opt.n > shm_max_ranks)
    throw UsageError("--provider shm joins at most " + std::to_string(shm_max_ranks) +
                     " ranks (libfabric's shm provider); run " + std::to_string(opt.n) +
                     " with --provider tcp (which --provider auto chooses), or over several hosts (--hosts)");
  return out;
}

}  // namespace dsm::launcher
