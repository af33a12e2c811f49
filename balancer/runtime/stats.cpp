// What the balancer reports: the trace lines of DSM_LB_TRACE (on rank 0's stderr) and its
// part of the statistics of `dsmrun --stats`.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace dsm::lb::runtime {
namespace {

// DSM_LB_TRACE_CSV's file, opened at the first line (rank 0 only); a path that cannot be
// written ends the program at once, before the work it was to trace.
std::FILE* csv_file() {
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  static const std::unique_ptr<std::FILE, Close> file = [] {
    const char* path = std::getenv("DSM_LB_TRACE_CSV");
    std::FILE* f = std::fopen(path, "w");
    if (!f) {
      std::fprintf(stderr, "dsm: DSM_LB_TRACE_CSV: cannot write '%s': %s\n", path, std::strerror(errno));
      std::exit(2);
    }
    std::fputs("time,loop,execution,rank,iterations,seconds,period,power,moved,taken\n", f);
    return std::unique_ptr<std::FILE, Close>(f);
  }();
  return file.get();
}

void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  out += '"';
}

}  // namespace

int trace_level() { return run_options().trace; }

void trace(const Site::State& st, const std::vector<RankFigures>& figs, bool moved) {
  char since[128];
  std::snprintf(since, sizeof since, " period %.3f ms, changes cost x%.1f, saved x%.2f, a page %.1f us (+%.1f us shared)",
                st.period * 1e3, change_cost_factor(st.model), change_saving_factor(st.model), glue().page_seconds * 1e6,
                glue().shared_seconds * 1e6);
  std::string line = st.name + " #" + std::to_string(st.execution) + (moved ? " moved:" : ":") + since;
  const std::vector<double> power = relative_power(st.model);
  for (std::size_t r = 0; r < figs.size(); ++r) {
    double taken = 0, cpu = 0;
    for (double t : figs[r].wall) taken += t;
    for (double c : figs[r].cpu) cpu += c;
    char shared[48] = "";
    if (figs[r].core_shared) std::snprintf(shared, sizeof shared, ", core shared, got %.2f", figs[r].share);
    char buf[200];
    std::snprintf(buf, sizeof buf, " | r%zu %.3f ms (cpu %.3f%s) power %.3f spans", r, taken * 1e3, cpu * 1e3, shared,
                  r < power.size() ? power[r] : 0.0);
    line += buf;
    for (const Span& sp : st.model.assign[r]) line += " [" + std::to_string(sp.begin) + "," + std::to_string(sp.end) + ")";
  }
  line += std::string(" | ") + verdict_name(st.model.verdict);
  if (st.model.verdict == Verdict::kept || st.model.verdict == Verdict::dear) {
    char over[48];
    std::snprintf(over, sizeof over, " over %.0f executions", st.model.horizon);
    line += over;
  }
  std::fprintf(stderr, "dsm-lb: %s\n", line.c_str());
}

bool trace_csv_on() {
  static const bool on = [] {
    const char* path = std::getenv("DSM_LB_TRACE_CSV");
    return path && *path;
  }();
  return on;
}

namespace {

// Iterations of `spans` outside `within` (both sorted and apart).
long outside(const std::vector<Span>& spans, const std::vector<Span>& within) {
  long out = 0;
  std::size_t w = 0;
  for (const Span& s : spans) {
    long inside = 0;
    while (w < within.size() && within[w].end <= s.begin) ++w;
    for (std::size_t k = w; k < within.size() && within[k].begin < s.end; ++k)
      inside += std::min(s.end, within[k].end) - std::max(s.begin, within[k].begin);
    out += s.size() - inside;
  }
  return out;
}

}  // namespace

void trace_csv(const Site::State& st, const Assignment& decided, const Assignment& ran,
               const std::vector<RankFigures>& figs, bool moved) {
  if (ran.size() != figs.size()) return;
  std::FILE* f = csv_file();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::vector<double> power = relative_power(st.model);
  std::string loop = st.name;  // a CSV field: quoted where the name needs it
  if (loop.find_first_of(",\"") != std::string::npos) {
    std::string q = "\"";
    for (char c : loop) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    loop = q + "\"";
  }
  for (std::size_t r = 0; r < figs.size(); ++r) {
    long iterations = 0;
    double seconds = 0;
    for (const Span& sp : ran[r]) iterations += sp.size();
    for (double t : figs[r].wall) seconds += t;
    const long taken = r < decided.size() ? outside(ran[r], decided[r]) : 0;
    std::fprintf(f, "%.6f,%s,%llu,%zu,%ld,%.9f,%.9f,%.4f,%d,%ld\n", now, loop.c_str(),
                 static_cast<unsigned long long>(st.execution - 1), r, iterations, seconds, st.period,
                 r < power.size() ? power[r] : 0.0, moved ? 1 : 0, taken);
  }
}

