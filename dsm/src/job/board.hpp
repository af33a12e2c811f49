// Statistics board: one shared-memory object per job and host (/dev/shm/dsm-<job>-board)
// where every rank of the host publishes its counters and its state while the job runs, so
// dsmrun --watch and dsm-top can show them live.
//
// Who creates and removes it: dsmrun on its own host, before it starts the ranks, and it
// removes it when the job ends (also after a crash, with the job's other segments); on any
// other host the first rank there creates it and removes the name at its dsm::finalize (the
// other ranks keep their mapping). A rank that loses dsmrun removes it too. A single rank
// without dsmrun has no board.
//
// Lock-free: slot r has one writer, rank r, and every field is a lock-free atomic, so a rank
// that dies leaves nothing locked. The counters of stats.hpp and the transport's traffic
// live in the slot itself (nothing is copied). Readers validate everything they read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "net/traffic.hpp"
#include "runtime/stats.hpp"

namespace dsm::board {

enum class RankState : std::uint32_t { absent = 0, running, barrier, lock_wait, finished };
inline constexpr std::uint32_t state_count = 5;
const char* to_string(RankState);

inline constexpr std::uint64_t magic = 0x4452414f424d5344;  // "DSMBOARD" in memory
inline constexpr std::uint32_t version = 4;  // raised with every change of the layout
inline constexpr std::uint32_t max_ranks = 4096;  // dsmrun's limit
inline constexpr std::size_t job_id_size = 24;    // "dsm-" + 16 hex digits + NUL, padded

struct alignas(64) Header {
  std::atomic<std::uint64_t> magic;  // stored last by the creator: the rest is complete
  std::uint32_t version;
  std::uint32_t header_size;
  std::uint32_t slot_size;
  std::uint32_t nranks;
  std::uint64_t created_ns;  // CLOCK_MONOTONIC (one clock for every process of a host)
  char job[job_id_size];
};

struct alignas(64) Slot {
  std::atomic<std::uint32_t> rank;      // the slot's index, written by the creator
  std::atomic<std::uint32_t> state;     // RankState
  std::atomic<std::uint64_t> pid;
  std::atomic<std::uint64_t> since_ns;  // when the rank entered its state (CLOCK_MONOTONIC_COARSE)
  // The chunks of a loop's execution not yet started by the rank, which its peers on this host
  // take from while it lags (balancer/runtime/take.cpp); any rank of the host writes it.
  std::atomic<std::uint64_t> chunks;
  stats::Counters stats;
  net::Traffic traffic;
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "the board needs lock-free atomics (a dying rank must not leave a lock held)");

// Size of a board image for nranks ranks.
std::size_t image_size(int nranks);
// "/dev/shm" name of a job's board, and the job id shown to users ("dsm-<16 hex>").
std::string board_name(const std::string& token);
std::string job_id(const std::string& token);

// A rank's counters as a JSON object, under the names of dsmrun --stats-json: the final
// report (runtime.cpp) and dsm-top --json both write them with this function.
std::string rank_counters_json(const stats::Counters&, const net::Traffic&, double total_seconds,
                               const std::string& extra);

// Writes an empty board (header, slot indexes) into a zeroed image of image_size(nranks).
void format(std::span<std::byte> image, int nranks, const std::string& job);

// A board refused by a reader: the message names the problem.
struct BadBoard : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a reader saw, copied out of the shared memory.
struct Row {
  int rank = 0;
  RankState state = RankState::absent;
  std::uint64_t pid = 0;
  std::uint64_t since_ns = 0;
  stats::Counters stats;
  net::Traffic traffic;
};
struct Snapshot {
  std::string job;
  int nranks = 0;
  std::uint64_t created_ns = 0;
  std::uint64_t taken_ns = 0;
  std::deque<Row> rows;  // the ranks present on this host, by rank
};

// Validates an image (magic, version, layout, rank count against the size, job id, every
// slot's index and state) and copies the present ranks out. Throws BadBoard.
Snapshot read(std::span<const std::byte> image);

// Per-rank table, one line a rank (dsmrun --watch, dsm-top).
std::string format_table(const Snapshot&);
// {"job": ..., "nranks": N, "ranks": [{"rank", "pid", "state", "state_seconds",
// "counters": {the names of dsmrun --stats-json}}]} (dsm-top --json).
std::string to_json(const Snapshot&);

// The job's board on this host, mapped read-write: created if no other process of the
// host created it first, else opened (after its creator finished writing it) and checked
// to be this job's. Removes the name when destroyed if it created it.
class Board {
 public:
  Board(const std::string& token, int nranks);
  ~Board();
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  Slot& slot(int rank);
  Snapshot read() const;
  const std::string& name() const { return name_; }
  // Removes the name now if this process created it (the mapping stays).
  void remove_name();

 private:
  struct Mapping;
  std::string name_;
  bool created_ = false;
  std::unique_ptr<Mapping> map_;
};

// Another process's board, mapped read-only (dsm-top). Throws BadBoard when the object is
// missing or not a board.
class View {
 public:
  explicit View(const std::string& name);
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  Snapshot read() const;

 private:
  struct Mapping;
  std::string name_;
  std::unique_ptr<Mapping> map_;
};

// The publishing side of a rank: its slot, or nothing (no board). Sets the rank's state for
// the life of the scope (barrier, lock wait), then restores the previous one.
void attach(Slot* slot);
void set_state(RankState);
class StateScope {
 public:
  explicit StateScope(RankState s);
  ~StateScope();
  StateScope(const StateScope&) = delete;
  StateScope& operator=(const StateScope&) = delete;

 private:
  RankState previous_;
};

}  // namespace dsm::board
