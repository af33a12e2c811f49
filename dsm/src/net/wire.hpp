// Wire header of every transport message: what a receiver checks before it trusts a
// message. Plain data + pure functions, so the decoder can be fuzzed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace dsm::net {

inline constexpr std::uint32_t wire_magic = 0x314D5344;  // "DSM1" little-endian
inline constexpr std::uint16_t wire_version = 1;
inline constexpr std::size_t header_size = 40;
// Payload travels in a separate tagged message (zero copy); the header message is alone.
inline constexpr std::uint32_t flag_large = 1u;
// The type of a heartbeat (liveness.cpp): a header alone, outside the order of its pair of
// ranks (its seq means nothing), taken in by the transport and never dispatched.
inline constexpr std::uint16_t heartbeat_type = 0xFFFF;
// A bound on one message, so a corrupt length cannot make a receiver allocate terabytes.
inline constexpr std::uint64_t max_payload = std::uint64_t{1} << 32;

// The tag of a large payload: its sender and the low 40 bits of its header's sequence number.
inline constexpr std::uint64_t large_tag(std::uint32_t src, std::uint64_t seq) {
  return (std::uint64_t{src} << 40) | (seq & ((std::uint64_t{1} << 40) - 1));
}

struct Header {
  std::uint32_t magic = wire_magic;
  std::uint16_t version = wire_version;
  std::uint16_t type = 0;
  std::uint32_t src = 0;
  std::uint32_t flags = 0;
  std::uint64_t seq = 0;      // per (src, dest) pair, from 0
  std::uint64_t length = 0;   // payload bytes
  std::uint64_t token = 0;    // token_digest() of the job token
};

enum class WireError {
  none, too_short, bad_magic, bad_version, bad_token, bad_source, bad_flags, bad_length
};
std::string_view to_string(WireError);

// 64-bit digest of the job token carried in each header (a check against stray or
// foreign messages, not cryptography: the rendezvous is where joining is authenticated).
std::uint64_t token_digest(std::string_view token);

void encode(const Header&, std::span<std::byte, header_size> out);

struct Decoded {
  Header header;
  WireError error = WireError::none;
};
// Checks a received message (header + any eager payload): magic, version, token, source
// rank < nranks, known flags, and that the length matches what arrived (a large message's
// header arrives alone and announces at most max_payload bytes).
Decoded decode(std::span<const std::byte> msg, std::uint64_t token, std::uint32_t nranks);

}  // namespace dsm::net
