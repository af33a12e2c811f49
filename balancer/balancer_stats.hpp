// Balancer statistics for `dsmrun --stats` (runtime-internal): a JSON object with one entry
// per loop site: executions, redistributions, iterations and pages moved, and each rank's
// power, last times and final ranges.
#pragma once

#include <string>

namespace dsm::lb {
std::string balancer_stats_json();
}
