// Unit tests of the statistics board's reader (board.hpp): everything in the shared memory
// is checked.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "job/board.hpp"

namespace {

namespace board = dsm::board;

// A board image in ordinary memory, aligned like a mapping.
struct Image {
  explicit Image(int nranks, std::size_t size = 0)
      : size(size ? size : board::image_size(nranks)),
        bytes(static_cast<std::byte*>(std::aligned_alloc(64, (this->size + 63) / 64 * 64)), &std::free) {
    std::memset(bytes.get(), 0, this->size);
    if (this->size >= board::image_size(nranks)) board::format({bytes.get(), this->size}, nranks, "dsm-0123456789abcdef");
  }
  board::Header& header() { return *reinterpret_cast<board::Header*>(bytes.get()); }
  board::Slot& slot(int r) { return reinterpret_cast<board::Slot*>(bytes.get() + sizeof(board::Header))[r]; }
  board::Snapshot read() const { return board::read({bytes.get(), size}); }
  std::size_t size;
  std::unique_ptr<std::byte, decltype(&std::free)> bytes;
};

}  // namespace

TEST_CASE("a board reads back the ranks present, with their counters") {
  Image img(4);
  auto snap = img.read();
  CHECK(snap.job == "dsm-0123456789abcdef");
  CHECK(snap.nranks == 4);
  CHECK(snap.rows.empty());
  img.slot(2).pid = 4242;
  img.slot(2).state = std::uint32_t(board::RankState::barrier);
  img.slot(2).stats.barriers = 7;
  img.slot(2).traffic.msgs_sent = 3;
  img.slot(2).traffic.msgs_self = 5;
  snap = img.read();
  REQUIRE(snap.rows.size() == 1);
  CHECK(snap.rows[0].rank == 2);
  CHECK(snap.rows[0].pid == 4242);
  CHECK(snap.rows[0].state == board::RankState::barrier);
  CHECK(snap.rows[0].stats.barriers == 7);
  CHECK(snap.rows[0].traffic.msgs_sent == 3);
  CHECK(snap.rows[0].traffic.msgs_self == 5);
  const auto json = board::to_json(snap);
  CHECK_THAT(json, Catch::Contains("\"rank\": 2, \"pid\": 4242, \"state\": \"barrier\""));
  CHECK_THAT(json, Catch::Contains("\"barriers\": 7,"));
  CHECK_THAT(json, Catch::Contains("\"msgs_sent\": 3,"));
  CHECK_THAT(json, Catch::Contains("\"msgs_self\": 5,"));
  CHECK_THAT(board::format_table(snap), Catch::Contains("4242 barrier"));
}

TEST_CASE("a board reader refuses what is not a valid board, saying why") {
  auto refuses = [](const Image& img, const std::string& why) {
    CHECK_THROWS_WITH(img.read(), Catch::Contains(why));
  };
  refuses(Image(1, 16), "too small to be a statistics board (16 bytes)");
  {
    Image img(2);
    img.header().magic = 0;
    refuses(img, "not written yet");
    img.header().magic = 0x1234;
    refuses(img, "not a DSM statistics board");
  }
  {
    Image img(2);
    img.header().version = board::version + 1;
    refuses(img, "board version " + std::to_string(board::version + 1) + ", this program reads version " +
                     std::to_string(board::version));
  }
  {
    Image img(2);
    img.header().slot_size += 64;
    refuses(img, "layout differs from this program's");
  }
  for (std::uint32_t n : {0u, 5000u}) {
    Image img(2);
    img.header().nranks = n;
    refuses(img, "claims " + std::to_string(n) + " ranks");
  }
  {
    Image img(2);
    img.header().nranks = 3;  // one slot more than the object holds
    refuses(img, "truncated");
  }
  {
    Image img(2);
    std::memset(img.header().job, 'x', board::job_id_size);  // no terminating NUL
    refuses(img, "malformed job id");
    std::strcpy(img.header().job, "dsm-01234567../../x");
    refuses(img, "malformed job id");
  }
  {
    Image img(3);
    img.slot(1).rank = 7;
    refuses(img, "slot 1 claims to be rank 7");
  }
  {
    Image img(3);
    img.slot(2).state = 9;
    refuses(img, "slot 2 has an unknown state 9");
  }
}

TEST_CASE("a board that its creator never sized is refused after the creator's grace, saying so") {
  const std::string token = "0badc0de0badc0de";
  const std::string name = board::board_name(token);
  // What a creating rank leaves when it dies (or fails to size it) right after creating it.
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  CHECK_THROWS_WITH(board::Board(token, 2), Catch::Contains("was not sized by the rank that created it"));
  shm_unlink(name.c_str());
}
