// What dsmrun tells a rank through DSM_* environment variables (fixed names, see
// docs/design.md, section "Bootstrap and rendezvous").
#pragma once

#include <string>

namespace dsm::job {

struct JobEnv {
  int rank = 0;
  int size = 1;
  std::string rendezvous;  // host:port of dsmrun's rendezvous
  std::string token;       // per-job random token (hex)
  std::string provider;    // "shm" or "tcp"
  bool under_dsmrun = false;
};

// Reads DSM_RANK, DSM_SIZE, DSM_RENDEZVOUS, DSM_TOKEN (or, when it is "stdin", the first line
// of standard input), DSM_PROVIDER. Without DSM_RANK the program runs as a single rank.
// Throws std::runtime_error naming a malformed variable.
JobEnv read_job_env();

}  // namespace dsm::job
