#include "mem/page_copy.hpp"

#include <emmintrin.h>

namespace dsm::mem {

void copy_page_streaming(std::byte* dst, const std::byte* src, std::size_t page_size) {
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* s = reinterpret_cast<const __m128i*>(src);
  // A cache line at a time: four loads, then four stores that fill one write-combining buffer.
  for (std::size_t i = 0; i < page_size / sizeof(__m128i); i += 4) {
    const __m128i a = _mm_loadu_si128(s + i), b = _mm_loadu_si128(s + i + 1), c = _mm_loadu_si128(s + i + 2),
                  e = _mm_loadu_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
}

void stream_fence() { _mm_sfence(); }

}  // namespace dsm::mem
