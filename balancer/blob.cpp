#include "blob.hpp"

#include <cstring>

namespace dsm::lb {
namespace {

constexpr std::uint32_t max_spans = 1u << 20;

template <class T>
void put(std::vector<std::byte>& out, T v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

struct Reader {
  const std::vector<std::byte>& in;
  std::size_t pos = 0;
  template <class T>
  bool get(T& v) {
    if (in.size() - pos < sizeof v) return false;
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return true;
  }
};

// A figure is a sum or difference of clock readings that tick in nanoseconds: when not 0, at
// least the rounding of such doubles (~1e-25 s), and within a job's life. Anything else is
// no measurement, and rates of up to 2^63 iterations per such a time (or CPU seconds over
// wall seconds, fgdls) would overflow: a subnormal time, or one of years. NaN fails both.
constexpr double min_time = 1e-30, max_time = 1e9;
bool valid_time(double t) { return t == 0 || (t >= min_time && t <= max_time); }

}  // namespace

std::vector<std::byte> encode_figures(const Published& p) {
  const std::vector<SiteFigures>& sites = p.sites;
  std::vector<std::byte> out;
  out.reserve(24 + sites.size() * 64);
  put(out, blob_version);
  put(out, p.page_seconds);
  put(out, p.protect_seconds);
  put(out, static_cast<std::uint32_t>(sites.size()));
  for (const SiteFigures& s : sites) {
    put(out, s.site);
    put(out, s.execution);
    put(out, s.figures.period);
    put(out, static_cast<std::uint8_t>(s.figures.core_shared));
    put(out, s.figures.share);
    put(out, s.figures.step_cpu);
    put(out, s.lb);
    put(out, s.ub);
    put(out, s.step);
    put(out, static_cast<std::uint32_t>(s.figures.wall.size()));
    for (std::size_t j = 0; j < s.figures.wall.size(); ++j) {
      put(out, s.figures.wall[j]);
      put(out, s.figures.cpu[j]);
    }
    put(out, static_cast<std::uint32_t>(s.figures.ran.size()));
    for (const Span& sp : s.figures.ran) {
      put(out, static_cast<std::int64_t>(sp.begin));
      put(out, static_cast<std::int64_t>(sp.end));
    }
  }
  put(out, static_cast<std::uint32_t>(p.reduction.size()));
  out.insert(out.end(), p.reduction.begin(), p.reduction.end());
  return out;
}

std::optional<Published> decode_figures(const std::vector<std::byte>& blob) {
  Reader r{blob};
  std::uint8_t version = 0;
  std::uint32_t count = 0;
  Published p;
  if (!r.get(version) || version != blob_version || !r.get(p.page_seconds) || !valid_time(p.page_seconds) ||
      !r.get(p.protect_seconds) || !valid_time(p.protect_seconds) || !r.get(count))
    return std::nullopt;
  std::vector<SiteFigures>& sites = p.sites;
  for (std::uint32_t i = 0; i < count; ++i) {
    SiteFigures s;
    std::uint32_t spans = 0;
    std::uint8_t shared = 0;
    if (!r.get(s.site) || !r.get(s.execution) || !r.get(s.figures.period) || !valid_time(s.figures.period) ||
        !r.get(shared) || shared > 1 || !r.get(s.figures.share) || !(s.figures.share > 0 && s.figures.share <= 1) ||
        !r.get(s.figures.step_cpu) || !valid_time(s.figures.step_cpu) || !r.get(s.lb) || !r.get(s.ub) || !r.get(s.step) || s.step <= 0 || !r.get(spans) || spans > max_spans)
      return std::nullopt;
    s.figures.core_shared = shared != 0;
    if ((blob.size() - r.pos) / (2 * sizeof(double)) < spans) return std::nullopt;
    s.figures.wall.resize(spans);
    s.figures.cpu.resize(spans);
    for (std::uint32_t j = 0; j < spans; ++j)
      if (!r.get(s.figures.wall[j]) || !r.get(s.figures.cpu[j]) || !valid_time(s.figures.wall[j]) ||
          !valid_time(s.figures.cpu[j]))
        return std::nullopt;
    // Spans it ran: sorted, apart, not empty, one per figure.
    std::uint32_t ran = 0;
    if (!r.get(ran) || (ran != 0 && ran != spans) || (blob.size() - r.pos) / (2 * sizeof(std::int64_t)) < ran)
      return std::nullopt;
    s.figures.ran.resize(ran);
    for (std::uint32_t j = 0; j < ran; ++j) {
      std::int64_t b = 0, e = 0;
      if (!r.get(b) || !r.get(e) || b < 0 || e <= b || (j > 0 && b <= s.figures.ran[j - 1].end)) return std::nullopt;
      s.figures.ran[j] = {static_cast<long>(b), static_cast<long>(e)};
    }
    sites.push_back(std::move(s));
  }
  std::uint32_t reduction = 0;
  if (!r.get(reduction) || reduction > max_reduction_bytes || blob.size() - r.pos != reduction) return std::nullopt;
  p.reduction.assign(blob.begin() + static_cast<std::ptrdiff_t>(r.pos), blob.end());
  return p;
}

std::uint64_t site_id(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace dsm::lb
