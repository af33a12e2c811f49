// Pipelined nests (dsm/pipeline.hpp): blocks of rows dealt to the ranks in turn, skewed tiles
// of columns, each block's last row's part of a tile sent by value to the rank of the block
// below, and the grain chosen from measured costs.
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include "glue.hpp"
#include "pipeline_blocks.hpp"
#include "runtime/env_setting.hpp"
#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace dsm::lb {

namespace {

// A tile's message: u64 sweep, i64 block, i64 first column, i64 end column, then the
// block's last row's bytes over those columns.
constexpr std::size_t message_header = 32;
// Blocks per rank: enough that the first rows' fill and the last rows' drain, which one
// rank runs while the others wait, are a small part of a sweep; few enough that the
// messages per sweep stay few.
constexpr long blocks_per_rank = 4;
// A new share of the rows only when it moves more than this fraction of them.
constexpr double rebalance_threshold = 0.03;
// A rank whose core another program shares leaves the pipeline below this fraction of the
// fastest rank's speed. Far above the loops' DSM_LB_LEAVE: every tile it passes on waits for
// its core, so a rank at half a core made two ranks slower than one (docs/results.md).
constexpr double pipeline_leave = 0.8;

std::byte* element(const Carried& a, long i, long j) {
  return static_cast<std::byte*>(a.base) + (i * a.row_stride + j) * static_cast<long>(a.elem_size);
}

}  // namespace

Pipeline::Pipeline(std::string name, long row_lb, long row_ub, long col_lb, long col_ub, Carried array, int lookahead)
    : name_(std::move(name)), all_rows_{row_lb, row_ub, 1}, cols_{col_lb, col_ub, 1}, array_(array), lookahead_(lookahead) {
  const std::string what = "dsm::lb::Pipeline " + name_ + ": ";
  if (row_ub < row_lb || col_ub < col_lb) throw std::invalid_argument(what + "bounds must not be reversed");
  if (!array.base || array.elem_size == 0 || array.row_stride < col_ub)
    throw std::invalid_argument(what + "the carried array needs a base, an element size and rows of at least col_ub elements");
  if (lookahead < 0) throw std::invalid_argument(what + "lookahead must not be negative");
  me_ = dsm::rank();
  ranks_ = dsm::nprocs();
  balance_ = runtime::run_options().policy != Policy::static_blocks;
  const auto fixed = sys::env_int("DSM_PIPE_GRAIN", 0, 0, std::uint64_t(1) << 40);
  fixed_grain_ = fixed > 0;
  // The first sweep, unmeasured: a few tiles per block.
  grain_ = fixed_grain_ ? long(fixed) : std::max(1L, (col_ub - col_lb) / 4);
  tile_.skew_ = lookahead_;
  tile_.col_lb_ = col_lb;
  tile_.col_ub_ = col_ub;
  share_rows();
  runtime::glue().pipelines.push_back(this);
  detail::set_stats_section_hook(runtime::stats_json);
}

Pipeline::~Pipeline() { std::erase(runtime::glue().pipelines, this); }

Pipeline& Pipeline::reuse(std::optional<Pipeline>& slot, std::string name, long row_lb, long row_ub, long col_lb,
                          long col_ub, Carried array, int lookahead) {
  const bool same = slot && slot->all_rows_.lb == row_lb && slot->all_rows_.ub == row_ub && slot->cols_.lb == col_lb &&
                    slot->cols_.ub == col_ub && slot->array_.base == array.base && slot->array_.elem_size == array.elem_size &&
                    slot->array_.row_stride == array.row_stride && slot->lookahead_ == lookahead;
  if (!same) {
    slot.reset();
    slot.emplace(std::move(name), row_lb, row_ub, col_lb, col_ub, array, lookahead);
  }
  return *slot;
}

// The speeds the blocks follow: equal until measured.
std::vector<double> Pipeline::basis() const {
  return basis_.empty() ? std::vector<double>(std::size_t(ranks_), 1.0) : basis_;
}

void Pipeline::share_rows() {
  const BlockLayout layout =
      deal_blocks(all_rows_.lb, all_rows_.ub - all_rows_.lb, basis(), ranks_ == 1 ? 1 : blocks_per_rank, left_);
  starts_ = layout.starts;
  owners_ = layout.owners;
  mine_.clear();
  for (long k = 0; k < blocks(); ++k)
    if (owners_[std::size_t(k)] == me_) mine_.push_back(k);
}

