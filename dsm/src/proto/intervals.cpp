#include "proto/intervals.hpp"

#include <algorithm>
#include <tuple>

namespace dsm::proto {

std::vector<PageRun> to_runs(std::span<const std::uint32_t> pages, std::span<const std::uint8_t> whole) {
  std::vector<PageRun> runs;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (!runs.empty() && runs.back().first + runs.back().count == pages[i] && runs.back().whole == whole[i])
      ++runs.back().count;
    else
      runs.push_back({pages[i], 1, whole[i]});
  }
  return runs;
}

std::vector<PageRun> merge_runs(std::span<const PageRun> a, std::span<const PageRun> b) {
  std::vector<PageRun> out;
  out.reserve(a.size() + b.size());
  auto add = [&](const PageRun& r) {
    if (!out.empty() && out.back().first + out.back().count == r.first && out.back().whole == r.whole)
      out.back().count += r.count;
    else
      out.push_back(r);
  };
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size())
    add(j == b.size() || (i < a.size() && a[i].first < b[j].first) ? a[i++] : b[j++]);
  return out;
}

std::vector<PageRun> remove_pages(std::span<const PageRun> runs, std::span<const std::uint32_t> pages) {
  std::vector<PageRun> out;
  out.reserve(runs.size() + pages.size());
  auto gone = pages.begin();
  for (PageRun r : runs) {
    const std::uint32_t end = r.first + r.count;
    for (; gone != pages.end() && *gone < end; ++gone) {
      if (*gone < r.first) continue;
      if (*gone > r.first) out.push_back({r.first, *gone - r.first, r.whole});
      r.count = end - *gone - 1;
      r.first = *gone + 1;
    }
    if (r.count) out.push_back(r);
  }
  return out;
}

namespace {

void encode_runs(codec::Writer& w, const Interval& in) {
  w.put<std::uint32_t>(std::uint32_t(in.runs.size()));
  for (const auto& r : in.runs) {
    w.put(r.first);
    w.put(r.count);
    w.put(r.whole);
  }
}

// Runs of `in`, whose proc and stamp are read and checked.
void decode_runs(codec::Reader& r, Interval& in, std::uint32_t nprocs, std::uint32_t npages) {
  if (in.proc >= nprocs || in.vt.size() != nprocs) throw codec::DecodeError("interval of an unknown rank");
  if (in.vt[in.proc] != in.idx + 1) throw codec::DecodeError("interval stamp does not count itself");
  auto n = r.count(9);
  in.runs.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    PageRun run{r.get<std::uint32_t>(), r.get<std::uint32_t>(), r.get<std::uint8_t>()};
    if (run.count == 0 || run.first >= npages || run.count > npages - run.first || run.whole > 1)
      throw codec::DecodeError("write notice outside the shared heap");
    if (!in.runs.empty() && run.first < in.runs.back().first + in.runs.back().count)
      throw codec::DecodeError("write notices out of page order");
    in.runs.push_back(run);
  }
}

// In a list, a stamp travels as the entries where it differs from the stamp before it (the
// first from zeros) when that is shorter than the whole vector: the intervals one barrier
// or grant brings differ from each other in a few entries, so a list of P intervals costs
// O(P) bytes instead of P^2. Exactly one form is valid for each pair of stamps, so that a
// list decodes to one encoding.
constexpr std::uint8_t stamp_whole = 0, stamp_changes = 1;

std::size_t changed_entries(const VectorTime& before, const VectorTime& vt) {
  std::size_t k = 0;
  for (std::size_t q = 0; q < vt.size(); ++q) k += vt[q] != before[q];
  return k;
}

bool as_changes(std::size_t changed, std::size_t nprocs) { return 8 * changed < 4 * nprocs; }

void encode_stamp(codec::Writer& w, const VectorTime& before, const VectorTime& vt) {
  const std::size_t k = changed_entries(before, vt);
  if (!as_changes(k, vt.size())) {
    w.put(stamp_whole);
    w.array<std::uint32_t>(vt);
    return;
  }
  w.put(stamp_changes);
  w.put<std::uint32_t>(std::uint32_t(k));
  for (std::uint32_t q = 0; q < vt.size(); ++q)
    if (vt[q] != before[q]) {
      w.put(q);
      w.put(vt[q]);
    }
}

