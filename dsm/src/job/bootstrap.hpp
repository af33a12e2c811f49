// RAII connection of a rank to dsmrun's rendezvous (TCP), authenticated by the job token.
// Also the frame format both sides speak, so dsmrun and the ranks share one definition.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "job/job_env.hpp"

namespace dsm::job {

// A frame: u32 kind, u32 length, payload. Little-endian.
enum class FrameKind : std::uint32_t {
  hello = 1,          // rank -> dsmrun: u32 rank, then the token
  gather = 2,         // rank -> dsmrun: this rank's blob for the next all-gather
  gather_result = 3,  // dsmrun -> rank: u32 n, then n times (u32 length, bytes)
  finalized = 4,      // rank -> dsmrun: statistics JSON
  finalized_ack = 5,  // dsmrun -> rank: the report arrived; the rank may exit
};
inline constexpr std::uint32_t max_frame = 64u << 20;
struct Frame {
  FrameKind kind;
  std::vector<std::byte> payload;
};
// Blocking whole-frame I/O on a socket; false on EOF or error.
bool write_frame(int fd, FrameKind kind, std::span<const std::byte> payload);
std::optional<Frame> read_frame(int fd);
std::vector<std::byte> pack_blobs(const std::vector<std::vector<std::byte>>& blobs);
// Throws std::runtime_error on a malformed gather_result.
std::vector<std::vector<std::byte>> unpack_blobs(std::span<const std::byte> payload);

class Bootstrap {
 public:
  // Connects and says hello. Without dsmrun (single rank) it does nothing and the
  // collectives are local. Throws std::runtime_error when the rendezvous is unreachable.
  explicit Bootstrap(const JobEnv&);
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  // All-gather of small blobs: result[r] is rank r's blob. Collective (also a barrier).
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine);
  // Tells dsmrun this rank finished cleanly, with its statistics as a JSON object text.
  // Returns once dsmrun has the report.
  void report_finalized(std::string_view stats_json);

 private:
  // Reads every frame dsmrun sends; exits the process when the connection drops while the
  // rank runs (dsmrun died or killed the job), so no rank outlives its job.
  void watchdog();

  JobEnv env_;
  int fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<std::vector<std::byte>>> results_;
  bool acked_ = false;
  bool closing_ = false;
};

}  // namespace dsm::job
