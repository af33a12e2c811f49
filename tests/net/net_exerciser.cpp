// Test program for the message layer, run through dsmrun: one mode per behaviour under test.
// Exits non-zero on any content, order or count mismatch.
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "job/bootstrap.hpp"
#include "job/job_env.hpp"
#include "net/fabric_lib.hpp"
#include "net/wait_counter.hpp"
#include "net/transport.hpp"

using namespace dsm::job;
using namespace dsm::net;

namespace {

std::byte pattern(int src, int dest, std::size_t size, std::size_t i) {
  return static_cast<std::byte>((src * 131 + dest * 31 + size * 7 + i * 13) & 0xff);
}

std::vector<std::byte> make_payload(int src, int dest, std::size_t size) {
  std::vector<std::byte> p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = pattern(src, dest, size, i);
  return p;
}

// CPU seconds of this whole process (all threads) from /proc, as the issue asks.
double process_cpu_seconds() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  unsigned long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoul(f);
    if (i == 15) stime = std::stoul(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Check {
  std::atomic<int> errors{0};
  void fail(const char* fmt, int a, int b, long c) {
    std::fprintf(stderr, fmt, a, b, c);
    errors.fetch_add(1);
  }
};

constexpr std::uint16_t t_data = 1, t_seq = 2, t_ping = 3, t_pong = 4, t_wake = 5;
const std::size_t sizes[] = {0, 1, 7, 64, 4096, 65536 - 40, 65536, 1 << 20, 8 << 20};
constexpr int small_count = 3000;

// What alltoall sends to each rank, self included: every size, small_count small messages of
// 4 + i % 60 bytes, and one of sizes[0] among them.
struct PerRank {
  std::uint64_t msgs = 0, bytes = 0;
};
PerRank alltoall_per_rank() {
  PerRank per{std::size(sizes) + small_count + 1, sizes[0]};
  for (std::size_t s : sizes) per.bytes += s;
  for (int i = 0; i < small_count; ++i) per.bytes += 4 + i % 60;
  return per;
}

// The counters after alltoall: messages to self apart from the network's, each peer's share
// exact.
void check_alltoall_traffic(const Transport& net, Check& check) {
  const int me = net.rank();
  const std::uint64_t others = net.size() - 1;
  const PerRank per = alltoall_per_rank();
  const Traffic& c = net.counters();
  auto expect = [&](const std::string& what, std::uint64_t got, std::uint64_t want) {
    if (got == want) return;
    std::fprintf(stderr, "rank %d: %s %llu, expected %llu\n", me, what.c_str(), (unsigned long long)got,
                 (unsigned long long)want);
    check.errors.fetch_add(1);
  };
  expect("msgs_self", c.msgs_self, per.msgs);
  expect("bytes_self", c.bytes_self, per.bytes);
  expect("msgs_sent", c.msgs_sent, others * per.msgs);
  expect("bytes_sent", c.bytes_sent, others * per.bytes);
  expect("msgs_received", c.msgs_received, others * per.msgs);
  expect("bytes_received", c.bytes_received, others * per.bytes);
  for (int dest = 0; dest < net.size(); ++dest) {
    const PeerTraffic& p = net.sent_to()[dest];
    expect("messages sent to rank " + std::to_string(dest), p.msgs, dest == me ? 0 : per.msgs);
    expect("bytes sent to rank " + std::to_string(dest), p.bytes, dest == me ? 0 : per.bytes);
  }
}

int run(const std::string& mode, int argc, char** argv) {
  const JobEnv env = read_job_env();
  fabric::load();  // before Bootstrap's thread (fabric_lib.hpp)
  Bootstrap boot(env);
  if (mode == "nojoin-late") std::this_thread::sleep_for(std::chrono::seconds(60));
  Transport net(env, boot);
  const int me = net.rank(), n = net.size();
  Check check;
  WaitCounter arrived;
  std::vector<int> next_small(n, 0);
  std::vector<std::size_t> sizes_seen(n, 0);
  // pingpong: the handler answers a ping (how DSM requests are served: a reply sent from a
  // handler copies its payload, as the handler's thread cannot wait for its own progress);
  // pingpong-app: the application thread answers, as fi_pingpong's responder does.
  const bool app_replies = mode == "pingpong-app";
  std::atomic<std::size_t> ping_size{0};
  std::atomic<bool> woken{false};

  net.start([&](int src, std::uint16_t type, std::span<const std::byte> payload) {
    if (type == t_data) {
      const std::size_t expect = sizes[sizes_seen[src]++ % std::size(sizes)];
      if (payload.size() != expect) check.fail("rank %d: from %d wrong size %ld\n", me, src, payload.size());
      for (std::size_t i = 0; i < payload.size(); ++i)
        if (payload[i] != pattern(src, me, payload.size(), i)) {
          check.fail("rank %d: from %d corrupt byte %ld\n", me, src, static_cast<long>(i));
          break;
        }
      // A handler that keeps a payload takes it over where it is: a message to itself, or a
      // large one from another rank (a MiB surely; a page never).
      const Payload taken = net.take_payload();
      const std::byte* at = taken.large ? taken.large.get() : taken.own.data();
      const bool own = src == me && !payload.empty();
      const bool large_ok = src != me && payload.size() > 4096, large_due = large_ok && payload.size() >= (1 << 20);
      if (own != !taken.own.empty() || (taken.large && !large_ok) || (large_due && !taken.large) ||
          (taken && at != payload.data()))
        check.fail("rank %d: from %d a payload of %ld bytes was not handed over as it came\n", me, src,
                   static_cast<long>(payload.size()));
    } else if (type == t_seq) {
      std::int32_t idx;
      std::memcpy(&idx, payload.data(), 4);
      if (idx != next_small[src]++) check.fail("rank %d: from %d out of order: %ld\n", me, src, idx);
    } else if (type == t_ping) {
      // A handler builds its reply, as the DSM's do, and hands the buffer over.
      if (!app_replies) return net.send_owned(src, t_pong, std::vector<std::byte>(payload.begin(), payload.end()));
      ping_size.store(payload.size());
    } else if (type == t_wake) {
      woken.store(true);
    }
    arrived.notify();
  });

  if (mode == "alltoall") {
    // Every size to every rank (self included), then many small messages in flight with a
    // large one in their middle, so FIFO order across both paths is checked.
    for (std::size_t s : sizes)
      for (int k = 1; k <= n; ++k) {
        const int dest = (me + k) % n;
        if (k % 2) net.send_owned(dest, t_data, make_payload(me, dest, s));  // both ways, self included
        else net.send(dest, t_data, make_payload(me, dest, s));
      }
    for (int i = 0; i < small_count; ++i)
      for (int k = 1; k <= n; ++k) {
        const int dest = (me + k) % n;
        std::byte msg[64] = {};
        const std::int32_t idx = i;
        std::memcpy(msg, &idx, 4);
        const std::span<const std::byte> parts[] = {{msg, 4}, {msg + 4, static_cast<std::size_t>(i % 60)}};
        net.sendv(dest, t_seq, parts);
        if (i == small_count / 2) net.send(dest, t_data, make_payload(me, dest, sizes[0]));
      }
    arrived.wait_until(static_cast<std::uint64_t>(n) * alltoall_per_rank().msgs);
    for (int src = 0; src < n; ++src)
      if (next_small[src] != small_count) check.fail("rank %d: from %d got %ld small\n", me, src, next_small[src]);
    check_alltoall_traffic(net, check);
  } else if (mode == "crash") {
    boot.allgather({});
    if (me == n - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::raise(SIGSEGV);
    }
    arrived.wait_until(1);  // never comes: dsmrun must stop this rank
  } else if (mode == "exit3") {
    boot.allgather({});
    if (me == n - 1) std::_Exit(3);
    arrived.wait_until(1);
  } else if (mode == "nofinalize") {
    boot.allgather({});
    return 0;
  } else if (mode == "idle") {
    // A rank that waits 5 s for a message must leave its core alone.
    boot.allgather({});
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    if (me == 0) {
      arrived.wait_until(1);
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(5));
      net.send(0, t_wake, {});
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double share = (process_cpu_seconds() - cpu0) / wall;
    std::printf("rank %d: %.3f s CPU over %.2f s waiting (%.2f %% of a core)\n", me,
                process_cpu_seconds() - cpu0, wall, 100 * share);
    if (me == 0 && wall < 4.5) check.fail("rank %d: woke after %d.%03ld s, before the message\n", me, 0, static_cast<long>(wall * 1000));
    if (share >= 0.05) check.fail("rank %d: used %d%% (x1000: %ld) of a core while waiting\n", me, 0, static_cast<long>(share * 1000));
  } else if (mode == "rogue") {
    // A connection with a wrong token must be refused (closed) while the job goes on.
    if (me == 0) {
      const auto colon = env.rendezvous.rfind(':');
      addrinfo hints{}, *res = nullptr;
      hints.ai_socktype = SOCK_STREAM;
      getaddrinfo(env.rendezvous.substr(0, colon).c_str(), env.rendezvous.substr(colon + 1).c_str(), &hints, &res);
      const int fd = socket(res->ai_family, SOCK_STREAM, 0);
      if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) check.fail("rank %d: rogue connect failed %d %ld\n", me, 0, 0);
      freeaddrinfo(res);
      std::string bad = "0000" + std::string(32, 'f');
      write_frame(fd, FrameKind::hello, std::as_bytes(std::span(bad)));
      timeval tv{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char c;
      if (read(fd, &c, 1) != 0) check.fail("rank %d: rogue connection was not refused %d %ld\n", me, 0, 0);
      close(fd);
    }
  } else if (mode == "lazy") {
    // Lazy messages (Transport::send_lazy) reach a receiver that was busy when they came as
    // soon as it waits, and wake one that sleeps waiting: 200 rounds in which rank 1 sends
    // one to a sleeping rank 0 and waits for its answer take a second at most only if each
    // wakes rank 0 (its service thread would find them only every 200 ms).
    constexpr int count = 200, rounds = 200;
    auto wait_for = [&](std::uint64_t want) {  // asleep, not polling, as a DSM wait ends up
      net.set_waiting(true);
      net.poll();
      while (arrived.value() < want) arrived.wait_until(want);
      net.set_waiting(false);
    };
    if (me == 0) {
      boot.allgather({});
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // busy: not waiting
      const std::uint64_t base = std::uint64_t(count) * (n - 1);
      wait_for(base);
      boot.allgather({});
      for (int k = 1; k <= rounds; ++k) {
        wait_for(base + k);
        net.send(1, t_pong, {});
      }
    } else {
      boot.allgather({});
      for (std::int32_t i = 0; i < count; ++i) net.send_lazy(0, t_seq, std::as_bytes(std::span(&i, 1)));
      boot.allgather({});
      for (std::uint64_t k = 1; me == 1 && k <= rounds; ++k) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));  // rank 0 falls asleep
        net.send_lazy(0, t_wake, std::span<const std::byte>{});
        while (arrived.value() < k) arrived.wait_until(k);
      }
    }
  } else if (mode == "lazy_large") {
    // Two ranks that poll (set_polling, as a rank waiting in a barrier does) send each other
    // a large lazy message at the same moment (two ranks' barrier arrivals that carry
    // pushes). Each send waits until the other rank's dispatching thread posts the payload's
    // receive, and a polling rank's senders wake no service thread: the waits end only
    // because a waiting send hands the dispatching back to its service thread, or after
    // that thread's naps: 3000 rounds (the argument) took 0.7 s on shm, 12 s without.
    const std::uint64_t rounds = argc > 1 ? std::stoul(argv[1]) : 100;
    const auto payload = make_payload(me, 1 - me, 256 << 10);
    boot.allgather({});
    for (std::uint64_t k = 1; me < 2 && k <= rounds; ++k) {
      net.set_polling(true);
      net.send_lazy(1 - me, t_wake, payload);
      while (arrived.value() < k) net.poll();
      net.set_polling(false);
    }
    boot.allgather({});
  } else if (mode == "pingpong" || mode == "pingpong-app") {
    // Benchmark: one-way latency (half round trip) and bandwidth per size. Both sides poll
    // the transport while they wait, as a waiting DSM rank does (DSM_POLL_US) and as
    // fi_pingpong does, so neither pays a thread wake-up per message.
    net.set_polling(true);
    if (me == 0) {
      for (int a = 1; a + 1 < argc; a += 2) {
        const std::size_t size = std::stoul(argv[a]);
        const int iters = std::stoi(argv[a + 1]);
        const auto payload = make_payload(0, 1, size);
        const int warm = iters / 10 + 1;
        std::chrono::steady_clock::time_point t0;
        for (int i = 0; i < warm + iters; ++i) {
          if (i == warm) t0 = std::chrono::steady_clock::now();
          const auto v = arrived.value();
          net.send(1, t_ping, payload);
          while (arrived.value() < v + 1) net.poll();
        }
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters / 2;
        std::printf("pingpong %zu %d %.3f %.1f\n", size, iters, us, size / us);
      }
      net.send(1, t_wake, {});
    } else if (me == 1) {
      std::vector<std::byte> pong;
      for (std::uint64_t seen = 0; !woken.load();) {  // t_wake ends it
        while (arrived.value() == seen) net.poll();
        seen = arrived.value();
        if (!app_replies || woken.load()) continue;
        pong.resize(ping_size.load());
        net.send(0, t_pong, pong);
      }
    }
    net.set_polling(false);
  } else {
    std::fprintf(stderr, "net_exerciser: unknown mode %s\n", mode.c_str());
    return 2;
  }
  boot.allgather({});  // nobody leaves while others still send
  const auto& c = net.counters();
  boot.report_finalized("{\"rank\": " + std::to_string(me) + ", \"counters\": {" + json_fields(c) +
                        "}, \"sent_to\": " + sent_to_json(net.sent_to()) + ", \"sections\": {}}");
  if (c.rejected_msgs) check.fail("rank %d: %d rejected (%ld)\n", me, 0, static_cast<long>(c.rejected_msgs.load()));
  return check.errors.load() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: net_exerciser MODE [args]\n");
    return 2;
  }
  try {
    return run(argv[1], argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "net_exerciser: %s\n", e.what());
    return 1;
  }
}
