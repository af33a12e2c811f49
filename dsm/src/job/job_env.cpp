#include "job/job_env.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace dsm::job {

namespace {
std::string_view var(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
[[noreturn]] void malformed(const char* name, std::string_view value, const char* why) {
  throw std::runtime_error(std::string("dsm: malformed environment variable ") + name + "='" +
                           std::string(value) + "': " + why);
}
// The first line of standard input, read a byte at a time so nothing after it is consumed.
std::string first_line_of_stdin() {
  std::string line;
  char c = 0;
  while (line.size() < 256) {
    const ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  return line;
}
int parse_int(const char* name) {
  const std::string_view s = var(name);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
    malformed(name, s, "expected an integer");
  return v;
}
}  // namespace

JobEnv read_job_env() {
  JobEnv env;
  if (!std::getenv("DSM_RANK")) return env;
  env.under_dsmrun = true;
  env.size = parse_int("DSM_SIZE");
  if (env.size < 1) malformed("DSM_SIZE", var("DSM_SIZE"), "must be at least 1");
  env.rank = parse_int("DSM_RANK");
  if (env.rank < 0 || env.rank >= env.size)
    malformed("DSM_RANK", var("DSM_RANK"), "must be in [0, DSM_SIZE)");
  env.rendezvous = var("DSM_RENDEZVOUS");
  const auto colon = env.rendezvous.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == env.rendezvous.size())
    malformed("DSM_RENDEZVOUS", env.rendezvous, "expected host:port");
  env.token = var("DSM_TOKEN");
  // dsmrun passes the token of a rank it starts through a launch command (ssh) on the
  // command's standard input, where other users cannot see it.
  if (env.token == "stdin") {
    env.token = first_line_of_stdin();
    if (env.token.empty())
      malformed("DSM_TOKEN", "stdin",
                "standard input had no token line (the launch command must pass dsmrun's standard input on: not ssh -n)");
  }
  if (env.token.size() < 16 || env.token.find_first_not_of("0123456789abcdef") != std::string::npos)
    malformed("DSM_TOKEN", env.token, "expected at least 16 lowercase hex digits");
  env.provider = var("DSM_PROVIDER");
  if (env.provider != "shm" && env.provider != "tcp")
    malformed("DSM_PROVIDER", env.provider, "expected shm or tcp");
  return env;
}

}  // namespace dsm::job
