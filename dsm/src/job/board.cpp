#include "job/board.hpp"

#include <time.h>
#include <unistd.h>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "net/segments.hpp"

namespace dsm::board {

namespace {

namespace bip = boost::interprocess;

constexpr const char* state_names[state_count] = {"absent", "running", "barrier", "lock-wait", "finished"};

// How long a process that opens a board waits for its creator to size and write it.
constexpr auto creator_grace = std::chrono::seconds(5);

const Header& header_of(std::span<const std::byte> image) {
  return *reinterpret_cast<const Header*>(image.data());
}
Slot* slots_of(std::span<std::byte> image) {
  return reinterpret_cast<Slot*>(image.data() + sizeof(Header));
}
const Slot* slots_of(std::span<const std::byte> image) {
  return reinterpret_cast<const Slot*>(image.data() + sizeof(Header));
}

std::string seconds(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", ns * 1e-9);
  return buf;
}

}  // namespace

const char* to_string(RankState s) {
  const auto i = static_cast<std::uint32_t>(s);
  return i < state_count ? state_names[i] : "?";
}

std::size_t image_size(int nranks) { return sizeof(Header) + sizeof(Slot) * static_cast<std::size_t>(nranks); }

std::string job_id(const std::string& token) {
  std::string prefix = net::shm_segment_prefix(token);
  prefix.pop_back();  // "dsm-<hex>-" without its dash
  return prefix;
}

std::string board_name(const std::string& token) { return net::shm_segment_prefix(token) + "board"; }

std::string rank_counters_json(const stats::Counters& c, const net::Traffic& t, double total_seconds,
                               const std::string& extra) {
  const std::string traffic = net::json_fields(t);
  return stats::counters_json(c, total_seconds, extra.empty() ? traffic : traffic + ", " + extra);
}

void format(std::span<std::byte> image, int nranks, const std::string& job) {
  if (nranks < 1 || static_cast<std::uint32_t>(nranks) > max_ranks || image.size() < image_size(nranks) ||
      job.size() >= job_id_size)
    throw std::invalid_argument("dsm: board::format: bad arguments");
  auto* h = new (image.data()) Header{};
  h->version = version;
  h->header_size = sizeof(Header);
  h->slot_size = sizeof(Slot);
  h->nranks = static_cast<std::uint32_t>(nranks);
  h->created_ns = stats::now_ns();
  std::memcpy(h->job, job.data(), job.size());
  Slot* slots = slots_of(image);
  for (int r = 0; r < nranks; ++r) {
    new (&slots[r]) Slot{};
    slots[r].rank.store(static_cast<std::uint32_t>(r));
  }
  h->magic.store(magic, std::memory_order_release);
}

Snapshot read(std::span<const std::byte> image) {
  if (image.size() < sizeof(Header))
    throw BadBoard("too small to be a statistics board (" + std::to_string(image.size()) + " bytes)");
  const Header& h = header_of(image);
  const std::uint64_t m = h.magic.load(std::memory_order_acquire);
  if (m == 0) throw BadBoard("not written yet (its creator has not finished, or died while writing it)");
  if (m != magic) throw BadBoard("not a DSM statistics board (wrong magic number)");
  if (h.version != version)
    throw BadBoard("board version " + std::to_string(h.version) + ", this program reads version " +
                   std::to_string(version));
  if (h.header_size != sizeof(Header) || h.slot_size != sizeof(Slot))
    throw BadBoard("layout differs from this program's (header " + std::to_string(h.header_size) + " bytes, slot " +
                   std::to_string(h.slot_size) + "; expected " + std::to_string(sizeof(Header)) + " and " +
                   std::to_string(sizeof(Slot)) + "): built from another version of dsm");
  if (h.nranks < 1 || h.nranks > max_ranks)
    throw BadBoard("claims " + std::to_string(h.nranks) + " ranks (1 to " + std::to_string(max_ranks) + " allowed)");
  const int nranks = static_cast<int>(h.nranks);
  if (image.size() < image_size(nranks))
    throw BadBoard("truncated: " + std::to_string(image.size()) + " bytes for " + std::to_string(nranks) +
                   " ranks, which need " + std::to_string(image_size(nranks)));
  const std::size_t job_len = strnlen(h.job, job_id_size);
  Snapshot snap;
  snap.job.assign(h.job, job_len);
  if (job_len == job_id_size || !snap.job.starts_with("dsm-") || snap.job.size() != 20 ||
      snap.job.find_first_not_of("0123456789abcdef", 4) != std::string::npos)
    throw BadBoard("malformed job id");
  snap.nranks = nranks;
  snap.created_ns = h.created_ns;
  snap.taken_ns = stats::now_ns();
  const Slot* slots = slots_of(image);
  for (int r = 0; r < nranks; ++r) {
    const Slot& s = slots[r];
    const std::uint32_t index = s.rank.load(std::memory_order_relaxed);
    const std::uint32_t state = s.state.load(std::memory_order_relaxed);
    if (index != static_cast<std::uint32_t>(r))
      throw BadBoard("slot " + std::to_string(r) + " claims to be rank " + std::to_string(index));
    if (state >= state_count)
      throw BadBoard("slot " + std::to_string(r) + " has an unknown state " + std::to_string(state));
    if (state == static_cast<std::uint32_t>(RankState::absent)) continue;
    Row& row = snap.rows.emplace_back();
    row.rank = r;
    row.state = static_cast<RankState>(state);
    row.pid = s.pid.load(std::memory_order_relaxed);
    row.since_ns = s.since_ns.load(std::memory_order_relaxed);
    stats::copy(s.stats, row.stats);
    net::copy(s.traffic, row.traffic);
  }
  return snap;
}

std::string format_table(const Snapshot& snap) {
  auto secs = [](std::uint64_t from, std::uint64_t to) { return to > from ? (to - from) * 1e-9 : 0.0; };
  char line[256];
  std::snprintf(line, sizeof line, "job %s: %d ranks, %zu on this host, %.1f s\n", snap.job.c_str(), snap.nranks,
                snap.rows.size(), secs(snap.created_ns, snap.taken_ns));
  std::string out = line;
  std::snprintf(line, sizeof line, "%5s %8s %-10s %8s %10s %12s %8s %9s %8s %9s\n", "rank", "pid", "state",
                "for(s)", "msgs_sent", "bytes_sent", "comm(s)", "barriers", "locks", "faults");
  out += line;
  for (const Row& r : snap.rows) {
    const auto& c = r.stats;
    const double comm = (c.comm_wait_ns + c.lock_wait_ns + c.barrier_wait_ns) * 1e-9;
    std::snprintf(line, sizeof line, "%5d %8llu %-10s %8.2f %10llu %12llu %8.3f %9llu %8llu %9llu\n", r.rank,
                  (unsigned long long)r.pid, to_string(r.state), secs(r.since_ns, snap.taken_ns),
                  (unsigned long long)r.traffic.msgs_sent.load(), (unsigned long long)r.traffic.bytes_sent.load(),
                  comm, (unsigned long long)c.barriers.load(), (unsigned long long)c.lock_acquires.load(),
                  (unsigned long long)(c.read_faults + c.write_faults));
    out += line;
  }
  return out;
}

std::string to_json(const Snapshot& snap) {
  std::string out = "{\"job\": \"" + snap.job + "\", \"nranks\": " + std::to_string(snap.nranks) +
                    ", \"seconds\": " + seconds(snap.taken_ns - snap.created_ns) + ", \"ranks\": [";
  for (const Row& r : snap.rows) {
    out += std::string(r.rank == snap.rows.front().rank ? "" : ", ") + "{\"rank\": " + std::to_string(r.rank) +
           ", \"pid\": " + std::to_string(r.pid) + ", \"state\": \"" + to_string(r.state) +
           "\", \"state_seconds\": " + seconds(snap.taken_ns > r.since_ns ? snap.taken_ns - r.since_ns : 0) +
           ", \"counters\": " + rank_counters_json(r.stats, r.traffic, (snap.taken_ns - snap.created_ns) * 1e-9, "") + "}";
  }
  return out + "]}";
}

// ---- the mapping, shared by the writer and the reader

struct Board::Mapping {
  bip::shared_memory_object shm;
  bip::mapped_region region;
  std::span<std::byte> image() { return {static_cast<std::byte*>(region.get_address()), region.get_size()}; }
};

Board::Board(const std::string& token, int nranks) : name_(board_name(token)), map_(std::make_unique<Mapping>()) {
  const std::size_t size = image_size(nranks);
  try {
    map_->shm = bip::shared_memory_object(bip::create_only, name_.c_str(), bip::read_write);
    created_ = true;
    map_->shm.truncate(static_cast<bip::offset_t>(size));
    map_->region = bip::mapped_region(map_->shm, bip::read_write);
    format(map_->image(), nranks, job_id(token));
    return;
  } catch (const bip::interprocess_exception& e) {
    if (created_) {
      remove_name();
      throw std::runtime_error("cannot create the statistics board " + name_ + ": " + e.what());
    }
    if (e.get_error_code() != bip::already_exists_error)
      throw std::runtime_error("cannot create the statistics board " + name_ + ": " + e.what());
  }
  // Another process of this host created it: wait until it is sized and written.
  map_->shm = bip::shared_memory_object(bip::open_only, name_.c_str(), bip::read_write);
  const auto deadline = std::chrono::steady_clock::now() + creator_grace;
  for (;;) {
    bip::offset_t got = 0;
    if (map_->shm.get_size(got) && static_cast<std::size_t>(got) >= size) {
      map_->region = bip::mapped_region(map_->shm, bip::read_write, 0, size);
      if (header_of(map_->image()).magic.load(std::memory_order_acquire) != 0) break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      // Never sized: its creator failed (out of room in /dev/shm, say, when it removes the
      // name again) or stopped; a board sized but not written, read() below describes.
      if (map_->region.get_size() == 0)
        throw std::runtime_error("statistics board " + name_ + " was not sized by the rank that created it within " +
                                 std::to_string(creator_grace.count()) + " s (see that rank's message)");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Snapshot snap;
  try {
    snap = board::read(map_->image());
  } catch (const BadBoard& e) {
    throw std::runtime_error("statistics board " + name_ + " is " + e.what());
  }
  if (snap.job != job_id(token) || snap.nranks != nranks)
    throw std::runtime_error("statistics board " + name_ + " belongs to another job");
}

Board::~Board() { remove_name(); }

void Board::remove_name() {
  if (created_) bip::shared_memory_object::remove(name_.c_str());
  created_ = false;
}

Slot& Board::slot(int rank) { return slots_of(map_->image())[rank]; }

Snapshot Board::read() const { return board::read(map_->image()); }

struct View::Mapping {
  bip::shared_memory_object shm;
  bip::mapped_region region;
};

View::View(const std::string& name) : name_(name), map_(std::make_unique<Mapping>()) {
  try {
    map_->shm = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_only);
    bip::offset_t size = 0;
    if (!map_->shm.get_size(size) || size <= 0) throw BadBoard(name + ": empty object, not a statistics board");
    map_->region = bip::mapped_region(map_->shm, bip::read_only);
  } catch (const bip::interprocess_exception& e) {
    throw BadBoard(name + ": " + (e.get_error_code() == bip::not_found_error
                                      ? std::string("no such board (the job ended, or it runs on another host)")
                                      : std::string(e.what())));
  }
}

View::~View() = default;

Snapshot View::read() const {
  try {
    return board::read({static_cast<const std::byte*>(map_->region.get_address()), map_->region.get_size()});
  } catch (const BadBoard& e) {
    throw BadBoard(name_ + ": " + e.what());
  }
}

// ---- the publishing side of a rank

namespace {
Slot* g_slot = nullptr;
}

void attach(Slot* slot) {
  g_slot = slot;
  if (!slot) return;
  slot->pid.store(static_cast<std::uint64_t>(getpid()), std::memory_order_relaxed);
  set_state(RankState::running);
}

void set_state(RankState s) {
  if (!g_slot) return;
  // The coarse clock (the monotonic clock at the last tick, a few ms old) costs a few ns,
  // and a state change happens at every lock wait and barrier.
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  g_slot->since_ns.store(std::uint64_t(ts.tv_sec) * 1'000'000'000u + std::uint64_t(ts.tv_nsec), std::memory_order_relaxed);
  g_slot->state.store(static_cast<std::uint32_t>(s), std::memory_order_release);
}

StateScope::StateScope(RankState s)
    : previous_(g_slot ? static_cast<RankState>(g_slot->state.load(std::memory_order_relaxed)) : RankState::running) {
  set_state(s);
}

StateScope::~StateScope() { set_state(previous_); }

}  // namespace dsm::board
