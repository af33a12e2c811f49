// Pipelined nests (dsm/pipeline.hpp): blocks of rows in rank order, tiles of columns, the
// last row's part of each tile sent by value to the rank below, and the grain chosen from
// measured costs.
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include "glue.hpp"
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

// A tile's message: u64 sweep, i64 first column, i64 end column, then the last row's bytes.
constexpr std::size_t message_header = 24;

Range block_of(long lb, long ub, int rank, int ranks) {
  const long n = ub - lb;
  return {lb + n * rank / ranks, lb + n * (rank + 1) / ranks, 1};
}

std::byte* element(const Carried& a, long i, long j) {
  return static_cast<std::byte*>(a.base) + (i * a.row_stride + j) * static_cast<long>(a.elem_size);
}

[[noreturn]] void malformed(const std::string& name, int from, const char* why) {
  runtime::stop_rank("pipeline " + name + ": malformed tile message from rank " + std::to_string(from) + ": " + why);
}

}  // namespace

Pipeline::Pipeline(std::string name, long row_lb, long row_ub, long col_lb, long col_ub, Carried array, int lookahead)
    : name_(std::move(name)), cols_{col_lb, col_ub, 1}, array_(array), lookahead_(lookahead) {
  if (row_ub < row_lb || col_ub < col_lb)
    throw std::invalid_argument("dsm::lb::Pipeline " + name_ + ": empty bounds must not be reversed");
  if (!array.base || array.elem_size == 0 || array.row_stride < col_ub)
    throw std::invalid_argument("dsm::lb::Pipeline " + name_ + ": the carried array needs a base, an element size and rows of at least col_ub elements");
  if (lookahead < 0) throw std::invalid_argument("dsm::lb::Pipeline " + name_ + ": lookahead must not be negative");
  const int me = dsm::rank(), ranks = dsm::nprocs();
  mine_ = block_of(row_lb, row_ub, me, ranks);
  active_ = 0;
  for (int r = 0; r < ranks; ++r) {
    const Range b = block_of(row_lb, row_ub, r, ranks);
    if (b.lb == b.ub) continue;
    ++active_;
    if (r < me) above_ = r;
    if (r > me && below_ < 0) below_ = r;
  }
  active_ = std::max(active_, 1);
  const auto fixed = sys::env_int("DSM_PIPE_GRAIN", 0, 0, std::uint64_t(1) << 40);
  fixed_grain_ = fixed > 0;
  // The first sweep, unmeasured: a few tiles per rank keep the fill short.
  grain_ = fixed_grain_ ? long(fixed) : std::max(1L, (col_ub - col_lb) / (4L * active_));
  if (active_ == 1 && !fixed_grain_) grain_ = std::max(1L, col_ub - col_lb);
}

Pipeline::Sweep Pipeline::sweep() {
  ++sweeps_;
  received_ = cols_.lb;
  now_ = SweepFigures{grain_, 0, 0, 0, 0};
  tile_.width_ = grain_;
  tile_.skew_ = lookahead_;
  tile_.first_row_ = mine_.lb;
  tile_.col_lb_ = cols_.lb;
  tile_.col_ub_ = cols_.ub;
  // Until the last row's part of a tile starts past the last column.
  const long span = (cols_.ub - cols_.lb) + long(lookahead_) * std::max(0L, mine_.ub - mine_.lb - 1);
  tiles_ = mine_.lb == mine_.ub || cols_.lb == cols_.ub ? 0 : (span + grain_ - 1) / grain_;
  return Sweep(this);
}

Pipeline::Sweep::iterator Pipeline::Sweep::begin() {
  if (pipe_->tiles_ > 0) pipe_->start_tile(0);
  return iterator(pipe_, 0);
}

Pipeline::Sweep::iterator& Pipeline::Sweep::iterator::operator++() {
  pipe_->finish_tile();
  if (++k_ < pipe_->tiles_) {
    pipe_->start_tile(k_);
  } else {
    pipe_->last_ = pipe_->now_;
    pipe_->choose_grain();
  }
  return *this;
}

void Pipeline::start_tile(long k) {
  tile_.lb_ = cols_.lb + k * grain_;
  // The first row's part reads the rank above's last row up to `lookahead` columns past it.
  await(std::min(tile_.cols(mine_.lb).ub + lookahead_, cols_.ub));
  tile_started_ = dsm::wtime();
}

void Pipeline::finish_tile() {
  const double t = dsm::wtime();
  now_.compute_s += t - tile_started_;
  ++now_.tiles;
  const Range last = tile_.cols(mine_.ub - 1);
  if (below_ < 0 || last.ub <= last.lb) return;
  const std::size_t bytes = std::size_t(last.ub - last.lb) * array_.elem_size;
  std::vector<std::byte> msg(message_header + bytes);
  const std::uint64_t sweep = sweeps_;
  const std::int64_t head[2] = {last.lb, last.ub};
  std::memcpy(msg.data(), &sweep, 8);
  std::memcpy(msg.data() + 8, head, 16);
  std::memcpy(msg.data() + message_header, element(array_, mine_.ub - 1, last.lb), bytes);
  detail::send_to(below_, msg);
  now_.messages_s += dsm::wtime() - t;
}

void Pipeline::await(long through) {
  if (above_ < 0) return;
  while (received_ < through) {
    const double t0 = dsm::wtime();
    const std::vector<std::byte> msg = detail::receive_from(above_);
    const double t1 = dsm::wtime();
    now_.wait_s += t1 - t0;
    if (msg.size() < message_header) malformed(name_, above_, "shorter than its header");
    std::uint64_t sweep;
    std::int64_t head[2];
    std::memcpy(&sweep, msg.data(), 8);
    std::memcpy(head, msg.data() + 8, 16);
    if (sweep != sweeps_) malformed(name_, above_, "of another sweep");
    if (head[0] != received_ || head[1] <= head[0] || head[1] > cols_.ub)
      malformed(name_, above_, "columns out of order or outside the nest");
    if (msg.size() - message_header != std::size_t(head[1] - head[0]) * array_.elem_size)
      malformed(name_, above_, "bytes that do not fill its columns");
    detail::write_received(element(array_, mine_.lb - 1, head[0]),
                           std::span(msg).subspan(message_header));
    received_ = head[1];
    now_.messages_s += dsm::wtime() - t1;
  }
}

// Seed 000, section 3.3.4: a sweep of M tiles takes (M + P - 1) tile times plus
// (M + P - 2) shifts; with this rank's compute time T per sweep, the best M is
// sqrt((P - 1) T / shift), the grain its share of the columns. (Skewed tiles add a fill of
// their own within a rank, which no grain shortens: the dependences make it.)
void Pipeline::choose_grain() {
  if (fixed_grain_ || active_ == 1 || last_.tiles == 0) return;
  const int peer = below_ >= 0 ? below_ : above_;
  if (shift_s_ < 0) shift_s_ = detail::round_trip_seconds(peer) / 2;
  const double shift = shift_s_ + last_.messages_s / double(last_.tiles);
  const double compute = last_.compute_s;
  if (compute <= 0 || shift <= 0) return;
  const double tiles = std::sqrt(double(active_ - 1) * compute / shift);
  const long cols = cols_.ub - cols_.lb;
  grain_ = std::clamp(long(std::ceil(double(cols) / std::max(tiles, 1.0))), 1L, cols);
}

}  // namespace dsm::lb
