#include "mem/diff.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dsm::mem {
namespace {

constexpr std::size_t word = 8;
constexpr std::size_t header = 4;
// One bit per word of the largest page.
constexpr std::size_t max_mask_words = (max_diff_page / word + 63) / 64;

void check_page_size(std::size_t page_size) {
  if (page_size % word || page_size > max_diff_page)
    throw std::invalid_argument("dsm: diff page size must be a multiple of 8 and at most 524280 bytes");
}

std::uint64_t load_word(const std::byte* p) {
  std::uint64_t w;
  std::memcpy(&w, p, word);
  return w;
}

// Sets bit i of `mask` when word i differs. Plain version, and the tail of the vector ones.
void changed_words_scalar(const std::byte* a, const std::byte* b, std::size_t from, std::size_t nwords,
                          std::uint64_t* mask) {
  for (std::size_t i = from; i < nwords; ++i)
    if (load_word(a + i * word) != load_word(b + i * word)) mask[i / 64] |= std::uint64_t{1} << (i % 64);
}

// Bit k set when byte k of the two words differs.
std::uint8_t changed_bytes(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t x = a ^ b, low7 = 0x7f7f7f7f7f7f7f7full;
  // High bit of each byte set when that byte of x is non-zero; then gather the high bits.
  const std::uint64_t t = (((x & low7) + low7) | x) & ~low7;
  return static_cast<std::uint8_t>(((t >> 7) * 0x0102040810204080ull) >> 56);
}

// Writes the mask of the bytes that changed (bit k: byte k) of each of `count` words.
void byte_masks_scalar(const std::byte* a, const std::byte* b, std::size_t count, std::byte* out) {
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<std::byte>(changed_bytes(load_word(a + i * word), load_word(b + i * word)));
}

void changed_words_plain(const std::byte* a, const std::byte* b, std::size_t nwords, std::uint64_t* mask) {
  changed_words_scalar(a, b, 0, nwords, mask);
}

// 64-bit mask with byte k all ones when bit k of m is set.
constexpr auto byte_select = [] {
  std::array<std::uint64_t, 256> t{};
  for (unsigned m = 0; m < 256; ++m)
    for (unsigned k = 0; k < 8; ++k)
      if (m >> k & 1) t[m] |= std::uint64_t{0xff} << (8 * k);
  return t;
}();

// Writes the changed bytes of `count` words (one mask byte each, then the words) over
// `target`. Only those bytes: another writer's diff carries the word's other bytes.
void apply_run_scalar(const std::byte* masks, const std::byte* data, std::size_t count, std::byte* target) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t m = byte_select[std::to_integer<unsigned>(masks[i])];
    const std::uint64_t v = (load_word(target + i * word) & ~m) | (load_word(data + i * word) & m);
    std::memcpy(target + i * word, &v, word);
  }
}

// The kernels diff_encode and diff_apply use.
struct Kernels {
  void (*changed_words)(const std::byte* a, const std::byte* b, std::size_t nwords, std::uint64_t* mask);
  void (*byte_masks)(const std::byte* a, const std::byte* b, std::size_t count, std::byte* out);
  void (*apply_run)(const std::byte* masks, const std::byte* data, std::size_t count, std::byte* target);
};
constexpr Kernels plain_kernels{changed_words_plain, byte_masks_scalar, apply_run_scalar};

#if defined(__x86_64__)
// 64 words (512 bytes) per mask word: 16 AVX2 compares, and a cheap exit for equal blocks.
__attribute__((target("avx2"))) void changed_words_avx2(const std::byte* a, const std::byte* b,
                                                         std::size_t nwords, std::uint64_t* mask) {
  const std::size_t blocks = nwords / 64;
  for (std::size_t k = 0; k < blocks; ++k) {
    const auto* pa = reinterpret_cast<const __m256i*>(a + k * 512);
    const auto* pb = reinterpret_cast<const __m256i*>(b + k * 512);
    std::uint64_t equal = 0;
    for (int j = 0; j < 16; ++j) {
      __m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256(pa + j), _mm256_loadu_si256(pb + j));
      equal |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_castsi256_pd(eq))) << (4 * j);
    }
    mask[k] = ~equal;
  }
  changed_words_scalar(a, b, blocks * 64, nwords, mask);
}

// One byte compare gives the masks of 4 words: byte w of the inverted movemask is word w's
// (x86 is little-endian).
__attribute__((target("avx2"))) void byte_masks_avx2(const std::byte* a, const std::byte* b, std::size_t count,
                                                      std::byte* out) {
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m256i eq = _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * word)),
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i * word)));
    const auto changed = ~static_cast<std::uint32_t>(_mm256_movemask_epi8(eq));
    std::memcpy(out + i, &changed, 4);
  }
  byte_masks_scalar(a + i * word, b + i * word, count - i, out + i);
}

