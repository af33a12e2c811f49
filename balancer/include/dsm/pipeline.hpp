// Pipelined (DOACROSS) loop nests: what a person writes for a loop whose iterations depend on
// the ones before, Gauss-Seidel and SOR with the new values of the upper and left neighbours,
// wavefronts:
//
//   dsm::lb::Pipeline pipe("gs.cpp:12", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 1);
//   for (const dsm::lb::Tile& tile : pipe.sweep())
//     for (long i = tile.rows().lb; i < tile.rows().ub; ++i)
//       for (long j = tile.cols(i).lb; j < tile.cols(i).ub; ++j) a[i][j] = f(a[i-1][j-1..j+1], a[i][j-1], ...);
//
// The outer loop's rows are cut into blocks dealt to the ranks in turn, a few per rank, so
// that every rank has work while the first rows fill the pipeline; each rank's blocks hold a
// share of the rows proportional to its measured speed (other programs take CPU time from
// some ranks), moved between sweeps only for a real change (not under DSM_LB=static). A rank
// runs its blocks in order, each one tile of columns at a time. Before a
// tile it waits until the rank of the block above has finished the columns the tile reads
// of that block's last row; after it, it sends its block's last row's part of the tile to
// the rank of the block below, by value, with the signal (no page fetched, no barrier inside
// a sweep). Each iteration sees the same values, in the same order of operations, as the
// sequential nest: the results are bit for bit the same.
//
// Where (i, j) reads (i - 1, j + d) for d up to a lookahead s > 0 (a 9-point stencil: s = 1),
// a rectangular tile would run (i + 1, j - 1) before (i, j), which reads its old value: the
// tiles are skewed instead, row i of a tile s columns left of row i - 1 (a parallelogram),
// which keeps every dependence in the sequential order. With s = 0 (5-point) they are strips.
//
// The tile width (the grain) is chosen before each sweep from the last sweep's measured
// cost per element and per message (the pipeline's fill against the cost per message), or
// fixed with DSM_PIPE_GRAIN.
#pragma once

#include <dsm/balancer.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dsm::lb {

// The array the nest carries between ranks: element (i, j) of the nest is at
// base + (i * row_stride + j) elements (a row-major grid indexed by the loop counters).
struct Carried {
  void* base = nullptr;
  std::size_t elem_size = 0;
  long row_stride = 0;
};
template <class T>
Carried carried(T* base, long row_stride) {
  return Carried{base, sizeof(T), row_stride};
}
// What dsm-pass generates from a nest's write section (elements [lo, hi] of row i written at
// base + i * row_stride, columns [col_lb, col_ub)): the array whose element (i, j) is
// base + i * row_stride + j + (lo - col_lb). Throws std::invalid_argument when the section
// is not one element per column (the subscript is not [i][j + c]).
template <class T>
Carried carried_section(T* base, long row_stride, long lo, long hi, long col_lb, long col_ub) {
  if (hi - lo != col_ub - 1 - col_lb)
    throw std::invalid_argument("dsm: a pipelined nest must write its array at [i][j + c] (one element per column)");
  return Carried{base + (lo - col_lb), sizeof(T), row_stride};
}

// One tile: rows of one block, and the columns it covers in each.
class Tile {
 public:
  const Range& rows() const { return rows_; }
  Range cols(long i) const {
    const long shift = skew_ * (i - rows_.lb);
    return {std::max(col_lb_, lb_ - shift), std::min(col_ub_, lb_ + width_ - shift), 1};
  }

 private:
  friend class Pipeline;
  Range rows_{0, 0, 1};
  long lb_ = 0, width_ = 0, skew_ = 0, col_lb_ = 0, col_ub_ = 0;
};

// What one sweep cost this rank, and the grain it ran at.
struct SweepFigures {
  long grain = 0;          // columns per tile
  long tiles = 0;
  double compute_s = 0;    // inside the tiles
  double wait_s = 0;       // for the rank of the block above
  double messages_s = 0;   // sending last rows' parts and writing received ones
};

