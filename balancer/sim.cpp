#include "sim.hpp"

#include "decide.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace dsm::lb {
namespace {

// Work (seconds at full speed) of iterations [b, e).
double work_of(const SimConfig& c, long b, long e) {
  if (!c.triangular) return c.iteration_seconds * static_cast<double>(e - b);
  const double n = static_cast<double>(c.iterations);
  auto tri = [](double k) { return k * (k - 1) / 2; };
  return c.iteration_seconds * 2 / n * (tri(static_cast<double>(e)) - tri(static_cast<double>(b)));
}

// CPU share of every rank in execution `e`.
class LoadModel {
 public:
  explicit LoadModel(const SimConfig& c) : c_(c), rng_(c.seed), on_(c.ranks, false), phase_(c.ranks, 0) {
    const int loaded = c.load == Load::none ? 0 : std::max(1, static_cast<int>(c.ranks * c.loaded_fraction));
    loaded_.assign(c.ranks, false);
    for (int r = 0; r < loaded; ++r) loaded_[static_cast<std::size_t>(r) * c.ranks / loaded] = true;
    std::uniform_int_distribution<int> ph(0, std::max(1, c.period) - 1);
    for (int r = 0; r < c.ranks; ++r) {
      phase_[r] = ph(rng_);
      on_[r] = loaded_[r];
    }
  }
  std::vector<double> shares(int e) {
    std::vector<double> s(c_.ranks, 1.0);
    std::bernoulli_distribution flip(2.0 / std::max(2, c_.period));
    for (int r = 0; r < c_.ranks; ++r) {
      if (!loaded_[r]) continue;
      if (c_.load == Load::onoff) on_[r] = (e + phase_[r]) % std::max(2, c_.period) < c_.period / 2;
      if (c_.load == Load::random && flip(rng_)) on_[r] = !on_[r];
      if (on_[r]) s[r] = c_.load_share;
    }
    return s;
  }

 private:
  const SimConfig& c_;
  std::mt19937_64 rng_;
  std::vector<bool> loaded_, on_;
  std::vector<int> phase_;
};

Geometry sim_geometry(const SimConfig& c) {
  Geometry g;
  WriteSection w;
  w.base = 0;
  w.elem = 1;
  w.coef = c.row_bytes;
  w.lo = 0;
  w.hi = c.row_bytes - 1;
  w.holders.assign(static_cast<std::size_t>((c.iterations * c.row_bytes + page_bytes - 1) / page_bytes), -1);
  g.sections.push_back(std::move(w));
  return g;
}

}  // namespace

Load parse_load(const std::string& name) {
  if (name == "none") return Load::none;
  if (name == "constant") return Load::constant;
  if (name == "onoff") return Load::onoff;
  if (name == "random") return Load::random;
  throw std::invalid_argument("unknown load '" + name + "' (none|constant|onoff|random)");
}

SimResult simulate(const SimConfig& c, Policy policy) {
  SiteModel m;
  m.opt = c.options;
  m.opt.policy = resolve_policy(policy, true, false);
  Geometry g = sim_geometry(c);
  LoadModel load(c);
  std::mt19937_64 rng(c.seed * 7919 + 1);
  std::uniform_real_distribution<double> noise(1 - c.noise, 1 + c.noise);
  std::vector<RankFigures> figs;
  double ideal = 0, actual = 0;
  for (int e = 0; e < c.executions; ++e) {
    const Assignment& a = next_execution(m, c.iterations, c.ranks, e ? &figs : nullptr, g, c.page_seconds);
    const std::vector<double> share = load.shares(e);
    std::vector<int>& holders = g.sections[0].holders;
    figs.assign(c.ranks, {});
    double slowest = 0, total_share = 0;
    for (int r = 0; r < c.ranks; ++r) {
      total_share += share[r];
      double rank_time = 0;
      for (const Span& s : a[r]) {
        // Pages this span writes that another rank wrote last must be fetched first; the
        // pages at its edges shared with a neighbour cost a diff every execution.
        long fetched = g.shared_at(s.begin, c.iterations) + g.shared_at(s.end, c.iterations);
        const PageRange pr{g.pages(0, s.begin).first, g.pages(0, s.end - 1).last};
        for (long p = pr.first; p <= pr.last; ++p) fetched += holders[p] >= 0 && holders[p] != r;
        const double cpu = work_of(c, s.begin, s.end) * noise(rng);
        const double wall = cpu / share[r] + c.page_seconds * static_cast<double>(fetched);
        figs[r].wall.push_back(wall);
        figs[r].cpu.push_back(cpu);
        rank_time += wall;
      }
      // Exact, where the runtime's measurement (detail::watch_core) needs another program's
      // use of the core above a noise floor over 0.1 s windows.
      figs[r].core_shared = share[r] < 1;
      slowest = std::max(slowest, rank_time);
    }
    for (int r = 0; r < c.ranks; ++r)
      for (const Span& s : a[r])
        std::fill(holders.begin() + g.pages(0, s.begin).first, holders.begin() + g.pages(0, s.end - 1).last + 1, r);
    ideal += work_of(c, 0, c.iterations) / total_share;
    actual += slowest;
  }
  return {ideal / actual, m.redistributions, m.iterations_moved, m.pages_moved};
}

}  // namespace dsm::lb