// 4 words at a time: each of their mask bytes spread over the word's 8 bytes (0xff where
// the byte changed), then one blend. Diffs are applied only to pages no thread can write
// at the time (invalid in the application's view), so rewriting a word's unchanged bytes
// with their own value is safe.
__attribute__((target("avx2"))) void apply_run_avx2(const std::byte* masks, const std::byte* data, std::size_t count,
                                                     std::byte* target) {
  // The byte shuffle works within each 16-byte lane; the broadcast below puts the 4 mask
  // bytes in both lanes, so the upper lane can pick bytes 2 and 3.
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bits = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    std::uint32_t m;
    std::memcpy(&m, masks + i, 4);
    const __m256i each = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(m)), spread);
    const __m256i select = _mm256_cmpeq_epi8(_mm256_and_si256(each, bits), bits);
    auto* t = reinterpret_cast<__m256i*>(target + i * word);
    const __m256i now = _mm256_loadu_si256(t);
    const __m256i in = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i * word));
    _mm256_storeu_si256(t, _mm256_blendv_epi8(now, in, select));
  }
  apply_run_scalar(masks + i, data + i * word, count - i, target + i * word);
}

void byte_masks_sse2(const std::byte* a, const std::byte* b, std::size_t count, std::byte* out) {
  std::size_t i = 0;
  for (; i + 2 <= count; i += 2) {
    const __m128i eq = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * word)),
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i * word)));
    const auto changed = static_cast<std::uint16_t>(~_mm_movemask_epi8(eq));
    std::memcpy(out + i, &changed, 2);
  }
  byte_masks_scalar(a + i * word, b + i * word, count - i, out + i);
}

void changed_words_sse2(const std::byte* a, const std::byte* b, std::size_t nwords, std::uint64_t* mask) {
  const std::size_t blocks = nwords / 64;
  for (std::size_t k = 0; k < blocks; ++k) {
    const auto* pa = reinterpret_cast<const __m128i*>(a + k * 512);
    const auto* pb = reinterpret_cast<const __m128i*>(b + k * 512);
    std::uint64_t changed = 0;
    for (int j = 0; j < 32; ++j) {
      // Byte-equality mask of two words: a word changed unless all its 8 bits are set.
      unsigned m = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(pa + j), _mm_loadu_si128(pb + j))));
      changed |= static_cast<std::uint64_t>((m & 0xff) != 0xff) << (2 * j);
      changed |= static_cast<std::uint64_t>((m >> 8) != 0xff) << (2 * j + 1);
    }
    mask[k] = changed;
  }
  changed_words_scalar(a, b, blocks * 64, nwords, mask);
}

#endif

// Chosen once at start-up: the best this CPU has (SSE2 is part of every x86-64 CPU), or the
// one DSM_DIFF_KERNEL names (auto, avx2, sse2, plain), so tests can run each.
const Kernels kernels = [] {
  const char* forced = std::getenv("DSM_DIFF_KERNEL");
  const std::string name = forced && *forced ? forced : "auto";
#if defined(__x86_64__)
  __builtin_cpu_init();  // may run before libgcc's own initialiser
  const bool avx2 = __builtin_cpu_supports("avx2");
  constexpr Kernels with_avx2{changed_words_avx2, byte_masks_avx2, apply_run_avx2};
  constexpr Kernels with_sse2{changed_words_sse2, byte_masks_sse2, apply_run_scalar};
  if (name == "avx2" && avx2) return with_avx2;
  if (name == "auto") return avx2 ? with_avx2 : with_sse2;
  if (name == "sse2") return with_sse2;
#else
  if (name == "auto") return plain_kernels;
#endif
  if (name == "plain") return plain_kernels;
  std::fprintf(stderr, "dsm: DSM_DIFF_KERNEL=%s is not a kernel this CPU has (auto, avx2, sse2, plain)\n", name.c_str());
  std::exit(2);
}();

void put_u16(std::byte* p, std::size_t v) {
  p[0] = static_cast<std::byte>(v & 0xff);
  p[1] = static_cast<std::byte>(v >> 8);
}

std::size_t get_u16(const std::byte* p) {
  return std::to_integer<std::size_t>(p[0]) | std::to_integer<std::size_t>(p[1]) << 8;
}

