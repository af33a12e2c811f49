// Names of a job's shared-memory segments under /dev/shm, and their removal. Apart from the
// transport so that tools which only clean up after a job (dsmrun) need no libfabric, whose
// loading alone costs a process a tenth of a second (a library it pulls in calibrates the
// cycle counter by sleeping).
#pragma once

#include <string>

namespace dsm::net {

// Name prefix of the shared-memory segments of a job's shm endpoints (under /dev/shm, which
// any local user can list): derived from the token, never a part of it.
std::string shm_segment_prefix(const std::string& token);
// Removes every segment of the job from this host's /dev/shm (endpoints, doorbells, the
// statistics board): what dsmrun does when a job ends, and a rank that lost dsmrun.
void remove_job_segments(const std::string& token);

}  // namespace dsm::net
