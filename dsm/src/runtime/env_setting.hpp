// Reading a rank's DSM_* settings from the environment. A bad value stops the rank with a
// message that names the variable (exit status 2), before it joins the job.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dsm::sys {

// A size in bytes, with an optional suffix K, M or G; `fallback` when unset or empty.
std::size_t env_size(const char* name, std::size_t fallback);

// An integer in [min, max] (no size suffix); `fallback` when unset or empty.
std::uint64_t env_int(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max);

}  // namespace dsm::sys
