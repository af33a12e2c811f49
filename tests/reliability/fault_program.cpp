// A DSM program that fails on purpose, run through dsmrun by the reliability tests: one rank
// (the victim) dies at a chosen point of the protocol, or the program feeds the runtime bad
// input. The tests check what dsmrun and the other ranks do about it, not this program.
//
//   fault_program WHERE VICTIM HOW
//     WHERE: fetch   the victim wrote many pages; the others are fetching its diffs
//            lock    the victim holds lock 5; the others wait for it
//            barrier the others wait in a barrier the victim never enters
//            init    the victim leaves before dsm::init; the others wait in it
//     HOW:   segv | kill (signal), exit (status 3), return (exit 0 without dsm::finalize),
//            stop (SIGSTOP: alive but hung; only dsmrun --timeout ends such a job)
//   fault_program wild           a write outside the shared region (must crash with SIGSEGV)
//   fault_program alloc_sizes    ranks call dsm::alloc with different sizes
//   fault_program lock_range     a lock id out of range
//   fault_program lock_twice     a lock acquired again by the rank that holds it
//   fault_program lock_not_held  a lock released by a rank that does not hold it
//   fault_program reduce_mismatch  ranks finish reductions of different types together
//   fault_program lock_barrier   a barrier entered holding a lock another rank asked for
//   fault_program lock_in_barrier    the same, asked for while the holder is in the barrier
//   fault_program lock_after_barrier a lock held through barriers, asked for after them (ok)
//   fault_program region_taken   something is mapped at DSM_REGION_BASE before dsm::init
//   fault_program rank_before_init  dsm::rank() before dsm::init
//   fault_program ok             a short correct run (the job must succeed)
//   fault_program print_closed   each rank prints with stdout closed; the shared data must
//                                not change (the region once took descriptor 1)
//   fault_program read_stdin     each rank reads a line of its standard input; rank 0 prints
//                                what every rank read
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr long pages = 2000;  // enough that fetching them takes a while
constexpr long words_per_page = 4096 / sizeof(long);

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

[[noreturn]] void die(const std::string& how) {
  std::fflush(stdout);
  if (how == "segv") std::raise(SIGSEGV);
  if (how == "kill") std::raise(SIGKILL);
  if (how == "exit") std::_Exit(3);
  if (how == "return") std::exit(0);  // a normal exit, but dsm::finalize was never called
  if (how == "stop") {
    std::raise(SIGSTOP);
    std::_Exit(5);  // continued: leave anyway
  }
  std::fprintf(stderr, "fault_program: unknown HOW '%s'\n", how.c_str());
  std::_Exit(2);
}

// Waits until process PID (on this host) is stopped, for at most 10 s.
void wait_stopped(pid_t pid) {
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  for (int tries = 0; tries < 10000; ++tries) {
    std::ifstream in(stat);
    std::string line;
    std::getline(in, line);
    const auto paren = line.rfind(')');  // the state follows the command name
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T') return;
    sleep_ms(1);
  }
  std::fprintf(stderr, "fault_program: process %d never stopped\n", static_cast<int>(pid));
}

// The others read every page the victim wrote, faulting and fetching diffs from it, round
// after round; the victim dies shortly after a barrier, while those fetches are under way.
void during_fetch(int victim, const std::string& how) {
  long* sh = dsm::alloc<long>(pages * words_per_page);
  long* victim_pid = dsm::alloc<long>(1);
  const int me = dsm::rank();
  if (me == victim) *victim_pid = getpid();
  for (long round = 1;; ++round) {
    if (me == victim)
      for (long p = 0; p < pages; ++p) sh[p * words_per_page + me] = round;  // a diff per page
    dsm::barrier();
    if (me == victim) {
      if (round == 3) {
        if (how != "stop") sleep_ms(5);  // the others have started faulting on its pages
        die(how);
      }
    } else {
      // A stopped victim's service thread answers until the whole process stops, which on a
      // busy machine can be after every fetch: the others ask only once it has stopped.
      if (round == 3 && how == "stop") wait_stopped(static_cast<pid_t>(*victim_pid));
      long sum = 0;
      for (long p = 0; p < pages; ++p) sum += sh[p * words_per_page + victim];
      if (sum != pages * round) std::fprintf(stderr, "rank %d: read %ld, want %ld\n", me, sum, pages * round);
    }
    dsm::barrier();
  }
}

