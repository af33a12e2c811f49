// libfabric, loaded when a job of several ranks starts (dsm::init) instead of when a
// program starts.
//
// Debian's libfabric links the psm and psm2 providers' libraries, and the constructors of
// libinfinipath and libpsm2 each measure the clock by sleeping 0.1 s, in every process that
// loads them: 0.2 s of every start. Loaded on demand, a single-rank run, the tools and the
// test programs that open no transport never pay it. The libfabric calls that are not inline
// (the rest go through the objects' operation tables) are these.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>

namespace dsm::net::fabric {

// Loads libfabric now if it is not loaded; throws std::runtime_error naming the library and
// why when it cannot. The crash signals wait while it loads and the process's handlers for
// them stay (fabric_lib.cpp). Another thread could take such a signal meanwhile: dsm::init
// calls this before it starts any, and so should a program that makes a Transport itself.
void load();

// Each loads libfabric first if it is not loaded.
int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
            fi_info** info);
fi_info* allocinfo();
void freeinfo(fi_info* info);
int open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* strerror(int errnum);

}  // namespace dsm::net::fabric
