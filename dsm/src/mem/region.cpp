#include "mem/region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dsm::mem {
namespace {

std::string describe(std::uintptr_t base, std::size_t bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[0x%zx, 0x%zx) (%zu MiB)", static_cast<std::size_t>(base),
                static_cast<std::size_t>(base + bytes), bytes >> 20);
  return buf;
}

int to_native(Prot p) {
  switch (p) {
    case Prot::none: return PROT_NONE;
    case Prot::read: return PROT_READ;
    case Prot::read_write: return PROT_READ | PROT_WRITE;
  }
  throw std::invalid_argument("dsm: invalid page protection");
}

}  // namespace

Region::Region(std::uintptr_t base, std::size_t capacity) : capacity_(capacity) {
  const std::string range = describe(base, capacity);
  if (sysconf(_SC_PAGESIZE) != static_cast<long>(page_size))
    throw std::runtime_error("dsm: the region needs a 4 KiB system page size, this system has " +
                             std::to_string(sysconf(_SC_PAGESIZE)));
  if (capacity == 0 || capacity % page_size || base % page_size)
    throw std::invalid_argument("dsm: shared region " + range + " must be a non-empty page-aligned range");
  fd_ = memfd_create("dsm-region", MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("dsm: memfd_create failed: ") + std::strerror(errno));
  if (fd_ <= STDERR_FILENO) {
    // A program started with stdout (or stdin, stderr) closed would print into the region.
    const int moved = fcntl(fd_, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    const int e = errno;
    close(fd_);
    fd_ = moved;
    if (fd_ < 0) throw std::runtime_error(std::string("dsm: cannot move the region's descriptor: ") + std::strerror(e));
  }
  if (ftruncate(fd_, static_cast<off_t>(capacity)) != 0) {
    int e = errno;
    close(fd_);
    throw std::runtime_error("dsm: cannot size the shared region object to " + range + ": " + std::strerror(e));
  }
  // MAP_NORESERVE: an 8 GiB region must not be charged against overcommit up front.
  void* app = mmap(reinterpret_cast<void*>(base), capacity, PROT_NONE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd_, 0);
  if (app == MAP_FAILED || app != reinterpret_cast<void*>(base)) {
    int e = errno;
    // Kernels before 4.17 ignore MAP_FIXED_NOREPLACE and may map elsewhere.
    if (app != MAP_FAILED) munmap(app, capacity);
    close(fd_);
    throw std::runtime_error("dsm: cannot reserve the shared region at " + range + ": " +
                             (app == MAP_FAILED ? std::strerror(e) : "the kernel placed it elsewhere") +
                             " (something else is mapped there, or the address space is too small;"
                             " choose another base address or a smaller capacity)");
  }
  void* alias = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  if (alias == MAP_FAILED) {
    int e = errno;
    munmap(app, capacity);
    close(fd_);
    throw std::runtime_error("dsm: cannot map the runtime alias of the shared region " + range + ": " +
                             std::strerror(e));
  }
  app_ = static_cast<std::byte*>(app);
  alias_ = static_cast<std::byte*>(alias);
}

Region::~Region() {
  munmap(app_, capacity_);
  munmap(alias_, capacity_);
  close(fd_);
}

void Region::protect(std::size_t first_page, std::size_t npages, Prot p) {
  if (first_page > pages() || npages > pages() - first_page)
    throw std::out_of_range("dsm: protect of pages beyond the shared region");
  if (npages == 0) return;
  mprotect_calls_.fetch_add(1, std::memory_order_relaxed);
  if (mprotect(app_ + first_page * page_size, npages * page_size, to_native(p)) == 0) return;
  int e = errno;
  // Inside our own mapping, ENOMEM can only mean the split would exceed the per-process
  // mapping count: each run of pages with one protection is a kernel mapping of its own.
  if (e == ENOMEM)
    throw std::runtime_error(
        "dsm: mprotect failed: the process reached the kernel's limit on memory mappings "
        "(vm.max_map_count; each run of pages with one protection is one mapping). Raise it, "
        "e.g. `sysctl -w vm.max_map_count=1048576` as root, or use fewer, larger shared arrays");
  throw std::runtime_error(std::string("dsm: mprotect of ") + std::to_string(npages) + " page(s) at page " +
                           std::to_string(first_page) + " failed: " + std::strerror(e));
}

bool Region::populate(std::size_t first_page, std::size_t npages, Prot p) {
  protect(first_page, npages, Prot::read_write);
  // Through the application view, so its page-table entries exist and are dirty: a later
  // mprotect to read-write then makes them writable without a write fault.
  const bool ok = prefault(app_ + first_page * page_size, npages * page_size);
  protect(first_page, npages, p);
  // And through the runtime's alias, which has page-table entries of its own: diffs are
  // made and applied there, and a rank's first fetch of its block would otherwise take a
  // minor fault per page on both sides.
  return ok && prefault(alias_ + first_page * page_size, npages * page_size);
}

void Region::protect_pages(std::span<const std::size_t> sorted_pages, Prot p) {
  std::size_t i = 0;
  while (i < sorted_pages.size()) {
    std::size_t j = i + 1;
    while (j < sorted_pages.size() && sorted_pages[j] == sorted_pages[j - 1] + 1) ++j;
    protect(sorted_pages[i], j - i, p);
    i = j;
  }
}

bool prefault(std::byte* p, std::size_t bytes, bool pay_first_access) {
#ifdef MADV_POPULATE_WRITE
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page_size - 1) / page_size * page_size;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page_size * page_size;
  if (end <= begin || madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) != 0) return false;
  // Where a hypervisor shadows the page tables in software, the call fills the guest's
  // entries but not the shadow's: the first access from user space still costs about 10 us
  // a page, in whatever loop or fetch comes first (16 MiB fetched at 0.55 GB/s, filled at
  // 0.4). One access a page pays it here, an atomic no-op in case the buffer holds data.
  if (pay_first_access)
    for (auto a = begin; a < end; a += page_size)
      std::atomic_ref(*reinterpret_cast<std::uint64_t*>(a)).fetch_or(0, std::memory_order_relaxed);
  return true;
#else
  (void)p;
  (void)bytes;
  (void)pay_first_access;
  return false;
#endif
}

}  // namespace dsm::mem
