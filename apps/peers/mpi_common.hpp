// What the MPI peer versions share: start-up, the row block of a rank, and checking calls.
// They are written the way an MPI programmer would write them by hand (explicit data
// distribution, halo exchange), with the kernels, sizes, options and checksum of the DSM
// versions, so a run's checksum must equal <app>_seq's bit for bit.
//
// Timing rule, the same as the DSM versions': the clock starts once rank 0 has initialized
// the data (the DSM versions start it after rank 0's init and a barrier), it includes
// distributing the inputs (the DSM versions pay for that as faults and prefetches in their
// first iteration), it stops when every rank has finished the last iteration, and it
// excludes collecting the result on rank 0 for the checksum (the DSM versions also read
// the result after the clock has stopped).
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "../common/app.hpp"

namespace peers {

// Aborts the whole job with a message when an MPI call fails (the default handler would
// abort too, but without saying which call).
inline void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  std::fprintf(stderr, "%s failed: %s\n", what, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

struct World {
  int rank = 0;
  int size = 1;
};

// Options are parsed before MPI_Init, so bad input or --help ends every process before it
// joins the job: mpirun then reports the exit status instead of waiting for the others.
inline World init(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

// Even block split of [first, last) over size ranks (no page alignment: there are no pages
// to share in message passing).
inline long block_start(long first, long last, int k, int size) { return first + (last - first) * k / size; }

// Every rank must own at least one row; otherwise the job stops with a clear message.
inline void need_rows(const World& w, long rows, const char* what) {
  if (rows >= w.size) return;
  if (w.rank == 0)
    std::fprintf(stderr, "%s: %ld rows cannot be split over %d ranks (use a larger --n or fewer ranks)\n", what, rows,
                 w.size);
  MPI_Finalize();
  std::exit(2);
}

}  // namespace peers
