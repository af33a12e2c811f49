// Unit tests of the message layer's pure parts and of a single-rank transport.
#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <thread>

#include "job/bootstrap.hpp"
#include "job/job_env.hpp"
#include "net/reorder.hpp"
#include "net/wait_counter.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"

using namespace dsm::job;
using namespace dsm::net;

namespace {
std::vector<std::byte> message(const Header& h, std::size_t payload) {
  std::vector<std::byte> m(header_size + payload, std::byte{0x5a});
  encode(h, std::span<std::byte, header_size>(m.data(), header_size));
  return m;
}
Header good_header(std::size_t len) {
  Header h;
  h.type = 7;
  h.src = 2;
  h.seq = 99;
  h.length = len;
  h.token = token_digest("0123456789abcdef");
  return h;
}
}  // namespace

TEST_CASE("wire header round-trips and every check rejects") {
  const std::uint64_t tok = token_digest("0123456789abcdef");
  const auto ok = decode(message(good_header(10), 10), tok, 4);
  REQUIRE(ok.error == WireError::none);
  CHECK(ok.header.type == 7);
  CHECK(ok.header.src == 2);
  CHECK(ok.header.seq == 99);
  CHECK(ok.header.length == 10);

  const auto whole = message(good_header(0), 0);
  CHECK(decode(std::span(whole).first(header_size - 1), tok, 4).error == WireError::too_short);
  CHECK(decode(message(good_header(10), 10), tok + 1, 4).error == WireError::bad_token);
  CHECK(decode(message(good_header(10), 10), tok, 2).error == WireError::bad_source);
  CHECK(decode(message(good_header(10), 9), tok, 4).error == WireError::bad_length);
  Header h = good_header(10);
  h.magic ^= 1;
  CHECK(decode(message(h, 10), tok, 4).error == WireError::bad_magic);
  h = good_header(10);
  h.version = 2;
  CHECK(decode(message(h, 10), tok, 4).error == WireError::bad_version);
  h = good_header(10);
  h.flags = 4;
  CHECK(decode(message(h, 10), tok, 4).error == WireError::bad_flags);
  h = good_header(1 << 20);
  h.flags = flag_large;
  CHECK(decode(message(h, 0), tok, 4).error == WireError::none);
  CHECK(decode(message(h, 1), tok, 4).error == WireError::bad_length);
  h.length = max_payload + 1;
  CHECK(decode(message(h, 0), tok, 4).error == WireError::bad_length);
}

TEST_CASE("messages ahead of their turn wait in order, within a byte limit per source") {
  Reorder r(1000);
  const auto eager = [](std::size_t n) { return Reorder::Held{5, std::vector<std::byte>(n), nullptr}; };
  // Message 0 is due; 1 and 2 came first and wait, up to 1000 bytes in all.
  CHECK(r.refuse(1, 600).empty());
  r.hold(1, eager(600));
  CHECK(r.refuse(2, 400).empty());
  r.hold(2, eager(400));
  CHECK(r.held_ahead() == 1000);
  CHECK_THAT(r.refuse(3, 1), Catch::Contains("would hold 1001 bytes ahead of sequence, over the limit of 1000 per source"));
  CHECK_THAT(r.refuse(3, max_payload), Catch::Contains("over the limit of 1000"));
  // The message due is never refused for its size; repeats and runaways are out of sequence.
  CHECK(r.refuse(0, 5000).empty());
  CHECK(r.refuse(1, 1) == "out of sequence");
  CHECK(r.refuse(max_reorder + 1, 0) == "out of sequence");
  CHECK_FALSE(r.take());
  r.hold(0, eager(5000));
  CHECK(r.held_ahead() == 1000);
  for (std::size_t size : {5000, 600, 400}) {
    const auto m = r.take();
    REQUIRE(m);
    CHECK(m->eager.size() == size);
  }
  CHECK_FALSE(r.take());
  CHECK(r.held_ahead() == 0);
  CHECK(r.refuse(2, 0) == "out of sequence");

  // A large message counts its announced length, and waits for its payload when due.
  auto large = std::make_unique<Op>();
  large->len = 800;
  Op& op = *large;
  r.hold(4, {6, {}, std::move(large)});
  CHECK(r.held_ahead() == 800);
  CHECK_FALSE(r.refuse(5, 201).empty());
  CHECK(r.refuse(5, 200).empty());
  r.hold(3, eager(10));
  REQUIRE(r.take());
  CHECK(r.held_ahead() == 0);  // message 4 is due now
  CHECK_FALSE(r.take());
  op.done = true;
  const auto m = r.take();
  REQUIRE(m);
  CHECK(m->large.get() == &op);
}

TEST_CASE("WaitCounter wakes a waiter blocked in the futex") {
  WaitCounter s;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s.notify();
    s.notify();
  });
  s.wait_until(2);
  CHECK(s.value() == 2);
  t.join();
}

TEST_CASE("single-rank transport delivers sends to self in order, through the service thread, "
          "counted apart from the network") {
  for (const char* v : {"DSM_RANK", "DSM_SIZE"}) unsetenv(v);
  const JobEnv env = read_job_env();
  Bootstrap boot(env);
  Transport net(env, boot);
  CHECK(net.size() == 1);
  WaitCounter got;
  std::vector<std::size_t> seen;
  const auto caller = std::this_thread::get_id();
  bool on_other_thread = true;
  net.start([&](int src, std::uint16_t type, std::span<const std::byte> p) {
    CHECK(src == 0);
    CHECK(type == 9);
    on_other_thread &= std::this_thread::get_id() != caller;
    seen.push_back(p.size());
    got.notify();
  });
  for (std::size_t n : {0, 1, 100000}) net.send(0, 9, std::vector<std::byte>(n));
  got.wait_until(3);
  CHECK(seen == std::vector<std::size_t>{0, 1, 100000});
  CHECK(on_other_thread);
  const Traffic& c = net.counters();
  CHECK(c.msgs_self == 3);
  CHECK(c.bytes_self == 100001);
  CHECK(c.msgs_sent == 0);
  CHECK(c.bytes_sent == 0);
  CHECK(c.msgs_received == 0);
  CHECK(c.bytes_received == 0);
  REQUIRE(net.sent_to().size() == 1);
  CHECK(net.sent_to()[0].msgs == 0);
  CHECK(net.sent_to()[0].bytes == 0);
  CHECK_THROWS_AS(net.send(1, 9, {}), std::invalid_argument);
}
