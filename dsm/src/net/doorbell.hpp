// Doorbells of a job's ranks (shm provider only): the shm provider has no wait fd, so a sender
// wakes a sleeping receiver with a futex in a per-job shared-memory segment.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "job/job_env.hpp"

namespace boost::interprocess {
class mapped_region;
}

namespace dsm::net {

// Doorbell of one rank.
struct alignas(64) Bell {
  std::atomic<std::uint32_t> ring{0};
  std::atomic<std::uint32_t> sleeping{0};
  // An application thread of this rank is polling (Transport::set_polling): it will see the
  // message, so waking the service thread would only cost two context switches.
  std::atomic<std::uint32_t> polling{0};
  // An application thread of this rank waits for a message (Transport::set_waiting):
  // messages sent with send_lazy wake it; otherwise they wait for its next wait.
  std::atomic<std::uint32_t> waiting{0};
};

class Doorbells {
 public:
  Doorbells();
  ~Doorbells();
  Doorbells(const Doorbells&) = delete;
  Doorbells& operator=(const Doorbells&) = delete;

  // Maps the job's segment, creating it if this rank comes first.
  void open(const job::JobEnv& env);
  // Removes the segment's name: rank 0 does, once every rank has mapped it.
  void unlink(const job::JobEnv& env);
  Bell& operator[](int rank) { return bells_[rank]; }
  // Rings `dest`'s bell, and wakes its service thread if it sleeps and no application thread
  // of that rank polls.
  void ring(int dest);

 private:
  std::unique_ptr<boost::interprocess::mapped_region> region_;
  Bell* bells_ = nullptr;
};

}  // namespace dsm::net
