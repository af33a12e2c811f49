// Twins and diffs of one page. A diff lists the runs of 8-byte words where the page
// differs from its twin, with a mask of the bytes that changed in each word; applying it
// writes only those bytes, so diffs of concurrent writers of disjoint bytes of one page
// (multiple-writer protocol, even two ranks writing the halves of one word) compose.
//
// Encoding (little-endian): runs in increasing order, each
//   u16 first word, u16 word count (>= 1), count byte masks (non-zero; bit k: byte k
//   changed), count * 8 bytes of data,
// with no two runs overlapping or touching. An empty diff is zero bytes. A full 4 KiB page
// encodes in 4612 bytes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dsm::mem {

// Largest page the encoding can describe (word offsets and counts fit in 16 bits).
inline constexpr std::size_t max_diff_page = 65535 * 8;

// Appends to `out` the encoding of the words where `page` differs from `twin`; returns the
// number of bytes appended (0 when equal). page_size must be a multiple of 8, at most
// max_diff_page (std::invalid_argument otherwise). Vectorised (AVX2 when the CPU has it).
std::size_t diff_encode(const std::byte* twin, const std::byte* page, std::size_t page_size,
                        std::vector<std::byte>& out);

// The same encoding by a plain word-by-word loop: the oracle for tests and the reference
// the benchmark compares diff_encode with.
std::size_t diff_encode_reference(const std::byte* twin, const std::byte* page, std::size_t page_size,
                                  std::vector<std::byte>& out);

// Applies an encoded diff to `page`. Diffs come from the network: validates all of it first
// and returns false, leaving `page` untouched, if it is malformed (truncated, a run past
// the page, empty, overlapping, touching or out of order runs, trailing bytes).
bool diff_apply(std::span<const std::byte> diff, std::byte* page, std::size_t page_size);

}  // namespace dsm::mem