long Pipeline::blocks() const { return long(owners_.size()); }
int Pipeline::owner(long k) const { return owners_[std::size_t(k)]; }
Range Pipeline::block(long k) const { return {starts_[std::size_t(k)], starts_[std::size_t(k + 1)], 1}; }

std::vector<Range> Pipeline::rows_of(int rank) const {
  std::vector<Range> out;
  for (long k = 0; k < blocks(); ++k)
    if (owner(k) == rank) out.push_back(block(k));
  return out;
}

// Until the last row's part of a tile starts past the last column.
long Pipeline::tiles_in(long k) const {
  const Range b = block(k);
  if (b.ub <= b.lb || cols_.ub <= cols_.lb) return 0;
  const long span = (cols_.ub - cols_.lb) + long(lookahead_) * (b.ub - b.lb - 1);
  return (span + grain_ - 1) / grain_;
}

Pipeline::Sweep Pipeline::sweep() {
  ++sweeps_;
  runtime::forget_reads();  // its tiles read rows no descriptor of it bounds
  // Every rank's speed, once measured (the first sweep faults its rows in): the blocks
  // follow them when the rows would move by more than noise.
  if (balance_ && ranks_ > 1 && sweeps_ > 2) {
    const detail::CoreShare core = detail::watch_core();
    const double mine[2] = {speed_, core.share && *core.share < 1.0 ? 1.0 : 0.0};
    std::vector<std::byte> bytes(sizeof mine);
    std::memcpy(bytes.data(), mine, sizeof mine);
    std::vector<double> speeds;
    std::vector<char> shared;
    for (const auto& part : runtime::gather(bytes)) {
      double v[2] = {0, 0};
      if (part.size() == sizeof v) std::memcpy(v, part.data(), sizeof v);
      speeds.push_back(v[0]);
      shared.push_back(v[1] != 0);
    }
    // A rank out comes back at the speed it left with, which its next sweeps correct.
    const Turns turns = update_left(left_, speeds, shared, pipeline_leave);
    departures_ += turns.departures;
    returns_ += turns.returns;
    if (turns.departures + turns.returns > 0 || shares_differ(basis(), speeds, rebalance_threshold, left_)) {
      basis_ = speeds;
      share_rows();
    }
  }
  claim_blocks();
  now_ = SweepFigures{grain_, 0, 0, 0, 0};
  tile_.width_ = grain_;
  tiles_ = 0;
  for (long k : mine_) tiles_ += tiles_in(k);
  if (tiles_ == 0) last_ = now_;  // out of the pipeline: a sweep of nothing (its speed kept)
  mine_at_ = 0;
  tile_at_ = 0;
  received_block_ = -1;
  return Sweep(this);
}

Pipeline::Sweep::iterator Pipeline::Sweep::begin() {
  if (pipe_->tiles_ > 0) pipe_->start_tile();
  return iterator(pipe_, 0);
}

Pipeline::Sweep::iterator& Pipeline::Sweep::iterator::operator++() {
  Pipeline& p = *pipe_;
  p.finish_tile();
  if (++at_ == p.tiles_) {
    p.last_ = p.now_;
    p.measure_speed();
    p.choose_grain();
    return *this;
  }
  if (++p.tile_at_ == p.tiles_in(p.mine_[p.mine_at_])) {
    ++p.mine_at_;
    p.tile_at_ = 0;
  }
  p.start_tile();
  return *this;
}

// Each block's pages to its rank (dsm::own), as the DOALL glue claims pages only one rank
// writes: no twins, no diffs, and its owner keeps them writable across sweeps. The pages
// wholly inside its rows (whose columns outside the nest nobody writes in a sweep).
void Pipeline::claim_blocks() {
  if (ranks_ == 1 || !runtime::run_options().exclusive || cols_.lb == cols_.ub) return;
  for (long k = 0; k < blocks(); ++k) {
    const Range b = block(k);
    const std::byte* from = element(array_, b.lb, 0);
    dsm::own(owner(k), from, std::size_t(element(array_, b.ub, 0) - from));
  }
}

// Elements per second of the time inside this rank's tiles: its own work, slowed by what
// takes its core meanwhile (another program, a rank of the job on the same core). Not CPU
// time at the thread's share of the sweep's run time: a rank that mostly waits for tiles
// waits for its core again at each wake-up, and that latency, counted as a small share,
// made an idle rank look as slow as one with eight times the work.
void Pipeline::measure_speed() {
  long rows = 0;
  for (long k : mine_) rows += block(k).ub - block(k).lb;
  const double speed = double(rows) * double(cols_.ub - cols_.lb) / std::max(last_.compute_s, 1e-9);
  speed_ = speed_ > 0 ? 0.5 * (speed_ + speed) : speed;
}

