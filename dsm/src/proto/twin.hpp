// A page's twin: its bytes at the first write of an interval, the base its diff is made
// against. The twin of a page that is all zero is zero_page itself, not a copy: an array's
// first fill then takes no copy and no memory per page (a fresh 4 KiB block each, faulted
// in and cleared by the kernel, cost more than the fill's own stores).
#pragma once

#include <cstddef>
#include <memory>

#include "mem/region.hpp"
#include "proto/page_buffers.hpp"

namespace dsm::proto {

// The bytes of a page nobody wrote: the twin of a zero page, and the base of the changes
// kept as ends (Served::ends).
extern const std::byte zero_page[mem::page_size];

class Twin {
 public:
  Twin() = default;
  Twin(Twin&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Twin& operator=(Twin&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  Twin(const Twin&) = delete;
  Twin& operator=(const Twin&) = delete;
  ~Twin() { reset(); }

  explicit operator bool() const { return p_ != nullptr; }
  const std::byte* get() const { return p_; }
  bool zero() const { return p_ == zero_page; }
  void reset() {
    if (p_ && p_ != zero_page) give_page_buffer(std::unique_ptr<std::byte[]>(const_cast<std::byte*>(p_)));
    p_ = nullptr;
  }
  void set_zero() {
    reset();
    p_ = zero_page;
  }
  // A copy of `page`, in this twin's own buffer (made unless it has one).
  void copy_of(const std::byte* page);
  // Its bytes, writable: a twin that is zero_page takes a buffer of its own first.
  std::byte* writable() {
    if (p_ == zero_page) copy_of(zero_page);
    return const_cast<std::byte*>(p_);
  }
  // The same, handed over: the twin is left empty.
  std::unique_ptr<std::byte[]> release_copy_of(const std::byte* page);

 private:
  const std::byte* p_ = nullptr;  // zero_page, or a buffer of its own
};

}  // namespace dsm::proto
