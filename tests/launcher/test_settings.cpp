// Unit tests of the environment dsmrun gives a rank and of its check of the user's settings.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hosts.hpp"
#include "settings.hpp"
#include "spawn.hpp"

using namespace dsm::launcher;

TEST_CASE("A rank's environment: dsmrun's variables first, then DSM_LB and --env, which override") {
  Options opt;
  opt.n = 3;
  opt.lb = "shift";
  opt.env = {"DSM_POLL_US=0", "DSM_HOST_CPUS=1", "X=a=b"};
  const Environment local = rank_environment(opt, {"host:1234", "f00d", "tcp"}, {2, 2, 4, {}});
  CHECK(local == Environment{{"DSM_RANK", "2"}, {"DSM_SIZE", "3"}, {"DSM_RENDEZVOUS", "host:1234"},
                             {"DSM_TOKEN", "f00d"}, {"DSM_PROVIDER", "tcp"}, {"DSM_HOST_RANKS", "2"},
                             {"DSM_HOST_CPUS", "4"}, {"DSM_LB", "shift"}, {"DSM_POLL_US", "0"},
                             {"DSM_HOST_CPUS", "1"}, {"X", "a=b"}});
  opt.lb.clear();
  opt.env.clear();
  // Elsewhere a rank counts the CPUs it may use itself, and learns the host's name as
  // --hosts gives it (for messages); --liveness reaches it too.
  opt.liveness = 5;
  const Environment remote = rank_environment(opt, {"h:1", "t", "shm"}, {0, 1, std::nullopt, "node7"});
  CHECK(remote == Environment{{"DSM_RANK", "0"}, {"DSM_SIZE", "3"}, {"DSM_RENDEZVOUS", "h:1"}, {"DSM_TOKEN", "t"},
                              {"DSM_PROVIDER", "shm"}, {"DSM_HOST_RANKS", "1"}, {"DSM_HOST", "node7"},
                              {"DSM_LIVENESS", "5"}});
  for (const char* own : {"DSM_RANK", "DSM_SIZE", "DSM_TOKEN", "DSM_RENDEZVOUS", "DSM_HOST_RANKS", "DSM_HOST"})
    CHECK(set_for_each_rank(own));
  CHECK_FALSE(set_for_each_rank("DSM_HOST_CPUS"));
  CHECK_FALSE(set_for_each_rank("DSM_LB"));
}

TEST_CASE("A misspelt setting is matched to the known one a few edits away") {
  CHECK(closest_setting("DSM_WRITEAHEAD") == "DSM_WRITE_AHEAD");
  CHECK(closest_setting("DSM_LB_TRESHOLD") == "DSM_LB_THRESHOLD");
  CHECK(closest_setting("DSM_POLL") == "");  // 3 edits: another name
  CHECK(closest_setting("DSM_SOMETHING_ELSE") == "");
}

TEST_CASE("The launch command gets the rank's line as a shell line, or through sh -c") {
  CHECK(launch_argv("ssh {host}", "n1", "cd /x && exec prog") ==
        std::vector<std::string>{"ssh", "n1", "cd /x && exec prog"});
  CHECK(launch_argv("/usr/bin/ssh -p 22 {host}", "n1", "L") == std::vector<std::string>{"/usr/bin/ssh", "-p", "22", "n1", "L"});
  CHECK(launch_argv("sh -c", "n1", "L") == std::vector<std::string>{"sh", "-c", "L"});
  CHECK(launch_argv("ip netns exec ns-{host}", "a", "L") ==
        std::vector<std::string>{"ip", "netns", "exec", "ns-a", "sh", "-c", "L"});
  CHECK(launch_argv("docker exec {host}-{host}", "c", "L") ==
        std::vector<std::string>{"docker", "exec", "c-c", "sh", "-c", "L"});
}

TEST_CASE("Ranks whose transport alone would not fit in this host's memory are refused before they start") {
  using dsm::launcher::memory_refusal;
  constexpr std::uint64_t gib = 1ull << 30;
  CHECK(memory_refusal(64, "tcp", 23 * gib).empty());
  CHECK(memory_refusal(256, "shm", 23 * gib).empty());
  const std::string why = memory_refusal(300, "tcp", 23 * gib);
  CHECK(why.find("300 ranks on this host need at least 37.5 GiB") != std::string::npos);
  CHECK(why.find("run at most 184 ranks here") != std::string::npos);
  CHECK(why.find("--hosts") != std::string::npos);
  CHECK(memory_refusal(0, "tcp", 0).empty());
  CHECK(dsm::launcher::memory_available() > 0);  // Linux has MemAvailable since 3.14
}
