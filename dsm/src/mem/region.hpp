// The shared region: one shared-memory object mapped twice at fixed addresses.
// The application view carries per-page protection (the page state of the protocol);
// the runtime alias is always read-write, so the runtime fills pages (diffs, fetched
// copies) without opening them to the application.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dsm::mem {

inline constexpr std::size_t page_size = 4096;

// Where the runtime puts the shared region unless DSM_REGION_BASE says otherwise.
inline constexpr std::uintptr_t default_base = 0x4000'0000'0000;

enum class Prot : std::uint8_t { none, read, read_write };

class Region {
 public:
  // Reserves [base, base+capacity) for the application view (same address on every rank)
  // and an alias anywhere, both over one memfd. Pages start zero-filled and Prot::none and
  // only use memory once touched. base and capacity must be multiples of page_size.
  // Throws std::runtime_error naming the range if it cannot be reserved (an existing
  // mapping is never replaced).
  Region(std::uintptr_t base, std::size_t capacity);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  std::byte* app() const { return app_; }
  std::byte* alias() const { return alias_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t pages() const { return capacity_ / page_size; }
  bool contains(const void* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(app_);
    return a - b < capacity_;  // unsigned wrap makes a < b fail too
  }
  std::size_t page_of(const void* p) const {
    return (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(app_)) / page_size;
  }

  // One mprotect over pages [first_page, first_page+npages) of the application view.
  // Safe to call from the fault handler (no allocation, no locks) unless it throws.
  // Throws std::out_of_range past the region and std::runtime_error when the kernel refuses,
  // with an explanation when the cause is the vm.max_map_count limit.
  void protect(std::size_t first_page, std::size_t npages, Prot p);
  // One mprotect per maximal run of consecutive page numbers: minimal when the pages are
  // sorted and distinct (any order is still correct, only with more calls).
  void protect_pages(std::span<const std::size_t> sorted_pages, Prot p);

  // Gives pages [first_page, first_page+npages) memory now and maps them in both views'
  // page tables (writable in the application view's), then leaves them with protection `p`. Faulting a fresh
  // page costs microseconds (tens in some VMs); done at allocation, it stays out of the
  // loops. Best effort: false if the kernel cannot (memory short, before Linux 5.14).
  bool populate(std::size_t first_page, std::size_t npages, Prot p);

  // mprotect calls made so far by this region (for statistics and tests).
  std::uint64_t mprotect_calls() const { return mprotect_calls_.load(std::memory_order_relaxed); }

 private:
  std::byte* app_ = nullptr;
  std::byte* alias_ = nullptr;
  std::size_t capacity_ = 0;
  int fd_ = -1;
  std::atomic<std::uint64_t> mprotect_calls_{0};
};

// Gives the whole pages of a fresh buffer their memory in one system call
// (MADV_POPULATE_WRITE) instead of a page fault at each first write, which costs several
// times more per page (docs/design.md, section "What the hardware costs, and what
// follows"), then, if pay_first_access, each page's first access from user space, which
// hypervisors that shadow page tables charge apart (~10 us a page). False where unsupported
// or refused (the pages then fault as usual).
bool prefault(std::byte* p, std::size_t bytes, bool pay_first_access = true);

}  // namespace dsm::mem
