#include "blob.hpp"

#include <cstring>

namespace dsm::lb {
namespace {

constexpr std::uint32_t max_spans = 1u << 20;

// Times go as floats (a rank's figures are timings good to a few digits, and every rank
// decides on the same decoded values, its own included), integers as LEB128 varints, signed
// ones zigzagged: over tcp the figures of two loops came to 4 % of Jacobi's bytes on the wire
// in doubles and 64-bit integers, every rank's to every rank at every barrier.
template <class T>
void put(std::vector<std::byte>& out, T v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}
void put_time(std::vector<std::byte>& out, double t) { put(out, static_cast<float>(t)); }
void put_varint(std::vector<std::byte>& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
  out.push_back(static_cast<std::byte>(v));
}
void put_signed(std::vector<std::byte>& out, std::int64_t v) {
  put_varint(out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
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
  bool time(double& t) {
    float f = 0;
    if (!get(f)) return false;
    t = f;
    return true;
  }
  // At most ten bytes, the last of them holding the top bit alone, and none of them a
  // trailing zero: one encoding per value, as put_varint writes it.
  bool varint(std::uint64_t& v) {
    v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos == in.size()) return false;
      const auto b = static_cast<std::uint8_t>(in[pos++]);
      if ((shift == 63 && b > 1) || (shift > 0 && b == 0)) return false;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool signed_varint(std::int64_t& v) {
    std::uint64_t u = 0;
    if (!varint(u)) return false;
    v = static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1);
    return true;
  }
  template <class T>
  bool count(T& v, std::uint64_t most) {
    std::uint64_t u = 0;
    if (!varint(u) || u > most) return false;
    v = static_cast<T>(u);
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
  out.reserve(16 + sites.size() * 48);
  put(out, blob_version);
  put_time(out, p.page_seconds);
  put_time(out, p.shared_seconds);
  put_varint(out, sites.size());
  for (const SiteFigures& s : sites) {
    put(out, s.site);
    put_varint(out, s.execution);
    put_time(out, s.figures.period);
    put(out, static_cast<std::uint8_t>(s.figures.core_shared));
    put_time(out, s.figures.share);
    put_time(out, s.figures.step_cpu);
    put_signed(out, s.lb);
    put_signed(out, s.ub);
    put_signed(out, s.step);
    put_varint(out, s.figures.wall.size());
    for (std::size_t j = 0; j < s.figures.wall.size(); ++j) {
      put_time(out, s.figures.wall[j]);
      put_time(out, s.figures.cpu[j]);
    }
    put_varint(out, s.figures.ran.size());
    for (const Span& sp : s.figures.ran) {
      put_signed(out, sp.begin);
      put_signed(out, sp.end);
    }
  }
  put_varint(out, p.reduction.size());
  out.insert(out.end(), p.reduction.begin(), p.reduction.end());
  return out;
}

std::optional<Published> decode_figures(const std::vector<std::byte>& blob) {
  Reader r{blob};
  std::uint8_t version = 0;
  std::uint32_t count = 0;
  Published p;
  if (!r.get(version) || version != blob_version || !r.time(p.page_seconds) || !valid_time(p.page_seconds) ||
      !r.time(p.shared_seconds) || !valid_time(p.shared_seconds) || !r.count(count, max_spans))
    return std::nullopt;
  std::vector<SiteFigures>& sites = p.sites;
  for (std::uint32_t i = 0; i < count; ++i) {
    SiteFigures s;
    std::uint32_t spans = 0;
    std::uint8_t shared = 0;
    if (!r.get(s.site) || !r.varint(s.execution) || !r.time(s.figures.period) || !valid_time(s.figures.period) ||
        !r.get(shared) || shared > 1 || !r.time(s.figures.share) || !(s.figures.share > 0 && s.figures.share <= 1) ||
        !r.time(s.figures.step_cpu) || !valid_time(s.figures.step_cpu) || !r.signed_varint(s.lb) ||
        !r.signed_varint(s.ub) || !r.signed_varint(s.step) || s.step <= 0 || !r.count(spans, max_spans))
      return std::nullopt;
    s.figures.core_shared = shared != 0;
    if ((blob.size() - r.pos) / (2 * sizeof(float)) < spans) return std::nullopt;
    s.figures.wall.resize(spans);
    s.figures.cpu.resize(spans);
    for (std::uint32_t j = 0; j < spans; ++j)
      if (!r.time(s.figures.wall[j]) || !r.time(s.figures.cpu[j]) || !valid_time(s.figures.wall[j]) ||
          !valid_time(s.figures.cpu[j]))
        return std::nullopt;
    // Spans it ran: sorted, apart, not empty, one per figure.
    std::uint32_t ran = 0;
    if (!r.count(ran, spans) || (ran != 0 && ran != spans) || (blob.size() - r.pos) / 2 < ran) return std::nullopt;
    s.figures.ran.resize(ran);
    for (std::uint32_t j = 0; j < ran; ++j) {
      std::int64_t b = 0, e = 0;
      if (!r.signed_varint(b) || !r.signed_varint(e) || b < 0 || e <= b || (j > 0 && b <= s.figures.ran[j - 1].end))
        return std::nullopt;
      s.figures.ran[j] = {static_cast<long>(b), static_cast<long>(e)};
    }
    sites.push_back(std::move(s));
  }
  std::uint32_t reduction = 0;
  if (!r.count(reduction, max_reduction_bytes) || blob.size() - r.pos != reduction) return std::nullopt;
  p.reduction.assign(blob.begin() + static_cast<std::ptrdiff_t>(r.pos), blob.end());
  return p;
}

std::uint64_t site_id(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace dsm::lb
