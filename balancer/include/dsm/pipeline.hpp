// Pipelined (DOACROSS) loop nests: what a person writes for a loop whose iterations depend on
// the ones before, Gauss-Seidel and SOR with the new values of the upper and left neighbours,
// wavefronts:
//
//   dsm::lb::Pipeline pipe("gs.cpp:12", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 1);
//   for (const dsm::lb::Tile& tile : pipe.sweep())
//     for (long i = pipe.rows().lb; i < pipe.rows().ub; ++i)
//       for (long j = tile.cols(i).lb; j < tile.cols(i).ub; ++j) a[i][j] = f(a[i-1][j-1..j+1], a[i][j-1], ...);
//
// The outer loop's rows go to the ranks in blocks, in rank order; each rank runs its block one
// tile of columns at a time. Before a tile it waits for the rank above to have finished
// the columns the tile reads of its last row; after it, it sends its own last row's part
// of the tile to the rank below, by value, with the signal (no page fetched, no barrier
// inside a sweep). Each iteration sees the same values, in the same order of operations, as
// the sequential nest: the results are bit for bit the same.
//
// Where (i, j) reads (i - 1, j + d) for d up to a lookahead s > 0 (a 9-point stencil: s = 1),
// a rectangular tile would run (i + 1, j - 1) before (i, j), which reads its old value: the
// tiles are skewed instead, row i of a tile s columns left of row i - 1 (a parallelogram),
// which keeps every dependence in the sequential order. With s = 0 (5-point) they are strips.
//
// The tile width (the grain) is chosen before each sweep from the last sweep's measured
// cost per element and per tile sent (the pipeline fill against the cost per message), or
// fixed with DSM_PIPE_GRAIN.
#pragma once

#include <dsm/balancer.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

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

// One tile of a rank's block: the columns it covers in each row.
class Tile {
 public:
  Range cols(long i) const {
    const long shift = skew_ * (i - first_row_);
    return {std::max(col_lb_, lb_ - shift), std::min(col_ub_, lb_ + width_ - shift), 1};
  }

 private:
  friend class Pipeline;
  long lb_ = 0, width_ = 0, skew_ = 0, first_row_ = 0, col_lb_ = 0, col_ub_ = 0;
};

// What one sweep cost this rank, and the grain it ran at.
struct SweepFigures {
  long grain = 0;            // columns per strip
  long tiles = 0;
  double compute_s = 0;      // inside the tiles
  double wait_s = 0;         // for the rank above
  double messages_s = 0;     // sending tiles' rows and writing received ones
};

class Pipeline {
 public:
  // The nest rows [row_lb, row_ub) x columns [col_lb, col_ub), whose iteration (i, j) reads
  // what (i, j - 1) and (i - 1, j + d), d <= `lookahead`, wrote in `array` (0: a 5-point
  // stencil, 1: a 9-point one). Collective in effect: every rank constructs it with the
  // same arguments. Invalid bounds throw std::invalid_argument.
  Pipeline(std::string name, long row_lb, long row_ub, long col_lb, long col_ub, Carried array, int lookahead);

  // This rank's rows (empty for a rank beyond the rows).
  const Range& rows() const { return mine_; }

  // One execution of the nest: iterating it yields this rank's tiles, in order, each once
  // the rank above has sent what it reads; leaving a tile (the iterator's ++) sends this
  // rank's part of its last row to the rank below.
  class Sweep {
   public:
    class iterator {
     public:
      const Tile& operator*() const { return pipe_->tile_; }
      const Tile* operator->() const { return &pipe_->tile_; }
      iterator& operator++();
      bool operator!=(const iterator& o) const { return k_ != o.k_; }
      bool operator==(const iterator& o) const { return k_ == o.k_; }

     private:
      friend class Sweep;
      iterator(Pipeline* pipe, long k) : pipe_(pipe), k_(k) {}
      Pipeline* pipe_;
      long k_;
    };
    iterator begin();
    iterator end() { return iterator(pipe_, pipe_->tiles_); }

   private:
    friend class Pipeline;
    explicit Sweep(Pipeline* pipe) : pipe_(pipe) {}
    Pipeline* pipe_;
  };
  Sweep sweep();

  // The grain the next sweep runs at, and what the last one cost.
  long grain() const { return grain_; }
  const SweepFigures& last() const { return last_; }

 private:
  friend class Sweep;
  friend class Sweep::iterator;
  void start_tile(long k);
  void finish_tile();
  void await(long through);
  void choose_grain();

  std::string name_;
  Range cols_;
  Carried array_;
  int lookahead_;
  Range mine_;
  int above_ = -1, below_ = -1;  // neighbouring ranks with rows (-1: none)
  int active_ = 1;               // ranks with rows
  long grain_ = 0;
  long tiles_ = 0;  // in this sweep
  Tile tile_;       // the current one
  bool fixed_grain_ = false;
  double shift_s_ = -1;  // one message's trip to the rank below (measured once)
  std::uint64_t sweeps_ = 0;
  long received_ = 0;  // columns of the rank above's last row in so far (this sweep)
  double tile_started_ = 0;
  SweepFigures now_, last_;
};

}  // namespace dsm::lb
