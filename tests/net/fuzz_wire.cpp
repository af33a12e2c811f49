// libFuzzer target: the wire-header decoder must never crash, read out of bounds or accept
// a message whose announced length disagrees with what arrived.
#include <cstdint>
#include <cstdlib>

#include "net/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dsm::net;
  const std::span<const std::byte> msg(reinterpret_cast<const std::byte*>(data), size);
  const std::uint64_t token = token_digest("0123456789abcdef");
  const Decoded d = decode(msg, token, 4);
  if (d.error == WireError::none) {
    const Header& h = d.header;
    const bool consistent = h.token == token && h.src < 4 &&
                            ((h.flags & flag_large) ? size == header_size && h.length <= max_payload
                                                    : h.length == size - header_size);
    if (!consistent) std::abort();
    std::byte again[header_size];
    encode(h, again);  // accepted headers re-encode to the bytes received
    for (std::size_t i = 0; i < header_size; ++i)
      if (again[i] != msg[i]) std::abort();
  }
  return 0;
}