void holding_lock(int victim, const std::string& how) {
  long* sh = dsm::alloc<long>(1);
  if (dsm::rank() == victim) dsm::lock_acquire(5);
  dsm::barrier();  // the victim holds the lock before anyone asks for it
  if (dsm::rank() == victim) {
    *sh += 1;
    sleep_ms(300);  // the others are waiting for the lock now
    die(how);
  }
  dsm::lock_acquire(5);  // never granted
  std::fprintf(stderr, "rank %d: got a lock its holder never released\n", dsm::rank());
  std::_Exit(4);
}

void in_barrier(int victim, const std::string& how) {
  dsm::alloc<long>(1);
  if (dsm::rank() == victim) {
    sleep_ms(300);  // the others are inside the barrier now
    die(how);
  }
  dsm::barrier();  // never completes
  std::fprintf(stderr, "rank %d: a barrier completed without rank %d\n", dsm::rank(), victim);
  std::_Exit(4);
}

// Writes to a read-only page that is not part of the shared region: the runtime's fault
// handler must not swallow it.
void wild_write() {
  dsm::alloc<long>(1);
  dsm::barrier();
  if (dsm::rank() == dsm::nprocs() - 1) {
    void* p = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile long*>(p) = 1;
    std::fprintf(stderr, "rank %d: a write to a read-only page outside the region did not fault\n", dsm::rank());
    std::_Exit(4);
  }
  dsm::barrier();
}

