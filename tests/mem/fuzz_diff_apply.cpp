// libFuzzer target: diff_apply on arbitrary bytes (diffs come from the network).
// Refused input must leave the page untouched; accepted input must change only words its
// runs name, so re-encoding the change gives a diff no larger than the input.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mem/diff.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t page = 4096;
  static std::vector<std::byte> twin = [] {
    std::vector<std::byte> t(page);
    for (std::size_t i = 0; i < page; ++i) t[i] = static_cast<std::byte>(i * 7 + 3);
    return t;
  }();
  // An exact-size heap copy, so ASan sees any write past the page.
  auto* target = static_cast<std::byte*>(std::malloc(page));
  std::memcpy(target, twin.data(), page);
  const std::span<const std::byte> diff(reinterpret_cast<const std::byte*>(data), size);
  const bool ok = dsm::mem::diff_apply(diff, target, page);
  if (!ok && std::memcmp(target, twin.data(), page) != 0) std::abort();
  if (ok) {
    std::vector<std::byte> again;
    if (dsm::mem::diff_encode(twin.data(), target, page, again) > size) std::abort();
    std::vector<std::byte> replay = twin;
    if (!dsm::mem::diff_apply(again, replay.data(), page) || std::memcmp(replay.data(), target, page) != 0)
      std::abort();
  }
  std::free(target);
  return 0;
}
