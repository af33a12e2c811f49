#include "net/fabric_lib.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

namespace dsm::net::fabric {

namespace {

// libinfinipath and libpsm2 (pulled in for the psm providers) install crash handlers when
// they are loaded, which print a backtrace and exit(1): a crash must stay a crash, so dsmrun
// reports the signal and the DSM runtime's SIGSEGV handler chains to the default action.
// Their SIGINT and SIGTERM handlers call exit(1) too, which hangs in libfabric's destructor
// when the signal interrupts libfabric itself: those signals must kill the rank.
constexpr int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};

bool foreign(const struct sigaction& sa) {
  const void* fn = (sa.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(sa.sa_sigaction)
                                               : reinterpret_cast<void*>(sa.sa_handler);
  Dl_info where{};
  return fn && dladdr(fn, &where) && where.dli_fname &&
         (std::strstr(where.dli_fname, "libinfinipath") || std::strstr(where.dli_fname, "libpsm"));
}

// While libfabric loads, the crash signals wait (a kill from dsmrun or a user's ^C, delivered
// to those libraries' handlers, would end the rank with exit(1) instead of the signal), and
// afterwards the handlers the process had come back: the program's own, or the default
// where they were those libraries' (a program that links libfabric itself).
class CrashHandlersKept {
 public:
  CrashHandlersKept() {
    sigset_t held;
    sigemptyset(&held);
    for (std::size_t i = 0; i < std::size(crash_signals); ++i) {
      sigaction(crash_signals[i], nullptr, &kept_[i]);
      if (foreign(kept_[i])) {
        kept_[i] = {};
        kept_[i].sa_handler = SIG_DFL;
      }
      sigaddset(&held, crash_signals[i]);
    }
    pthread_sigmask(SIG_BLOCK, &held, &mask_);
  }
  ~CrashHandlersKept() {  // the handlers first: a signal that waited meets them
    for (std::size_t i = 0; i < std::size(crash_signals); ++i) sigaction(crash_signals[i], &kept_[i], nullptr);
    pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }
  CrashHandlersKept(const CrashHandlersKept&) = delete;
  CrashHandlersKept& operator=(const CrashHandlersKept&) = delete;

 private:
  struct sigaction kept_[std::size(crash_signals)];
  sigset_t mask_;
};

struct Lib {
  decltype(&::fi_getinfo) getinfo;
  decltype(&::fi_dupinfo) dupinfo;
  decltype(&::fi_freeinfo) freeinfo;
  decltype(&::fi_fabric) fabric;
  decltype(&::fi_strerror) strerror;
};

// `version`: the one a direct link against libfabric 1.x binds (its default in 1.17), so that
// a newer library serves the ABI these headers describe; any version where it has none.
template <class F>
F symbol(void* lib, const char* name, const char* version) {
  void* f = dlvsym(lib, name, version);
  if (!f) f = dlsym(lib, name);
  if (!f) throw std::runtime_error(std::string("dsm: libfabric lacks ") + name + ": " + dlerror());
  return reinterpret_cast<F>(f);
}

Lib load() {
  // The library the build found first (a libfabric of its own prefix), then the loader's search.
  std::string why;
  void* lib = nullptr;
  for (const char* name : {DSM_LIBFABRIC_PATH, "libfabric.so.1"}) {
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    why += std::string(why.empty() ? "" : "; ") + dlerror();
  }
  if (!lib) throw std::runtime_error("dsm: cannot load libfabric (" + why + "); install libfabric1");
  return {symbol<decltype(Lib::getinfo)>(lib, "fi_getinfo", "FABRIC_1.3"),
          symbol<decltype(Lib::dupinfo)>(lib, "fi_dupinfo", "FABRIC_1.3"),
          symbol<decltype(Lib::freeinfo)>(lib, "fi_freeinfo", "FABRIC_1.3"),
          symbol<decltype(Lib::fabric)>(lib, "fi_fabric", "FABRIC_1.1"),
          symbol<decltype(Lib::strerror)>(lib, "fi_strerror", "FABRIC_1.0")};
}

// Loaded once; a failed load throws and is tried again at the next call.
const Lib& lib() {
  static const Lib l = [] {
    CrashHandlersKept kept;
    return load();
  }();
  return l;
}

}  // namespace

void load() { lib(); }

int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
            fi_info** info) {
  return lib().getinfo(version, node, service, flags, hints, info);
}

fi_info* allocinfo() {
  fi_info* info = lib().dupinfo(nullptr);
  if (!info) throw std::runtime_error("dsm: libfabric could not allocate an fi_info");
  return info;
}

void freeinfo(fi_info* info) { lib().freeinfo(info); }

int open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) { return lib().fabric(attr, fabric, context); }

const char* strerror(int errnum) { return lib().strerror(errnum); }

}  // namespace dsm::net::fabric
