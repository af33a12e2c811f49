#include "model.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dsm::lb {
namespace {

long parse_long(const char* text, const char* what, long min, long max) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < min || v > max)
    throw std::invalid_argument(std::string(what) + "=" + text + ": expected an integer from " +
                                std::to_string(min) + " to " + std::to_string(max));
  return v;
}

double parse_double(const char* text, const char* what, double min, double max) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || !(v >= min && v <= max))
    throw std::invalid_argument(std::string(what) + "=" + text + ": expected a number from " +
                                std::to_string(min) + " to " + std::to_string(max));
  return v;
}

bool parse_bool(const char* text, const char* what) { return parse_long(text, what, 0, 1) != 0; }

// Positive weights separated by commas, as shares that sum to 1.
std::vector<double> parse_shares(const char* text, const char* what) {
  std::vector<double> w;
  const std::string all = text;
  for (std::size_t from = 0;;) {
    const std::size_t comma = std::min(all.find(',', from), all.size());
    const std::string one = all.substr(from, comma - from);
    const double v = parse_double(one.c_str(), what, 0, 1e9);
    if (v <= 0) throw std::invalid_argument(std::string(what) + "=" + text + ": every weight must be above 0");
    w.push_back(v);
    if (comma == all.size()) break;
    from = comma + 1;
  }
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= sum;
  return w;
}

}  // namespace

Options options_from(const std::function<const char*(const char*)>& getenv_fn) {
  Options o;
  if (const char* v = getenv_fn("DSM_LB")) o.policy = parse_policy(v, "DSM_LB");
  if (const char* v = getenv_fn("DSM_LB_WARMUP"))
    o.warmup = static_cast<int>(parse_long(v, "DSM_LB_WARMUP", 0, 1000000));
  if (const char* v = getenv_fn("DSM_LB_THRESHOLD")) o.threshold = parse_double(v, "DSM_LB_THRESHOLD", 0, 100);
  if (const char* v = getenv_fn("DSM_LB_FILTER")) o.filter = parse_bool(v, "DSM_LB_FILTER");
  if (const char* v = getenv_fn("DSM_LB_COST_BENEFIT")) o.cost_benefit = parse_bool(v, "DSM_LB_COST_BENEFIT");
  if (const char* v = getenv_fn("DSM_LB_CHANGE_COST"))
    o.learn_change_cost = parse_bool(v, "DSM_LB_CHANGE_COST");
  if (const char* v = getenv_fn("DSM_LB_EVIDENCE")) o.evidence = parse_double(v, "DSM_LB_EVIDENCE", 0, 3600);
  if (const char* v = getenv_fn("DSM_LB_MIN_MOVE")) o.min_move = parse_double(v, "DSM_LB_MIN_MOVE", 0, 1);
  if (const char* v = getenv_fn("DSM_LB_LEAVE")) o.leave = parse_double(v, "DSM_LB_LEAVE", 0, 1);
  if (const char* v = getenv_fn("DSM_LB_LEAVE_SHARE")) o.leave_share = parse_double(v, "DSM_LB_LEAVE_SHARE", 0, 1);
  if (const char* v = getenv_fn("DSM_LB_HEADROOM")) o.headroom = parse_double(v, "DSM_LB_HEADROOM", 0.05, 1);
  if (const char* v = getenv_fn("DSM_LB_PREFETCH")) o.prefetch = parse_bool(v, "DSM_LB_PREFETCH");
  if (const char* v = getenv_fn("DSM_LB_BULK_WRITE")) o.bulk_write = parse_bool(v, "DSM_LB_BULK_WRITE");
  if (const char* v = getenv_fn("DSM_LB_EXCLUSIVE")) o.exclusive = parse_bool(v, "DSM_LB_EXCLUSIVE");
  if (const char* v = getenv_fn("DSM_LB_SOLO")) o.solo = parse_bool(v, "DSM_LB_SOLO");
  if (const char* v = getenv_fn("DSM_LB_TAKE")) {
    const std::string t = v;
    if (t != "0" && t != "1" && t != "always")
      throw std::invalid_argument("DSM_LB_TAKE=" + t + ": expected 0 (never), 1 (where it pays) or always");
    o.take = t == "always" ? Options::Take::always : t == "1" ? Options::Take::where_it_pays : Options::Take::never;
  }
  if (const char* v = getenv_fn("DSM_LB_TRACE")) o.trace = static_cast<int>(parse_long(v, "DSM_LB_TRACE", 0, 2));
  if (const char* v = getenv_fn("DSM_LB_SHARES")) o.shares = parse_shares(v, "DSM_LB_SHARES");
  return o;
}

