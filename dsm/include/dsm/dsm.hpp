// Public API of the DSM runtime. Every name here is fixed: programs outside the project use them.
//
// A program calls dsm::init first and dsm::finalize last. Shared data comes from
// dsm::alloc, which every rank calls in the same order with the same sizes; it returns the
// same address on every rank. Changes by one rank become visible to another after a
// release/acquire pair between them (lock_release -> lock_acquire, or a barrier): lazy
// release consistency.
#pragma once

#include <cstddef>
#include <type_traits>

namespace dsm {

// Joins the job started by dsmrun. Without dsmrun, the program runs as a single rank.
void init(int argc, char** argv);
// Waits for every rank, prints/sends statistics, and leaves the job. Collective.
void finalize();

// This rank's number and the job's size: from dsm::init on (still valid after dsm::finalize).
int rank();
int nprocs();

// Collective barrier; also a release followed by an acquire for every rank.
void barrier();

// Lock ids run from 0 to max_locks() - 1.
void lock_acquire(int id);
void lock_release(int id);
int max_locks();

enum class Mode {
  read,        // fetch what is missing now, in bulk
  write,       // also open for writing (twins in one pass)
  read_write,  // same as write
  write_all,   // the range will be completely overwritten: no fetch, no twin
  // Like write, and this rank promises that no other rank writes these pages until the next
  // barrier: no twins, and readers fetch whole pages instead of diffs. This is how a
  // page-aware split (each rank owns its pages) avoids the multiple-writer protocol's cost.
  write_exclusive,
};
// Brings [addr, addr+bytes) of the shared region into the state `mode` asks for, with one
// request per writer instead of one fault per page. Addresses outside the region are ignored.
void prefetch(const void* addr, std::size_t bytes, Mode mode);

// Collective: every rank calls it with the same arguments between the same two barriers.
// Rank `owner` alone writes the pages entirely inside [addr, addr+bytes) until the next
// barrier, as with Mode::write_exclusive (and the owner's call opens them, as that prefetch
// does); because every rank knows it, the owner keeps them writable across barriers for as
// long as it owns them again in each epoch, and the boundary pages that other ranks read
// reach them with the barrier. A block split rewritten every iteration then costs no fault,
// no mprotect and no twin. How the compiler pass's loops own their blocks, for hand code.
// The owner writes them without a fault also in epochs where it does not own them: such a
// write, in code that every rank runs, goes through dsm::lb::written (<dsm/balancer.hpp>) so
// that the others still read the bytes the last barrier left.
void own(int owner, const void* addr, std::size_t bytes);

// A promise, for as long as the object lives: this rank reads nothing of the two pages at
// the ends of [addr, addr+bytes) outside that range (bytes of rows it does not read). A halo
// row that shares its pages with rows this rank never reads then reaches it as its own
// bytes, pushed with each barrier, rather than as whole pages, and those pages stay open for
// reading from one barrier to the next. Reads outside the range of those pages while it lives
// may see stale bytes; reads after it ends see every change. A time loop's halo exchange:
//   { dsm::ReadsWithin halo(sh + (lo - 1) * n, (hi - lo + 2) * n * sizeof *sh);
//     for (...) { ...; dsm::barrier(); } }   // ended before the whole array is read
class ReadsWithin {
 public:
  ReadsWithin(const void* addr, std::size_t bytes);
  ~ReadsWithin();
  ReadsWithin(const ReadsWithin&) = delete;
  ReadsWithin& operator=(const ReadsWithin&) = delete;

 private:
  const void* addr_;
  std::size_t bytes_;
};

// Seconds on a monotonic clock.
double wtime();

namespace detail {
void* alloc_bytes(std::size_t count, std::size_t size);
}

// Collective: n zero-filled, page-aligned objects of type T in the shared region.
// alloc<double[M]>(n) returns double (*)[M]. No constructor runs: the objects start as zero
// bytes (0, 0.0, a null pointer), and ranks exchange them as bytes.
template <class T>
T* alloc(std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>,
                "dsm::alloc<T>: T must be trivially copyable (no std::string, std::vector, ...): ranks "
                "exchange shared objects as bytes, and no constructor or destructor runs for them");
  return static_cast<T*>(detail::alloc_bytes(n, sizeof(T)));
}

}  // namespace dsm
