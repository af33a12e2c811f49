#include "stats_report.hpp"

// Boost's JSON parser includes the old <boost/bind.hpp>, which without this prints a
// deprecation note in every build.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace dsm::launcher {

namespace {

namespace pt = boost::property_tree;

// Per loop, what each rank reports of itself: its wall time inside its ranges over the run
// (seconds, as reported) and the chunks and iterations it took from other ranks.
struct Own {
  double in_ranges = 0;
  bool timed = false;
  long takes = 0, iterations_taken = 0;
};
using InRanges = std::map<std::string, std::map<std::size_t, Own>>;

// One line per loop the balancer saw, then each rank's power, ranges, and time in them.
void print_sites(const pt::ptree& sites, const InRanges& in_ranges) {
  for (const auto& [name, site] : sites) {
    if (auto pipe = site.get_child_optional("pipeline")) {  // a pipelined nest: rank 0's grain
      std::printf("\n%s: %s sweeps, grain %s columns (rank 0), last sweep %s tiles, %s s computing, %s s waiting, "
                  "%s s in messages\n",
                  name.c_str(), pipe->get("sweeps", "0").c_str(), pipe->get("grain", "?").c_str(),
                  pipe->get("tiles", "?").c_str(), pipe->get("compute", "?").c_str(), pipe->get("wait", "?").c_str(),
                  pipe->get("messages", "?").c_str());
      std::string rows;
      if (auto per_rank = pipe->get_child_optional("rows"))
        for (const auto& [unused, x] : *per_rank) rows += " " + x.data();
      std::printf("  rows by rank:%s\n", rows.c_str());
      if (const std::string left = pipe->get("departures", "0"); left != "0")
        std::printf("  a rank left the pipeline %s times, came back %s times\n", left.c_str(),
                    pipe->get("returns", "0").c_str());
      continue;
    }
    const std::string follows = site.get("follows", ""), inspections = site.get("inspections", ""),
                      alone = site.get("alone", "");
    std::printf("\nloop %s: policy %s, %s executions, %s redistributions, %s iterations and %s pages moved%s%s%s%s\n",
                name.c_str(), site.get("policy", "?").c_str(), site.get("executions", "0").c_str(),
                site.get("redistributions", "0").c_str(), site.get("iterations_moved", "0").c_str(),
                site.get("pages_moved", "0").c_str(),
                site.get_optional<std::string>("weighed") ? "; rows weighed by their nonzeros" : "",
                inspections.empty() ? "" : ("; " + inspections + " inspections of its reads through index arrays").c_str(),
                follows.empty() ? "" : ("; ranges follow loop " + follows + " (same rows, its powers)").c_str(),
                alone.empty() ? "" : ("; run by rank " + alone + " alone, measured faster than split").c_str());
    const auto found = in_ranges.find(name);
    const double executions = site.get("executions", 0.0);
    // Rank r's time in the loop's ranges as `before`, the seconds, `what`, and per execution.
    auto time_of = [&](std::size_t r, const char* before, const char* what) -> std::string {
      if (found == in_ranges.end() || !found->second.count(r)) return "";
      const Own& own = found->second.at(r);
      char buf[192];
      int n = own.timed ? std::snprintf(buf, sizeof buf, "%s%.4g s%s (%.4g ms an execution)", before, own.in_ranges, what,
                                        executions > 0 ? own.in_ranges / executions * 1e3 : 0.0)
                        : std::snprintf(buf, sizeof buf, "%s", "");
      if (own.takes > 0)
        std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "; took %ld chunks (%ld iterations) from other ranks",
                      own.takes, own.iterations_taken);
      return buf;
    };
    if (auto per_rank = site.get_child_optional("ranks"); per_rank && !per_rank->empty())
      for (const auto& [unused, rank] : *per_rank) {
        std::string ranges;
        if (auto rs = rank.get_child_optional("ranges"))
          for (const auto& [unused2, range] : *rs) {
            std::vector<std::string> b;
            for (const auto& [unused3, x] : range) b.push_back(x.data());
            if (b.size() >= 2) ranges += " [" + b[0] + ", " + b[1] + ")";
          }
        const auto r = rank.get_optional<std::size_t>("rank");
        std::printf("  rank %s: power %s, ranges%s%s\n", rank.get("rank", "?").c_str(), rank.get("power", "?").c_str(),
                    ranges.c_str(), r ? time_of(*r, "; ", " in them").c_str() : "");
      }
    else if (found != in_ranges.end())  // a job of one rank: nothing to balance, the time all the same
      for (const auto& [r, unused] : found->second)
        std::printf("  rank %zu: %s\n", r, time_of(r, "", " in its ranges").c_str());
  }
}

