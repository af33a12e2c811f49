// Bounds-checked little-endian byte codec for protocol messages. Messages come from the
// network: every read is checked, and a short or malformed message throws DecodeError
// instead of reading past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace dsm::proto::codec {

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  void bytes(std::span<const std::byte> b) {
    put<std::uint32_t>(static_cast<std::uint32_t>(b.size()));
    buf_.insert(buf_.end(), b.begin(), b.end());
  }
  template <class T>
  void array(std::span<const T> v) {
    put<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    buf_.insert(buf_.end(), p, p + v.size_bytes());
  }
  // Room for `more` bytes after those written: megabytes of pages written into a buffer
  // grown as they come are copied again at every doubling.
  void reserve(std::size_t more) { buf_.reserve(buf_.size() + more); }
  std::vector<std::byte>& buffer() { return buf_; }
  std::vector<std::byte> take() { return std::move(buf_); }

 private:
  std::vector<std::byte> buf_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::span<const std::byte> bytes() {
    auto n = get<std::uint32_t>();
    need(n);
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  // An array of at most `max` elements.
  template <class T>
  std::vector<T> array(std::size_t max) {
    auto n = get<std::uint32_t>();
    if (n > max) throw DecodeError("array longer than allowed");
    need(std::size_t{n} * sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));  // memcpy(nullptr, .., 0) is UB
    pos_ += n * sizeof(T);
    return v;
  }
  // A count of items that each take at least `min_item_bytes`: rejects counts the rest of
  // the message cannot hold, so a forged count cannot make us allocate gigabytes.
  std::uint32_t count(std::size_t min_item_bytes) {
    auto n = get<std::uint32_t>();
    if (min_item_bytes && n > remaining() / min_item_bytes) throw DecodeError("count exceeds message");
    return n;
  }
  std::size_t remaining() const { return in_.size() - pos_; }
  void expect_end() const {
    if (pos_ != in_.size()) throw DecodeError("trailing bytes");
  }

 private:
  void need(std::size_t n) const {
    if (n > in_.size() - pos_) throw DecodeError("message truncated");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

}  // namespace dsm::proto::codec
