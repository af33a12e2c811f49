// What dsmrun knows of one rank: where it runs, its process, and its rendezvous connection.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "hosts.hpp"

namespace dsm::launcher {

struct Rank : Placement {
  explicit Rank(Placement p) : Placement(std::move(p)) {}
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  int conn = -1;
  bool joined = false;
  bool finalized = false;
  std::string stats;  // the JSON text it reported at dsm::finalize
  std::deque<std::vector<std::byte>> gathers;  // its blobs for gathers the others have not reached
};

}  // namespace dsm::launcher
