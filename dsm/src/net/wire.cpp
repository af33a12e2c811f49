#include "net/wire.hpp"

#include <cstring>

namespace dsm::net {

namespace {
template <class T>
void put(std::byte*& p, T v) {
  std::memcpy(p, &v, sizeof v);  // hosts are little-endian x86-64; no byte swapping
  p += sizeof v;
}
template <class T>
T get(const std::byte*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}
}  // namespace

std::string_view to_string(WireError e) {
  switch (e) {
    case WireError::none: return "ok";
    case WireError::too_short: return "shorter than a header";
    case WireError::bad_magic: return "bad magic";
    case WireError::bad_version: return "unsupported version";
    case WireError::bad_token: return "wrong job token";
    case WireError::bad_source: return "source rank out of range";
    case WireError::bad_flags: return "unknown flags";
    case WireError::bad_length: return "length does not match";
  }
  return "?";
}

std::uint64_t token_digest(std::string_view token) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : token) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void encode(const Header& h, std::span<std::byte, header_size> out) {
  std::byte* p = out.data();
  put(p, h.magic);
  put(p, h.version);
  put(p, h.type);
  put(p, h.src);
  put(p, h.flags);
  put(p, h.seq);
  put(p, h.length);
  put(p, h.token);
}

Decoded decode(std::span<const std::byte> msg, std::uint64_t token, std::uint32_t nranks) {
  Decoded d;
  if (msg.size() < header_size) return {d.header, WireError::too_short};
  const std::byte* p = msg.data();
  Header& h = d.header;
  h.magic = get<std::uint32_t>(p);
  h.version = get<std::uint16_t>(p);
  h.type = get<std::uint16_t>(p);
  h.src = get<std::uint32_t>(p);
  h.flags = get<std::uint32_t>(p);
  h.seq = get<std::uint64_t>(p);
  h.length = get<std::uint64_t>(p);
  h.token = get<std::uint64_t>(p);
  if (h.magic != wire_magic) d.error = WireError::bad_magic;
  else if (h.version != wire_version) d.error = WireError::bad_version;
  else if (h.token != token) d.error = WireError::bad_token;
  else if (h.src >= nranks) d.error = WireError::bad_source;
  else if (h.flags & ~flag_large) d.error = WireError::bad_flags;
  else if (h.flags & flag_large ? msg.size() != header_size || h.length > max_payload
                                : h.length != msg.size() - header_size)
    d.error = WireError::bad_length;
  return d;
}

}  // namespace dsm::net
