// Each case runs in a forked child: the SIGSEGV handler is process-wide state, and some
// cases must crash.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <atomic>
#include <functional>
#include <stdexcept>

#include "mem/fault.hpp"
#include "mem/region.hpp"
#include "region_base.hpp"

using namespace dsm::mem;

namespace {

const std::uintptr_t base = test_region_base();
constexpr std::size_t capacity = 16 << 20;

// Runs `body` in a child; its int result becomes the exit code. Returns the wait status.
int in_child(const std::function<int()>& body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL);  // not Catch's or a sanitizer's crash reporter
    int code = 100;
    try {
      code = body();
    } catch (...) {
      code = 101;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
bool died_of_segv(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV; }

// What the test handler saw; it opens the page for reading or writing, as the protocol would.
// g_faults is atomic: the compiler must not keep it in a register across a faulting access.
Region* g_region = nullptr;
struct Seen {
  void* addr;
  bool is_write;
} g_seen[8];
std::atomic<int> g_faults{0};

void open_page(void* addr, bool is_write) {
  const int n = g_faults.load();
  if (n < 8) g_seen[n] = {addr, is_write};
  g_faults.store(n + 1);
  g_region->protect(g_region->page_of(addr), 1, is_write ? Prot::read_write : Prot::read);
}

// A write to an unmapped page near zero (not a null pointer, which the compiler may turn
// into a trap instruction).
void crash_outside() {
  volatile std::uintptr_t nowhere = 64;
  *reinterpret_cast<volatile int*>(nowhere) = 1;
}

void exit_42(int, siginfo_t*, void*) { _exit(42); }

}  // namespace

TEST_CASE("faults tell reads from writes, and the handler opens the page and resumes") {
  const int status = in_child([] {
    Region r(base, capacity);
    g_region = &r;
    install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
    auto* p = reinterpret_cast<volatile unsigned char*>(r.app());
    r.alias()[3 * page_size + 5] = std::byte{9};
    int code = 0;
    if (p[3 * page_size + 5] != 9) code |= 1;           // read fault, page opened read-only
    p[3 * page_size + 6] = 4;                            // write fault on the read-only page
    p[7 * page_size] = 1;                                // write fault on an invalid page
    p[3 * page_size + 7] = 5;                            // page open: no fault
    if (g_faults != 3) code |= 2;
    if (g_seen[0].is_write || g_seen[0].addr != r.app() + 3 * page_size + 5) code |= 4;
    if (!g_seen[1].is_write || g_seen[1].addr != r.app() + 3 * page_size + 6) code |= 8;
    if (!g_seen[2].is_write || g_seen[2].addr != r.app() + 7 * page_size) code |= 16;
    if (r.alias()[3 * page_size + 6] != std::byte{4} || r.alias()[7 * page_size] != std::byte{1}) code |= 32;
    uninstall_fault_handler();
    return code;
  });
  CHECK(exited_with(status, 0));
}

TEST_CASE("a fault outside the region still crashes with SIGSEGV") {
  CHECK(died_of_segv(in_child([] {
    Region r(base, capacity);
    g_region = &r;
    install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
    crash_outside();
    return 0;
  })));
}

TEST_CASE("a SIGSEGV sent by kill still ends the process") {
  CHECK(died_of_segv(in_child([] {
    Region r(base, capacity);
    g_region = &r;
    install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
    kill(getpid(), SIGSEGV);
    return 0;
  })));
}

TEST_CASE("faults outside the region go to the previous handler") {
  CHECK(exited_with(in_child([] {
    struct sigaction sa {};
    sa.sa_sigaction = exit_42;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    Region r(base, capacity);
    g_region = &r;
    install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
    reinterpret_cast<volatile char*>(r.app())[0] = 1;  // ours: handled
    if (g_faults != 1) return 1;
    crash_outside();  // not ours: exit_42
    return 0;
  }), 42));
}

TEST_CASE("uninstall restores the previous action, and one installation at a time") {
  CHECK(died_of_segv(in_child([] {
    Region r(base, capacity);
    g_region = &r;
    install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
    try {
      install_fault_handler(r.app(), r.app() + r.capacity(), open_page);
      return 1;
    } catch (const std::logic_error&) {
    }
    uninstall_fault_handler();
    reinterpret_cast<volatile char*>(r.app())[0] = 1;  // nobody handles it now
    return 2;
  })));
}