void Pipeline::start_tile() {
  const long block_at = mine_[mine_at_];
  tile_.rows_ = block(block_at);
  tile_.lb_ = cols_.lb + tile_at_ * grain_;
  // The block's first row reads the block above's last row `lookahead` columns past its own.
  if (block_at > 0 && owner(block_at - 1) != me_)
    await(block_at - 1, std::min(tile_.cols(tile_.rows_.lb).ub + lookahead_, cols_.ub));
  tile_started_ = dsm::wtime();
}

void Pipeline::finish_tile() {
  const double t = dsm::wtime();
  now_.compute_s += t - tile_started_;
  ++now_.tiles;
  const long block_at = mine_[mine_at_], below = block_at + 1;
  const Range last = tile_.cols(tile_.rows_.ub - 1);
  if (below >= blocks() || owner(below) == me_ || last.ub <= last.lb) return;
  const std::size_t bytes = std::size_t(last.ub - last.lb) * array_.elem_size;
  std::vector<std::byte> msg(message_header + bytes);
  const std::uint64_t sweep = sweeps_;
  const std::int64_t head[3] = {block_at, last.lb, last.ub};
  std::memcpy(msg.data(), &sweep, 8);
  std::memcpy(msg.data() + 8, head, 24);
  std::memcpy(msg.data() + message_header, element(array_, tile_.rows_.ub - 1, last.lb), bytes);
  detail::send_to(owner(below), msg);
  now_.messages_s += dsm::wtime() - t;
}

void Pipeline::await(long k, long through) {
  const int from = owner(k);
  if (received_block_ != k) {  // the last block from that rank came in whole (FIFO order)
    received_block_ = k;
    received_ = cols_.lb;
  }
  const auto malformed = [&](const char* why) {
    runtime::stop_rank("pipeline " + name_ + ": malformed tile message from rank " + std::to_string(from) + ": " + why);
  };
  while (received_ < through) {
    const double t0 = dsm::wtime();
    const std::vector<std::byte> msg = detail::receive_from(from);
    const double t1 = dsm::wtime();
    now_.wait_s += t1 - t0;
    if (msg.size() < message_header) malformed("shorter than its header");
    std::uint64_t sweep;
    std::int64_t head[3];
    std::memcpy(&sweep, msg.data(), 8);
    std::memcpy(head, msg.data() + 8, 24);
    if (sweep != sweeps_ || head[0] != k) malformed("of another sweep or block");
    if (head[1] != received_ || head[2] <= head[1] || head[2] > cols_.ub) malformed("columns out of order or outside the nest");
    if (msg.size() - message_header != std::size_t(head[2] - head[1]) * array_.elem_size)
      malformed("bytes that do not fill its columns");
    detail::write_received(element(array_, block(k).ub - 1, head[1]), std::span(msg).subspan(message_header));
    received_ = head[2];
    now_.messages_s += dsm::wtime() - t1;
  }
}

// Seed 000, section 3.3.4: a pipeline of M tiles per rank takes (M + P - 1) tile times plus
// (M + P - 2) messages; with this rank's compute time T per sweep, the best M is
// sqrt((P - 1) T / message), the grain its share of the columns of its blocks. (Skewed
// tiles add a fill of their own within a block, which no grain shortens: the dependences
// make it.)
void Pipeline::choose_grain() {
  if (fixed_grain_ || ranks_ == 1 || last_.tiles == 0) return;
  if (shift_s_ < 0) shift_s_ = detail::round_trip_seconds(me_ == 0 ? 1 : 0) / 2;
  const double shift = shift_s_ + last_.messages_s / double(last_.tiles);
  if (last_.compute_s <= 0 || shift <= 0) return;
  const double tiles = std::max(1.0, std::sqrt(double(std::min<long>(ranks_, blocks()) - 1) * last_.compute_s / shift));
  const long mine = long(mine_.size());
  const long cols = cols_.ub - cols_.lb;
  grain_ = std::clamp(long(std::ceil(double(mine * cols) / tiles)), 1L, std::max(cols, 1L));
}

}  // namespace dsm::lb