// Index of the first bit at or after `i` equal to `value` in the mask, or nbits.
std::size_t next_bit(const std::uint64_t* mask, std::size_t i, std::size_t nbits, bool value) {
  while (i < nbits) {
    std::uint64_t w = mask[i / 64];
    if (!value) w = ~w;
    w &= ~std::uint64_t{0} << (i % 64);
    if (w) return std::min(nbits, (i & ~std::size_t{63}) + std::countr_zero(w));
    i = (i & ~std::size_t{63}) + 64;
  }
  return nbits;
}

// Appends one run of words [first, first+count) of `page`: header, one byte mask per word
// (which bytes changed, by `masks`), then the words. Inserts rather than resizes: a resize
// would zero the bytes first, and for a full page that costs as much as writing them.
template <class ByteMasksFn>
void append_run(const std::byte* twin, const std::byte* page, std::size_t first, std::size_t count,
                std::vector<std::byte>& out, ByteMasksFn masks) {
  std::byte head[header];
  put_u16(head, first);
  put_u16(head + 2, count);
  out.insert(out.end(), head, head + header);
  std::byte chunk[512];  // small: the fault handler encodes on the application's stack
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(sizeof chunk, count - done);
    masks(twin + (first + done) * word, page + (first + done) * word, n, chunk);
    out.insert(out.end(), chunk, chunk + n);
    done += n;
  }
  out.insert(out.end(), page + first * word, page + (first + count) * word);
}

// Calls f(first, count) for each run of set bits in the first nwords bits of `mask`, in order.
template <class F>
void for_each_run(const std::uint64_t* mask, std::size_t nwords, F f) {
  for (std::size_t i = next_bit(mask, 0, nwords, true); i < nwords;) {
    const std::size_t end = next_bit(mask, i + 1, nwords, false);
    f(i, end - i);
    i = next_bit(mask, end, nwords, true);
  }
}

}  // namespace

std::size_t diff_encode(const std::byte* twin, const std::byte* page, std::size_t page_size,
                        std::vector<std::byte>& out) {
  check_page_size(page_size);
  const std::size_t nwords = page_size / word;
  std::uint64_t mask[max_mask_words];
  std::memset(mask, 0, (nwords + 63) / 64 * sizeof mask[0]);
  kernels.changed_words(twin, page, nwords, mask);
  const std::size_t before = out.size();
  // One allocation per diff, still geometric when many diffs go into one buffer.
  std::size_t need = before;
  for_each_run(mask, nwords, [&](std::size_t, std::size_t count) { need += header + count * (word + 1); });
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
  for_each_run(mask, nwords, [&](std::size_t first, std::size_t count) {
    append_run(twin, page, first, count, out, kernels.byte_masks);
  });
  return out.size() - before;
}

std::size_t diff_encode_reference(const std::byte* twin, const std::byte* page, std::size_t page_size,
                                  std::vector<std::byte>& out) {
  check_page_size(page_size);
  const std::size_t nwords = page_size / word, before = out.size();
  std::size_t run_start = 0;
  bool in_run = false;
  for (std::size_t i = 0; i <= nwords; ++i) {
    const bool changed = i < nwords && load_word(twin + i * word) != load_word(page + i * word);
    if (changed && !in_run) run_start = i;
    if (!changed && in_run) append_run(twin, page, run_start, i - run_start, out, byte_masks_scalar);
    in_run = changed;
  }
  return out.size() - before;
}

bool diff_apply(std::span<const std::byte> diff, std::byte* page, std::size_t page_size) {
  if (page_size % word || page_size > max_diff_page) return false;
  const std::size_t nwords = page_size / word;
  // Validate everything before the first write: a bad diff must leave the page intact.
  std::size_t pos = 0, next_free = 0;  // next_free: first word a following run may start at
  while (pos < diff.size()) {
    if (diff.size() - pos < header) return false;
    const std::size_t first = get_u16(&diff[pos]), count = get_u16(&diff[pos + 2]);
    if (count == 0 || first < next_free || first + count > nwords) return false;
    if ((diff.size() - pos - header) / (word + 1) < count) return false;
    for (std::size_t i = 0; i < count; ++i)
      if (diff[pos + header + i] == std::byte{0}) return false;  // an unchanged word is never sent
    pos += header + count * (word + 1);
    next_free = first + count + 1;
  }
  for (pos = 0; pos < diff.size();) {
    const std::size_t first = get_u16(&diff[pos]), count = get_u16(&diff[pos + 2]);
    const std::byte* masks = &diff[pos + header];
    // A run of a few words (most of a sparse diff) is not worth the indirect call.
    if (count < 4) apply_run_scalar(masks, masks + count, count, page + first * word);
    else kernels.apply_run(masks, masks + count, count, page + first * word);
    pos += header + count * (word + 1);
  }
  return true;
}

}  // namespace dsm::mem
