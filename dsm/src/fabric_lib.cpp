#include "fabric_lib.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace dsm::net::fabric {

namespace {

// libinfinipath installs crash handlers when it is loaded, which print a backtrace and
// exit(1): a crash must stay a crash, so dsmrun reports the signal and the DSM runtime's
// SIGSEGV handler chains to the default action. Its SIGINT and SIGTERM handlers call exit(1)
// too, which hangs in libfabric's destructor when the signal interrupts libfabric itself
// (dsm::init): those signals must kill the rank. Called right after loading, before the
// runtime installs its own fault handler.
constexpr int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};

void drop_foreign_crash_handlers() {
  for (int sig : crash_signals) {
    struct sigaction sa{};
    sigaction(sig, nullptr, &sa);
    Dl_info where{};
    const void* fn = (sa.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(sa.sa_sigaction)
                                                 : reinterpret_cast<void*>(sa.sa_handler);
    if (fn && dladdr(fn, &where) && where.dli_fname && std::strstr(where.dli_fname, "libinfinipath"))
      signal(sig, SIG_DFL);
  }
}

struct Lib {
  decltype(&::fi_getinfo) getinfo;
  decltype(&::fi_dupinfo) dupinfo;
  decltype(&::fi_freeinfo) freeinfo;
  decltype(&::fi_fabric) fabric;
  decltype(&::fi_strerror) strerror;
};

template <class F>
F symbol(void* lib, const char* name) {
  void* f = dlsym(lib, name);
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
  drop_foreign_crash_handlers();
  return {symbol<decltype(Lib::getinfo)>(lib, "fi_getinfo"), symbol<decltype(Lib::dupinfo)>(lib, "fi_dupinfo"),
          symbol<decltype(Lib::freeinfo)>(lib, "fi_freeinfo"), symbol<decltype(Lib::fabric)>(lib, "fi_fabric"),
          symbol<decltype(Lib::strerror)>(lib, "fi_strerror")};
}

// While libfabric loads, the crash signals that other processes send (dsmrun's kill, a
// user's ^C) wait: delivered between libinfinipath's constructor and the drop of its
// handlers, they would end the rank with exit(1) instead of the signal.
class CrashSignalsHeld {
 public:
  CrashSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int sig : crash_signals) sigaddset(&held, sig);
    pthread_sigmask(SIG_BLOCK, &held, &before_);
  }
  ~CrashSignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  CrashSignalsHeld(const CrashSignalsHeld&) = delete;
  CrashSignalsHeld& operator=(const CrashSignalsHeld&) = delete;

 private:
  sigset_t before_;
};

// Loaded once; a failed load throws and is tried again at the next call.
const Lib& lib() {
  static const Lib l = [] {
    CrashSignalsHeld held;
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

fi_info* allocinfo() { return lib().dupinfo(nullptr); }

void freeinfo(fi_info* info) { lib().freeinfo(info); }

int open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) { return lib().fabric(attr, fabric, context); }

const char* strerror(int errnum) { return lib().strerror(errnum); }

}  // namespace dsm::net::fabric