// "rank R cpus L", L as /proc/self/status lists the CPUs this process may run on.
void print_affinity() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  char line[512];
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "Cpus_allowed_list:", 18) == 0) std::printf("rank %d cpus %s", dsm::rank(), line + 19);
  if (f) std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string where = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::string how = argc > 3 ? argv[3] : "segv";
  const char* rank_env = std::getenv("DSM_RANK");
  if (where == "init" && rank_env && std::atoi(rank_env) == victim) {
    sleep_ms(200);  // the others are waiting in dsm::init
    die(how);
  }
  if (where == "region_taken") {
    // Whatever is already there (a library, a heap) makes the region impossible to reserve.
    const char* base = std::getenv("DSM_REGION_BASE");
    void* at = base ? reinterpret_cast<void*>(std::strtoull(base, nullptr, 0)) : nullptr;
    if (mmap(at, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != at) {
      std::perror("fault_program: cannot map at DSM_REGION_BASE");
      return 4;
    }
  }
  if (where == "rank_before_init") return dsm::rank();
  // The program's own handler, set before dsm::init, still runs after libfabric is loaded
  // (whose libraries install handlers of their own, some passing the signal on).
  if (where == "own_handler") std::signal(SIGTERM, [](int) { _exit(9); });
  dsm::init(argc, argv);
  if (where == "own_handler") {  // the others wait for the victim, which the handler ends
    if (dsm::rank() == victim) std::raise(SIGTERM);
    dsm::barrier();
  } else if (where == "fetch")
    during_fetch(victim, how);
  else if (where == "lock") holding_lock(victim, how);
  else if (where == "barrier") in_barrier(victim, how);
  else if (where == "wild") wild_write();
  else if (where == "alloc_sizes") dsm::alloc<char>(4096 * (1 + dsm::rank()));
  else if (where == "alloc_count") dsm::alloc<double>(static_cast<std::size_t>(std::strtoll(argv[2], nullptr, 0)));
  else if (where == "lock_range") dsm::lock_acquire(dsm::max_locks());
  else if (where == "lock_twice") {
    dsm::lock_acquire(3);
    dsm::lock_acquire(3);
  } else if (where == "reduce_mismatch") {
    // Rank 0 reduces a long, the others a double, at the same barrier.
    long count = 1;
    double mass = 1;
    auto red = dsm::rank() == 0 ? dsm::lb::Reduction{dsm::lb::reduced<dsm::lb::Op::plus>(count)}
                                : dsm::lb::Reduction{dsm::lb::reduced<dsm::lb::Op::plus>(mass)};
    red.finish();
  } else if (where == "lock_not_held")
    dsm::lock_release(3);
  else if (where == "lock_barrier") {
    // Rank 0 enters a barrier holding lock 0, which rank 1 has asked for.
    if (dsm::rank() == 0) {
      dsm::lock_acquire(0);
      sleep_ms(300);
      dsm::barrier();
    } else if (dsm::rank() == 1) {
      sleep_ms(50);
      dsm::lock_acquire(0);
      dsm::lock_release(0);
      dsm::barrier();
    } else {
      dsm::barrier();
    }
  } else if (where == "lock_in_barrier") {
    // Rank 1 asks for lock 0 after rank 0 entered a barrier holding it.
    if (dsm::rank() == 0) dsm::lock_acquire(0);
    if (dsm::rank() == 1) {
      sleep_ms(300);
      dsm::lock_acquire(0);
      dsm::lock_release(0);
    }
    dsm::barrier();
  } else if (where == "lock_after_barrier") {
    // Correct: the last rank holds lock 1 through barriers nobody needs it in; rank 0, which
    // gets its departure first (it manages the barrier), asks for it as soon as it leaves the
    // first barrier of each of 20 rounds, through rank 1 (the lock's manager), often before
    // the holder has left that barrier (2-11 times per run, counted when it was written).
    long* sh = dsm::alloc<long>(1);
    const int me = dsm::rank(), holder = dsm::nprocs() - 1;
    if (me == holder) dsm::lock_acquire(1);
    for (int round = 0; round < 20; ++round) {
      dsm::barrier();
      if (me == 0) {
        dsm::lock_acquire(1);
        *sh += 1;
        dsm::lock_release(1);
      } else if (me == holder) {
        *sh += 1;
        sleep_ms(2);
        dsm::lock_release(1);
      }
      dsm::barrier();
      if (me == holder) dsm::lock_acquire(1);
    }
    if (me == holder) dsm::lock_release(1);
    dsm::barrier();
    if (me == 0 && *sh != 40) {
      std::fprintf(stderr, "fault_program: counter %ld, want 40\n", *sh);
      std::exit(1);
    }
  } else if (where == "extra_barrier") {
    if (dsm::rank() == 0) dsm::barrier();  // the others go on to finalize
  }
  else if (where == "affinity") print_affinity();
  else if (where == "after_finalize") {
    dsm::finalize();
    dsm::barrier();
  } else if (where == "print_closed") {
    long* sh = dsm::alloc<long>(words_per_page);
    std::printf("rank %d prints into a closed stdout\n", dsm::rank());
    std::fflush(stdout);
    dsm::barrier();
    for (long k = 0; k < words_per_page; ++k)
      if (sh[k] != 0) {
        std::fprintf(stderr, "rank %d: shared word %ld changed without a store\n", dsm::rank(), k);
        return 1;
      }
  } else if (where == "read_stdin") {
    constexpr int width = 64;
    char* sh = dsm::alloc<char>(width * dsm::nprocs());
    // The other ranks first: where all ranks shared the input, the first reader took it.
    const auto read_line = [&] {
      char line[width] = {};
      if (!std::fgets(line, sizeof line, stdin)) std::snprintf(line, sizeof line, "end of input");
      line[std::strcspn(line, "\r\n")] = '\0';
      std::memcpy(sh + width * dsm::rank(), line, width);
    };
    if (dsm::rank() != 0) read_line();
    dsm::barrier();
    if (dsm::rank() == 0) read_line();
    dsm::barrier();
    if (dsm::rank() == 0) {
      std::printf("stdin:");
      for (int r = 0; r < dsm::nprocs(); ++r) std::printf(" rank %d '%s'", r, sh + width * r);
      std::printf("\n");
    }
  } else if (where == "init" || where == "ok" || where == "region_taken") {
    long* sh = dsm::alloc<long>(1);
    dsm::lock_acquire(0);
    *sh += 1;
    dsm::lock_release(0);
    dsm::barrier();
    if (*sh != dsm::nprocs()) return 1;
  } else {
    std::fprintf(stderr, "fault_program: unknown mode '%s'\n", where.c_str());
    return 2;
  }
  dsm::finalize();
  return 0;
}
