// The region address the memory tests use: the runtime's default, or DSM_REGION_BASE like
// the runtime (a ThreadSanitizer build needs a base outside TSan's shadow memory, see
// scripts/sanitize.sh).
#pragma once

#include <cstdint>
#include <cstdlib>

#include "mem/region.hpp"

inline std::uintptr_t test_region_base() {
  const char* v = std::getenv("DSM_REGION_BASE");
  return v && *v ? std::uintptr_t(std::strtoull(v, nullptr, 0)) : dsm::mem::default_base;
}
