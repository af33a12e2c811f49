// libFuzzer target: decode_figures on arbitrary bytes (the figures ride on barriers from
// other ranks). Whatever it accepts must encode back to exactly the same bytes: nothing is
// read past the blob, skipped or invented.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "blob.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  const std::vector<std::byte> blob(bytes, bytes + size);
  if (const auto decoded = dsm::lb::decode_figures(blob))
    if (dsm::lb::encode_figures(*decoded) != blob) std::abort();
  return 0;
}