// The counters of every rank, by name in the order first seen, the bytes it sent to each
// rank, and the balancer's loops.
struct Table {
  std::vector<std::string> names;
  std::vector<std::map<std::string, std::string>> values;  // by rank
  std::vector<std::vector<std::string>> bytes_to;          // by sender, then by destination
  pt::ptree sites;  // every rank computes the same distribution: rank 0's figures tell it
  InRanges in_ranges;  // ... but times in the ranges are each rank's own
};

// The table of bytes sent to each rank has a row per rank as well as a column: beyond this
// many ranks it would outgrow the rest of the report (--stats-json has it at any size).
constexpr std::size_t bytes_to_max_ranks = 16;

// Says on stderr which reports are not JSON.
Table read_reports(const std::vector<std::string>& reports) {
  Table t;
  t.values.resize(reports.size());
  t.bytes_to.resize(reports.size());
  for (std::size_t r = 0; r < reports.size(); ++r) {
    pt::ptree tree;
    try {
      std::istringstream in(reports[r]);
      pt::read_json(in, tree);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dsmrun: rank %zu reported unreadable statistics: %s\n", r, e.what());
      continue;
    }
    if (auto counters = tree.get_child_optional("counters"))
      for (const auto& [name, v] : *counters) {
        if (std::find(t.names.begin(), t.names.end(), name) == t.names.end()) t.names.push_back(name);
        t.values[r][name] = v.data();
      }
    if (auto bytes = tree.get_child_optional("sent_to.bytes"))
      for (const auto& [unused, b] : *bytes) t.bytes_to[r].push_back(b.data());
    if (auto balancer = tree.get_child_optional("sections.balancer")) {
      if (r == 0) t.sites = *balancer;
      for (const auto& [name, site] : *balancer) {
        Own& own = t.in_ranges[name][r];
        if (auto seconds = site.get_optional<double>("in_ranges")) own.in_ranges = *seconds, own.timed = true;
        own.takes = site.get("takes", 0L);
        own.iterations_taken = site.get("iterations_taken", 0L);
      }
    }
  }
  return t;
}

// A header line: `label`, then a column per rank.
void print_ranks(const char* label, std::size_t nranks) {
  std::printf("%-24s", label);
  for (std::size_t r = 0; r < nranks; ++r) std::printf(" %14s", ("rank " + std::to_string(r)).c_str());
  std::printf("\n");
}

// A column per sender, a row per destination. A rank without a transport (a job of one)
// reports none.
void print_bytes_to(const Table& t) {
  std::size_t rows = 0;
  for (const auto& to : t.bytes_to) rows = std::max(rows, to.size());
  if (rows == 0 || t.bytes_to.size() > bytes_to_max_ranks) return;
  std::printf("\n");
  print_ranks("bytes sent", t.bytes_to.size());
  for (std::size_t dest = 0; dest < rows; ++dest) {
    std::printf("%-24s", ("to rank " + std::to_string(dest)).c_str());
    for (const auto& to : t.bytes_to) std::printf(" %14s", dest < to.size() ? to[dest].c_str() : "-");
    std::printf("\n");
  }
}

void print_table(const Table& t) {
  print_ranks("counter", t.values.size());
  for (const auto& name : t.names) {
    std::printf("%-24s", name.c_str());
    for (const auto& rank : t.values) {
      auto it = rank.find(name);
      std::printf(" %14s", it == rank.end() ? "-" : it->second.c_str());
    }
    std::printf("\n");
  }
  print_bytes_to(t);
  print_sites(t.sites, t.in_ranges);
}

bool write_json(const std::vector<std::string>& reports, const std::string& path) {
  std::ofstream out(path);
  out << "[";
  for (std::size_t r = 0; r < reports.size(); ++r) out << (r ? ",\n" : "\n") << reports[r];
  out << "\n]\n";
  out.close();
  if (!out) {
    std::fprintf(stderr, "dsmrun: cannot write --stats-json %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

bool report_stats(const std::vector<std::string>& reports, const Options& opt) {
  const Table table = read_reports(reports);
  if (opt.stats) print_table(table);
  return opt.stats_json.empty() || write_json(reports, opt.stats_json);
}

void show_board(const board::Board& board, const std::string& label) {
  try {
    std::fprintf(stderr, "%s: %s", label.c_str(), board::format_table(board.read()).c_str());
  } catch (const board::BadBoard& e) {
    std::fprintf(stderr, "%s: the statistics board %s is %s\n", label.c_str(), board.name().c_str(), e.what());
  }
}

}  // namespace dsm::launcher
