// The C heap under the protocol: diffs, write notices and message copies live there, and a
// run keeps growing it until garbage collection. Each fresh heap page costs a page fault at
// its first write, on whichever barrier or fault happens to allocate it; populated in bulk,
// by one system call, pages cost a small part of that (docs/design.md, section "What the
// hardware costs, and what follows").
#pragma once

#include <cstddef>
#include <vector>

namespace dsm::mem {

// Sets the process's malloc policy: freed memory stays with the process (no trimming, no
// mmap for blocks under 32 MiB), and the heap grows by at least `step` bytes at a time
// (M_TOP_PAD; 0 leaves growth as it is).
void tune_heap(std::size_t step);

// Gives the pages the heap grew by since the last call their memory in one system call.
// Cheap when it did not grow (no system call). Application thread only.
void populate_heap();

// Reserves `bytes` in `v`; from 1 MiB on (a reply of megabytes, written once), its pages
// get their memory in one system call.
void reserve_populated(std::vector<std::byte>& v, std::size_t bytes);

}  // namespace dsm::mem
