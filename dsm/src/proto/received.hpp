// Bytes another rank sent this one by value (a pipeline's boundary strip, inbox.hpp's
// channels), written into this rank's copy of the shared pages they belong to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dsm::proto {

// Writes `bytes` at byte `offset` of the shared region into this rank's copy, as values its
// sender wrote and will announce at its next release: this rank's own changes (a twin's
// diff) leave them out, so only the sender's announcement carries them. The pages are
// brought up to date first if invalid. Application thread only.
void write_received(std::size_t offset, std::span<const std::byte> bytes);

}  // namespace dsm::proto
