// The figures a rank attaches to a barrier: for each site executed since the last barrier,
// its id, execution number, the wall/CPU seconds inside each of its spans, the period of
// the execution before, whether the rank's core is shared with another program and the share
// of it the rank got, the CPU
// seconds inside every loop's ranges over that period, and the
// loop's bounds (which every rank must have run it with), and the spans it ran where work was
// taken inside the execution; then the rank's part of a
// reduction that ends with this barrier, if any.
// The bytes come from the network, so decoding checks the version, every length and every
// value.
#pragma once

#include "model.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace dsm::lb {

inline constexpr std::uint8_t blob_version = 11;
inline constexpr std::size_t max_reduction_bytes = 1 << 16;

struct SiteFigures {
  std::uint64_t site = 0;       // hash of the site's name
  std::uint64_t execution = 0;  // which execution of the site they measure
  RankFigures figures;
  std::int64_t lb = 0, ub = 0, step = 1;  // the execution's loop bounds on this rank
};

// What one rank publishes: its measured page transfer cost and what a page two ranks write
// costs it besides at every barrier (detail::shared_page_seconds; ranks measure
// different values, all decide with the same: the median rank's), and its sites' figures.
struct Published {
  double page_seconds = 0;
  std::vector<SiteFigures> sites;
  std::vector<std::byte> reduction{};  // at most max_reduction_bytes
  double shared_seconds = 0;
};

std::vector<std::byte> encode_figures(const Published& p);
// nullopt when the blob is malformed (wrong version, truncated, trailing bytes, times that no
// clock measured: negative, non-finite, positive below 1e-30 s (subnormals among them) or
// above 1e9 s; absurd counts, a reduction part over max_reduction_bytes).
std::optional<Published> decode_figures(const std::vector<std::byte>& blob);

// 64-bit FNV-1a: the same site name gives the same id on every rank.
std::uint64_t site_id(const std::string& name);

}  // namespace dsm::lb