Turns update_left(std::vector<char>& left, const std::vector<double>& speed, const std::vector<char>& shared,
                  double fraction, const std::vector<double>& got, double below) {
  left.resize(speed.size(), 0);
  double fastest = 0;
  for (std::size_t r = 0; r < speed.size(); ++r)
    if (!left[r]) fastest = std::max(fastest, speed[r]);
  Turns turns;
  for (std::size_t r = 0; r < speed.size(); ++r) {
    const bool crowded = r < shared.size() && shared[r];
    if (left[r] && !crowded) {
      left[r] = 0;
      ++turns.returns;
    } else if (!left[r] && crowded && speed[r] > 0 && speed[r] < fraction * fastest &&
               (r >= got.size() || got[r] <= below)) {
      left[r] = 1;
      ++turns.departures;
    }
  }
  return turns;
}

Assignment equal_blocks(long n, int p) {
  Assignment a(static_cast<std::size_t>(p));
  const long q = n / p, rem = n % p;
  for (long r = 0; r < p; ++r) {
    const Span s{r * q + std::min(r, rem), (r + 1) * q + std::min(r + 1, rem)};
    if (s.size() > 0) a[r].push_back(s);
  }
  return a;
}

std::vector<Range> to_ranges(const std::vector<Span>& spans, long lb, long ub, long step) {
  std::vector<Range> out;
  out.reserve(spans.size());
  for (const Span& s : spans) out.push_back({iteration_at(lb, ub, step, s.begin), iteration_at(lb, ub, step, s.end), step});
  return out;
}

// In unsigned arithmetic, where ub - lb and k * step of a well-defined loop (from LONG_MIN,
// or with a step near LONG_MAX) overflow a long.
long iteration_count(long lb, long ub, long step) {
  if (step <= 0) throw std::invalid_argument("redistribute: step must be positive, got " + std::to_string(step));
  if (ub <= lb) return 0;
  const unsigned long span = static_cast<unsigned long>(ub) - static_cast<unsigned long>(lb);
  const unsigned long n = (span - 1) / static_cast<unsigned long>(step) + 1;
  if (n > static_cast<unsigned long>(LONG_MAX))
    throw std::invalid_argument("redistribute: the loop from " + std::to_string(lb) + " to " + std::to_string(ub) +
                                " has more iterations than a long counts");
  return static_cast<long>(n);
}

long iteration_at(long lb, long ub, long step, long k) {
  const unsigned long span = static_cast<unsigned long>(ub) - static_cast<unsigned long>(lb);
  unsigned long offset = 0;
  if (__builtin_mul_overflow(static_cast<unsigned long>(k), static_cast<unsigned long>(step), &offset) || offset >= span)
    return ub;
  return static_cast<long>(static_cast<unsigned long>(lb) + offset);
}

void normalize(std::vector<Span>& spans) {
  std::erase_if(spans, [](const Span& s) { return s.size() <= 0; });
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && merged.back().end >= s.begin)
      merged.back().end = std::max(merged.back().end, s.end);
    else
      merged.push_back(s);
  }
  spans = std::move(merged);
}

Assignment follow_spans(const Assignment& leader, long leader_lb, long leader_step, long leader_n, long lb,
                        long step, long n) {
  struct Piece {
    Span span;
    std::size_t rank;
  };
  std::vector<Piece> pieces;
  for (std::size_t r = 0; r < leader.size(); ++r)
    for (const Span& s : leader[r]) pieces.push_back({s, r});
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.span.begin < b.span.begin; });
  // The leader's index of value lb + k*step: non-decreasing in k (both steps are positive),
  // so the k of one leader span form one run, whose end bisection finds.
  const auto leader_index = [&](long k) {
    const long offset = lb + k * step - leader_lb;
    return std::clamp(offset >= 0 ? offset / leader_step : -1, 0L, leader_n - 1);
  };
  Assignment out(leader.size());
  for (long k = 0; k < n;) {
    const long kl = leader_index(k);
    auto next = std::upper_bound(pieces.begin(), pieces.end(), kl,
                                 [](long v, const Piece& p) { return v < p.span.begin; });
    if (next == pieces.begin() || std::prev(next)->span.end <= kl)
      throw std::logic_error("follow_spans: the leader's assignment leaves its iteration " + std::to_string(kl) +
                             " to no rank");
    const Piece& p = *std::prev(next);
    long lo = k + 1, hi = n;  // the first k past the run: leader_index(k) >= p.span.end
    while (lo < hi) {
      const long mid = lo + (hi - lo) / 2;
      if (leader_index(mid) < p.span.end) lo = mid + 1;
      else hi = mid;
    }
    auto& spans = out[p.rank];
    if (!spans.empty() && spans.back().end == k) spans.back().end = lo;
    else spans.push_back({k, lo});
    k = lo;
  }
  return out;
}

}  // namespace dsm::lb
