#include "net/segments.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "net/wire.hpp"

namespace dsm::net {

std::string shm_segment_prefix(const std::string& token) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(token_digest("segment:" + token)));
  return std::string("dsm-") + hex + "-";
}

void remove_job_segments(const std::string& token) {
  const std::string prefix = shm_segment_prefix(token);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    if (e.path().filename().string().starts_with(prefix)) std::filesystem::remove(e.path(), ec);
}

}  // namespace dsm::net
