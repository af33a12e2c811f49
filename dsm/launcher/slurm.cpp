#include "slurm.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace dsm::slurm {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Digits only, no sign, no overflow.
bool parse_count(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// `scontrol show hostnames` expands SLURM_JOB_NODELIST (it reads the variable itself): one
// host a line.
std::vector<std::string> expand_nodelist() {
  FILE* p = popen("scontrol show hostnames 2>&1", "r");
  if (!p) throw std::runtime_error("cannot run scontrol to expand SLURM_JOB_NODELIST");
  std::string out;
  char buf[4096];
  for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, got);
  const int status = pclose(p);
  std::vector<std::string> hosts;
  for (std::size_t at = 0; at < out.size();) {
    const auto nl = std::min(out.find('\n', at), out.size());
    if (nl > at) hosts.push_back(out.substr(at, nl - at));
    at = nl + 1;
  }
  if (status != 0 || hosts.empty())
    throw std::runtime_error("cannot expand SLURM_JOB_NODELIST='" + env("SLURM_JOB_NODELIST") + "' with `scontrol show hostnames`" +
                             (out.empty() ? std::string() : ": " + out));
  return hosts;
}

}  // namespace

bool in_allocation() { return !env("SLURM_JOB_ID").empty() && !env("SLURM_JOB_NODELIST").empty(); }

std::vector<int> expand_counts(const std::string& counts) {
  std::vector<int> out;
  std::string_view rest = counts;
  while (true) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    int count = 0;
    int times = 1;
    bool ok;
    if (const auto paren = item.find("(x"); paren != std::string_view::npos)
      ok = item.back() == ')' && parse_count(item.substr(0, paren), count) &&
           parse_count(item.substr(paren + 2, item.size() - paren - 3), times) && times > 0;
    else
      ok = parse_count(item, count);
    if (!ok) throw std::invalid_argument("malformed Slurm task counts '" + counts + "' (expected e.g. 2(x3),1)");
    out.insert(out.end(), times, count);
    if (comma == std::string_view::npos) return out;
    rest.remove_prefix(comma + 1);
  }
}

std::vector<std::string> place_ranks(int n, const std::vector<std::string>& nodes, const std::vector<int>& slots) {
  if (nodes.size() != slots.size())
    throw std::runtime_error("the Slurm allocation names " + std::to_string(nodes.size()) + " nodes but gives task counts for " +
                             std::to_string(slots.size()));
  std::vector<std::string> hosts;
  for (std::size_t i = 0; i < nodes.size() && static_cast<int>(hosts.size()) < n; ++i)
    for (int k = 0; k < slots[i] && static_cast<int>(hosts.size()) < n; ++k) hosts.push_back(nodes[i]);
  if (static_cast<int>(hosts.size()) < n) {
    int total = 0;
    for (int s : slots) total += s;
    throw std::runtime_error("-n " + std::to_string(n) + " is more ranks than this Slurm allocation allows (" +
                             std::to_string(total) + " tasks on " + std::to_string(nodes.size()) +
                             " node(s)): ask Slurm for more tasks (salloc/sbatch -n) or run fewer ranks");
  }
  return hosts;
}

std::vector<std::string> allocation_hosts(int n) {
  std::string counts = env("SLURM_TASKS_PER_NODE");
  const char* from = "SLURM_TASKS_PER_NODE";
  if (counts.empty()) {
    counts = env("SLURM_JOB_CPUS_PER_NODE");
    from = "SLURM_JOB_CPUS_PER_NODE";
  }
  if (counts.empty())
    throw std::runtime_error("inside a Slurm allocation but neither SLURM_TASKS_PER_NODE nor SLURM_JOB_CPUS_PER_NODE is set");
  std::vector<int> slots;
  try {
    slots = expand_counts(counts);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string(from) + ": " + e.what());
  }
  return place_ranks(n, expand_nodelist(), slots);
}

}  // namespace dsm::slurm