// An object with one entry per loop site: executions, redistributions, iterations and pages moved, this
// rank's time in its ranges, and each rank's power, last times and final ranges; and one per pipelined nest.
std::string stats_json() {
  std::string out = "{";
  bool first = true;
  for (const Site::State* st : glue().sites) {
    const SiteModel& m = st->model;
    if (!first) out += ", ";
    first = false;
    json_string(out, st->name);
    char head[256];
    std::snprintf(head, sizeof head,
                  ": {\"policy\": \"%s\", \"executions\": %ld, \"redistributions\": %ld, \"iterations_moved\": %ld, "
                  "\"pages_moved\": %ld, ",
                  st->resolved ? policy_name(m.opt.policy) : "none", m.executions, m.redistributions,
                  m.iterations_moved, m.pages_moved);
    out += head;
    long inspections = 0;
    for (const Inspection& in : st->inspections) inspections += in.made;
    if (inspections > 0) out += "\"inspections\": " + std::to_string(inspections) + ", ";
    if (!m.costs.empty()) out += "\"weighed\": \"nonzeros\", ";
    if (m.solo.stage == SiteModel::Solo::Stage::alone) out += "\"alone\": " + std::to_string(m.solo.rank) + ", ";
    char own[64];  // this rank's alone: the launcher puts every rank's together
    std::snprintf(own, sizeof own, "\"in_ranges\": %.6f, ", st->in_ranges);
    out += own;
    if (st->takes > 0)  // this rank's, like in_ranges
      out += "\"takes\": " + std::to_string(st->takes) + ", \"iterations_taken\": " + std::to_string(st->iterations_taken) + ", ";
    if (st->follows) {  // its ranks were never measured: the leader's powers decide
      out += "\"follows\": ";
      json_string(out, st->follows->name);
      out += ", ";
    }
    out += "\"ranks\": [";
    const std::vector<double> power = relative_power(st->follows ? st->follows->model : m);
    for (std::size_t r = 0; r < m.assign.size(); ++r) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s{\"rank\": %zu, \"power\": %.4f, \"wall\": %.6f, \"cpu\": %.6f, \"ranges\": [",
                    r ? ", " : "", r, r < power.size() ? power[r] : 0.0, r < m.last_wall.size() ? m.last_wall[r] : 0.0,
                    r < m.last_cpu.size() ? m.last_cpu[r] : 0.0);
      out += buf;
      bool first_range = true;
      for (const Range& range : to_ranges(m.assign[r], st->lb, st->ub, st->step)) {
        std::snprintf(buf, sizeof buf, "%s[%ld, %ld, %ld]", first_range ? "" : ", ", range.lb, range.ub, range.step);
        out += buf;
        first_range = false;
      }
      out += "]}";
    }
    out += "]}";
  }
  // Pipelined nests, by "pipeline NAME": this rank's grain and last sweep, every rank's rows.
  for (const Pipeline* p : glue().pipelines) {
    if (!first) out += ", ";
    first = false;
    json_string(out, "pipeline " + p->name());
    const SweepFigures& f = p->last();
    char head[384];
    std::snprintf(head, sizeof head,
                  ": {\"pipeline\": {\"sweeps\": %llu, \"grain\": %ld, \"tiles\": %ld, \"compute\": %.6f, \"wait\": %.6f, "
                  "\"messages\": %.6f, \"departures\": %ld, \"returns\": %ld, \"rows\": [",
                  static_cast<unsigned long long>(p->sweeps()), f.grain, f.tiles, f.compute_s, f.wait_s, f.messages_s,
                  p->departures(), p->returns());
    out += head;
    for (int r = 0; r < nprocs(); ++r) {
      long rows = 0;
      for (const Range& b : p->rows_of(r)) rows += b.ub - b.lb;
      out += (r ? ", " : "") + std::to_string(rows);
    }
    out += "]}}";
  }
  return out + "}";
}

}  // namespace dsm::lb::runtime