class Pipeline {
 public:
  // The nest rows [row_lb, row_ub) x columns [col_lb, col_ub), whose iteration (i, j) reads
  // what (i, j - 1) and (i - 1, j + d), d <= `lookahead`, wrote in `array` (0: a 5-point
  // stencil, 1: a 9-point one). Collective in effect: every rank constructs it with the
  // same arguments. Invalid arguments throw std::invalid_argument.
  Pipeline(std::string name, long row_lb, long row_ub, long col_lb, long col_ub, Carried array, int lookahead);
  ~Pipeline();
  // What dsm-pass generates: the pipeline in `slot`, kept between the nest's executions, and
  // made afresh (equal blocks, grain unmeasured) when its bounds, array or lookahead change.
  static Pipeline& reuse(std::optional<Pipeline>& slot, std::string name, long row_lb, long row_ub, long col_lb,
                         long col_ub, Carried array, int lookahead);
  Pipeline(const Pipeline&) = delete;  // the runtime's statistics refer to it
  Pipeline& operator=(const Pipeline&) = delete;

  // The blocks of rows `rank` runs in the sweep last started, in order (none for a rank
  // without rows): what it writes, for dsm::own between sweep() and the first tile.
  std::vector<Range> rows_of(int rank) const;

  // One execution of the nest. Collective: every rank starts the same sweeps, in which the
  // ranks agree on the blocks (at a barrier, once the speeds are measured). Iterating it
  // yields this rank's tiles, in order, each once
  // the rank of the block above has sent what it reads; leaving a tile (the iterator's ++)
  // sends its block's last row's part to the rank of the block below.
  class Sweep {
   public:
    class iterator {
     public:
      const Tile& operator*() const { return pipe_->tile_; }
      const Tile* operator->() const { return &pipe_->tile_; }
      iterator& operator++();
      bool operator!=(const iterator& o) const { return at_ != o.at_; }
      bool operator==(const iterator& o) const { return at_ == o.at_; }

     private:
      friend class Sweep;
      iterator(Pipeline* pipe, long at) : pipe_(pipe), at_(at) {}
      Pipeline* pipe_;
      long at_;  // tiles done so far in this sweep
    };
    iterator begin();
    iterator end() { return iterator(pipe_, pipe_->tiles_); }

   private:
    friend class Pipeline;
    explicit Sweep(Pipeline* pipe) : pipe_(pipe) {}
    Pipeline* pipe_;
  };
  Sweep sweep();

  // Its name, the sweeps started, the grain the next sweep runs at, and what the last cost
  // (also in `dsmrun --stats`, rank 0's).
  const std::string& name() const { return name_; }
  std::uint64_t sweeps() const { return sweeps_; }
  long grain() const { return grain_; }
  const SweepFigures& last() const { return last_; }
  // Times a rank left the pipeline (another program on its core made it far slower), and
  // came back (its core its own again).
  long departures() const { return departures_; }
  long returns() const { return returns_; }

 private:
  Range block(long k) const;
  int owner(long k) const;
  long blocks() const;
  long tiles_in(long k) const;
  std::vector<double> basis() const;
  void share_rows();
  void claim_blocks();
  void measure_speed();
  void start_tile();
  void finish_tile();
  void await(long k, long through);
  void choose_grain();

  std::string name_;
  Range all_rows_, cols_;
  Carried array_;
  int lookahead_;
  int me_ = 0, ranks_ = 1;
  // Block k: rows [starts_[k], starts_[k + 1]) of rank owners_[k].
  std::vector<long> starts_;
  std::vector<int> owners_;
  std::vector<long> mine_;  // this rank's blocks, in order
  std::vector<double> basis_;  // the speeds the blocks follow (empty: equal shares)
  std::vector<char> left_;     // per rank: out of the pipeline while its core is shared
  long departures_ = 0, returns_ = 0;
  double speed_ = 0;  // elements per second of this rank's tiles, smoothed
  bool balance_ = true;
  long grain_ = 0;
  bool fixed_grain_ = false;
  double shift_s_ = -1;  // one message's trip to the next rank (measured once)
  std::uint64_t sweeps_ = 0;
  long tiles_ = 0;               // this rank's, in this sweep
  std::size_t mine_at_ = 0;  // the current block, in mine_
  long tile_at_ = 0;         // and its tile
  Tile tile_;
  long received_block_ = -1, received_ = 0;  // block above's last row: columns in so far
  double tile_started_ = 0;
  SweepFigures now_, last_;
};

}  // namespace dsm::lb