VectorTime decode_stamp(codec::Reader& r, const VectorTime& before) {
  const std::uint32_t nprocs = std::uint32_t(before.size());
  const auto form = r.get<std::uint8_t>();
  if (form == stamp_whole) {
    auto vt = r.array<std::uint32_t>(nprocs);
    if (vt.size() != nprocs) throw codec::DecodeError("interval of an unknown rank");
    if (as_changes(changed_entries(before, vt), nprocs)) throw codec::DecodeError("stamp sent whole where its changes are shorter");
    return vt;
  }
  if (form != stamp_changes) throw codec::DecodeError("unknown stamp form");
  const auto k = r.count(8);
  if (!as_changes(k, nprocs)) throw codec::DecodeError("stamp sent as changes where the whole is shorter");
  VectorTime vt = before;
  std::uint32_t next = 0;
  for (std::uint32_t i = 0; i < k; ++i) {
    const auto q = r.get<std::uint32_t>();
    const auto value = r.get<std::uint32_t>();
    if (q < next || q >= nprocs) throw codec::DecodeError("stamp changes out of order");
    if (value == before[q]) throw codec::DecodeError("stamp change that changes nothing");
    vt[q] = value;
    next = q + 1;
  }
  return vt;
}

}  // namespace

void encode_list(codec::Writer& w, std::span<const Interval* const> list) {
  w.put<std::uint32_t>(std::uint32_t(list.size()));
  const VectorTime zeros(list.empty() ? 0 : list.front()->vt.size(), 0);
  const VectorTime* before = &zeros;
  for (const Interval* in : list) {
    w.put(in->proc);
    w.put(in->idx);
    encode_stamp(w, *before, in->vt);
    encode_runs(w, *in);
    before = &in->vt;
  }
}

std::vector<Interval> decode_list(codec::Reader& r, std::uint32_t nprocs, std::uint32_t npages) {
  auto n = r.count(17);
  std::vector<Interval> out;
  out.reserve(n);
  const VectorTime zeros(nprocs, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    Interval in;
    in.proc = r.get<std::uint32_t>();
    in.idx = r.get<std::uint32_t>();
    in.vt = decode_stamp(r, out.empty() ? zeros : out.back().vt);
    decode_runs(r, in, nprocs, npages);
    out.push_back(std::move(in));
  }
  return out;
}

VectorTime IntervalLog::vector_time() const {
  VectorTime vt(per_.size());
  for (std::uint32_t p = 0; p < per_.size(); ++p) vt[p] = known(p);
  return vt;
}

bool IntervalLog::add(Interval in) {
  if (in.idx < known(in.proc)) return false;
  if (in.idx > known(in.proc)) throw codec::DecodeError("interval received before its predecessors");
  bytes_ += sizeof(Interval) + in.vt.size() * 4 + in.runs.size() * sizeof(PageRun);
  per_[in.proc].push_back(std::move(in));
  return true;
}

std::vector<const Interval*> IntervalLog::since(std::uint32_t p, std::uint32_t from) const {
  std::vector<const Interval*> out;
  for (std::uint32_t k = std::max(from, base_[p]); k < known(p); ++k) out.push_back(&get(p, k));
  return out;
}

std::vector<const Interval*> IntervalLog::missing_for(const VectorTime& vt) const {
  std::vector<const Interval*> out;
  for (std::uint32_t p = 0; p < per_.size(); ++p) {
    auto part = since(p, vt[p]);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

void IntervalLog::clear() {
  for (std::uint32_t p = 0; p < per_.size(); ++p) {
    base_[p] = known(p);
    per_[p].clear();
  }
  bytes_ = 0;
}

std::vector<PageRun>::const_iterator run_ending_after(const std::vector<PageRun>& runs, std::uint32_t page) {
  return std::upper_bound(runs.begin(), runs.end(), page,
                          [](std::uint32_t p, const PageRun& r) { return p < r.first + r.count; });
}

std::optional<bool> written(const Interval& in, std::uint32_t page) {
  auto run = run_ending_after(in.runs, page);
  if (run == in.runs.end() || page < run->first) return std::nullopt;
  return run->whole;
}

bool happened_before(const IntervalLog& log, const Notice& a, const Notice& b) {
  if (a.proc == b.proc) return a.idx < b.idx;
  return log.get(b.proc, b.idx).vt[a.proc] > a.idx;
}

std::vector<Notice> application_order(const IntervalLog& log, std::vector<Notice> rest) {
  if (rest.size() <= 1) return rest;  // most pages lack one change: no second list
  std::vector<Notice> out;
  out.reserve(rest.size());
  while (!rest.empty()) {
    std::size_t pick = rest.size();
    for (std::size_t i = 0; i < rest.size(); ++i) {
      bool minimal = std::none_of(rest.begin(), rest.end(),
                                  [&](const Notice& o) { return happened_before(log, o, rest[i]); });
      if (!minimal) continue;
      auto key = [](const Notice& n) { return std::tuple<bool, std::uint32_t, std::uint32_t>(!n.whole, n.proc, n.idx); };
      if (pick == rest.size() || key(rest[i]) < key(rest[pick])) pick = i;
    }
    // Forged or corrupt vector times can make happened-before cyclic: no minimal notice.
    if (pick == rest.size()) throw codec::DecodeError("write notices whose vector times form a cycle");
    out.push_back(rest[pick]);
    rest.erase(rest.begin() + std::ptrdiff_t(pick));
  }
  return out;
}

}  // namespace dsm::proto
