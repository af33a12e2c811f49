// Unit tests of what a rank takes from dsmrun: its job environment (DSM_* variables) and the
// rendezvous' all-gather frames.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <span>
#include <vector>

#include "job/bootstrap.hpp"
#include "job/job_env.hpp"

using namespace dsm::job;

TEST_CASE("job environment: single rank without dsmrun, errors name the variable") {
  for (const char* v : {"DSM_RANK", "DSM_SIZE", "DSM_RENDEZVOUS", "DSM_TOKEN", "DSM_PROVIDER"}) unsetenv(v);
  const JobEnv lone = read_job_env();
  CHECK_FALSE(lone.under_dsmrun);
  CHECK(lone.rank == 0);
  CHECK(lone.size == 1);

  setenv("DSM_RANK", "1", 1);
  setenv("DSM_SIZE", "3", 1);
  setenv("DSM_RENDEZVOUS", "127.0.0.1:4000", 1);
  setenv("DSM_TOKEN", "00112233445566778899aabbccddeeff", 1);
  setenv("DSM_PROVIDER", "tcp", 1);
  const JobEnv env = read_job_env();
  CHECK(env.under_dsmrun);
  CHECK(env.rank == 1);
  CHECK(env.size == 3);
  CHECK(env.provider == "tcp");

  setenv("DSM_RANK", "3", 1);
  CHECK_THROWS_WITH(read_job_env(), Catch::Contains("DSM_RANK"));
  setenv("DSM_RANK", "x1", 1);
  CHECK_THROWS_WITH(read_job_env(), Catch::Contains("DSM_RANK"));
  setenv("DSM_RANK", "1", 1);
  setenv("DSM_RENDEZVOUS", "nocolon", 1);
  CHECK_THROWS_WITH(read_job_env(), Catch::Contains("DSM_RENDEZVOUS"));
  setenv("DSM_RENDEZVOUS", "127.0.0.1:4000", 1);
  setenv("DSM_TOKEN", "short", 1);
  CHECK_THROWS_WITH(read_job_env(), Catch::Contains("DSM_TOKEN"));
  setenv("DSM_TOKEN", "00112233445566778899aabbccddeeff", 1);
  setenv("DSM_PROVIDER", "sockets", 1);
  CHECK_THROWS_WITH(read_job_env(), Catch::Contains("DSM_PROVIDER"));
  for (const char* v : {"DSM_RANK", "DSM_SIZE", "DSM_RENDEZVOUS", "DSM_TOKEN", "DSM_PROVIDER"}) unsetenv(v);
}

TEST_CASE("all-gather blobs pack and unpack, and truncation is an error") {
  const std::vector<std::vector<std::byte>> blobs = {{}, {std::byte{1}}, {std::byte{2}, std::byte{3}}};
  const auto packed = pack_blobs(blobs);
  CHECK(unpack_blobs(packed) == blobs);
  CHECK_THROWS(unpack_blobs(std::span(packed).first(packed.size() - 1)));
  // A count the bytes cannot hold is refused before anything is allocated for it.
  const std::vector<std::byte> huge = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}};
  CHECK_THROWS_WITH(unpack_blobs(huge), Catch::Contains("more blobs than it holds"));
}
