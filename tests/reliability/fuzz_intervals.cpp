// libFuzzer target for the decoders of the DSM protocol's messages (intervals and write
// notices, dsm/src/proto/intervals.cpp, over the bounds-checked codec of
// dsm/src/proto/codec.hpp). These bytes come from the network: a malformed message must throw
// codec::DecodeError, never read out of bounds, allocate without bound or produce an interval
// the rest of the protocol would index out of range. What decodes must encode back to the
// same bytes.
//
// Input: byte 0 = job size - 1 (1..64 ranks), bytes 1-2 = allocated pages, byte 3 = which
// decoder, the rest = the message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "proto/codec.hpp"
#include "proto/intervals.hpp"

using namespace dsm;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Everything a decoded interval promises the protocol (what the protocol in dsm/src/proto indexes with).
void check_valid(const proto::Interval& in, std::uint32_t nprocs, std::uint32_t npages) {
  check(in.proc < nprocs && in.vt.size() == nprocs && in.vt[in.proc] == in.idx + 1);
  for (const auto& r : in.runs) check(r.count > 0 && r.first < npages && r.count <= npages - r.first && r.whole <= 1);
}

// The log and the application order over what was decoded: the gaps the decoder lets
// through must be caught by IntervalLog::add, and ordering must stay in bounds.
void exercise_log(const std::vector<proto::Interval>& list, std::uint32_t nprocs) {
  proto::IntervalLog log(nprocs);
  std::vector<proto::Notice> notices;
  for (const auto& in : list) {
    try {
      if (log.add(in)) notices.push_back({in.proc, in.idx, !in.runs.empty() && in.runs[0].whole});
    } catch (const proto::codec::DecodeError&) {
    }
  }
  if (notices.size() > 64) notices.resize(64);  // application_order is quadratic
  auto order = proto::application_order(log, notices);
  check(order.size() == notices.size());
  auto missing = log.missing_for(proto::VectorTime(nprocs, 0));
  check(missing.size() == notices.size() || notices.size() == 64);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::uint32_t nprocs = 1 + data[0] % 64;
  const std::uint32_t npages = std::uint32_t(data[1]) | std::uint32_t(data[2]) << 8;
  const int which = data[3] % 2;
  const std::span<const std::byte> msg(reinterpret_cast<const std::byte*>(data + 4), size - 4);
  proto::codec::Reader r(msg);
  try {
    if (which == 0) {
      auto list = proto::decode_list(r, nprocs, npages);
      for (const auto& in : list) check_valid(in, nprocs, npages);
      // Re-encoding gives back the bytes that were consumed.
      std::vector<const proto::Interval*> ptrs;
      for (const auto& in : list) ptrs.push_back(&in);
      proto::codec::Writer w;
      proto::encode_list(w, ptrs);
      const std::size_t used = msg.size() - r.remaining();
      check(w.buffer().size() == used && std::memcmp(w.buffer().data(), msg.data(), used) == 0);
      exercise_log(list, nprocs);
    } else {
      // The codec's own primitives, in the shapes the protocol uses.
      r.get<std::uint64_t>();
      auto vt = r.array<std::uint32_t>(nprocs);
      check(vt.size() <= nprocs);
      auto blob = r.bytes();
      check(blob.size() <= msg.size());
      auto n = r.count(9);
      check(std::size_t(n) * 9 <= r.remaining());
    }
  } catch (const proto::codec::DecodeError&) {
  }
  return 0;
}
