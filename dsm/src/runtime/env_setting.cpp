#include "runtime/env_setting.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace dsm::sys {

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v, &end, 0);
  int shift = 0;
  if (*end == 'G' || *end == 'g') shift = 30, ++end;
  else if (*end == 'M' || *end == 'm') shift = 20, ++end;
  else if (*end == 'K' || *end == 'k') shift = 10, ++end;
  // Refuses negative numbers (strtoull wraps them) and sizes that overflow 64 bits.
  if (*end || *v == '-' || errno == ERANGE || x > (~0ull >> shift)) {
    std::fprintf(stderr, "dsm: %s=%s is not a size (bytes, or with suffix K, M or G)\n", name, v);
    std::exit(2);
  }
  return x << shift;
}

// An integer setting in [min, max] (no size suffix).
std::uint64_t env_int(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (*end || *v == '-' || errno == ERANGE || x < min || x > max) {
    std::fprintf(stderr, "dsm: %s=%s: expected an integer from %llu to %llu\n", name, v,
                 static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
    std::exit(2);
  }
  return x;
}

}  // namespace dsm::sys
