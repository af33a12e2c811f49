// The end of this rank's open interval: its written pages announced as a new interval of
// the log, and closed again unless they are held or kept open.
#pragma once

namespace dsm::proto {

// At every release and acquire. Held pages stay writable only across barriers.
void close_interval(bool at_barrier);

}  // namespace dsm::proto
