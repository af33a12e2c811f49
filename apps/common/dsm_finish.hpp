// The end every DSM version of an application shares: rank 0 computes the checksum, prints
// the report and checks it against the sequential reference (--check); every rank leaves
// the job. Returns the exit code.
#pragma once

#include <dsm/dsm.hpp>

#include "app.hpp"

namespace app {

template <class Checksum>
int finish(const Options& o, double seconds, Checksum checksum, std::uint64_t (*reference)(const Options&)) {
  const int rc = dsm::rank() == 0 ? conclude(o, checksum(), seconds, reference) : 0;
  dsm::finalize();
  return rc;
}

}  // namespace app
