// dsmrun: starts the ranks of a DSM job (local fork, remote through a launch command, or srun
// inside a Slurm allocation), runs the rendezvous where they exchange addresses (authenticated
// by a per-job random token), watches them, stops the whole job when one fails, and prints
// statistics.
#include <cstdio>
#include <exception>

#include "job.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  using namespace dsm::launcher;
  std::optional<Options> opt = parse_options(argc, argv);
  if (!opt) return 2;
  try {
    return Job(std::move(*opt)).run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dsmrun: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsmrun: %s\n", e.what());
    return 1;
  }
}
