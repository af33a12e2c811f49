// dsm-top: the live statistics of a DSM job's ranks on this host, read from the job's
// statistics board in shared memory (board.hpp): once, or every few seconds until the job ends.
#include <unistd.h>

#include "cli.hpp"
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "job/board.hpp"

namespace {

const std::regex board_pattern("dsm-[0-9a-f]{16}-board");

std::vector<std::string> boards_on_this_host() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    if (std::regex_match(e.path().filename().string(), board_pattern)) names.push_back(e.path().filename());
  return names;
}

// A board name from what the user gave: the name, its /dev/shm path, or the job id.
std::string board_name_of(std::string arg) {
  if (arg.starts_with("/dev/shm/")) arg.erase(0, 9);
  if (std::regex_match(arg + "-board", board_pattern)) arg += "-board";
  return arg;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dsm-top: live statistics of a running DSM job's ranks on this host (from its statistics board)"};
  std::string job;
  double interval = 0;
  bool json = false;
  app.add_option("job", job,
                 "the job: its id (dsm-<16 hex digits>, as dsmrun --watch shows it) or its board "
                 "(/dev/shm/dsm-<id>-board); default: the only job on this host");
  app.add_option("-i,--interval", interval, "print again every S seconds until the job ends")
      ->check(CLI::Range(1e-3, 1e6));
  app.add_flag("--json", json, "print JSON (the counters under the names of dsmrun --stats-json)");
  app.footer("Exit status: 0 when the board was read, 1 when it is missing or not a valid board, 2 on bad use.");
  dsm::cli::parse_or_exit(app, argc, argv);

  if (job.empty()) {
    const auto names = boards_on_this_host();
    if (names.size() != 1) {
      std::fprintf(stderr, "dsm-top: %s; name one:\n", names.empty() ? "no DSM job runs on this host" : "several DSM jobs run on this host");
      for (const auto& n : names) std::fprintf(stderr, "  %s\n", n.c_str());
      return names.empty() ? 1 : 2;
    }
    job = names.front();
  }
  const std::string name = board_name_of(job);
  try {
    const dsm::board::View view(name);
    for (;;) {
      const auto snap = view.read();
      const std::string text = json ? dsm::board::to_json(snap) + "\n" : dsm::board::format_table(snap);
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      if (interval <= 0) return 0;
      std::this_thread::sleep_for(std::chrono::duration<double>(interval));
      if (!std::filesystem::exists("/dev/shm/" + name)) return 0;  // the job ended
    }
  } catch (const dsm::board::BadBoard& e) {
    std::fprintf(stderr, "dsm-top: refusing %s\n", e.what());
    return 1;
  }
}
