#include "runtime/stats.hpp"

#include <time.h>

#include <cstdio>

namespace dsm::stats {

namespace {
Counters own;
std::atomic<Counters*> current{&own};
}  // namespace

Counters& counters() { return *current.load(std::memory_order_relaxed); }

void copy(const Counters& from, Counters& to) {
#define DSM_COPY(name) to.name.store(from.name.load(std::memory_order_relaxed), std::memory_order_relaxed);
  DSM_COUNTERS(DSM_COPY)
#undef DSM_COPY
#define DSM_COPY(name) to.name##_ns.store(from.name##_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  DSM_TIMERS(DSM_COPY)
#undef DSM_COPY
}

void publish_into(Counters& into) {
  copy(counters(), into);
  current.store(&into, std::memory_order_relaxed);
}

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000u + std::uint64_t(ts.tv_nsec);
}

namespace {
thread_local Timer* t_current = nullptr;
}

Timer::Timer(std::atomic<std::uint64_t>& into) : into_(into), parent_(t_current), start_(now_ns()) {
  if (parent_) parent_->into_.fetch_add(start_ - parent_->start_, std::memory_order_relaxed);
  t_current = this;
}

Timer::~Timer() {
  std::uint64_t now = now_ns();
  into_.fetch_add(now - start_, std::memory_order_relaxed);
  t_current = parent_;
  if (parent_) parent_->start_ = now;
}

std::string counters_json(const Counters& c, double total_seconds, const std::string& extra) {
  std::string out = "{";
  char buf[96];
#define DSM_EMIT(name)                                                                   \
  std::snprintf(buf, sizeof buf, "\"%s\": %llu, ", #name, (unsigned long long)c.name.load()); \
  out += buf;
  DSM_COUNTERS(DSM_EMIT)
#undef DSM_EMIT
  double waits = 0;
#define DSM_EMIT(name)                                                               \
  waits += c.name##_ns.load() * 1e-9;                                                \
  std::snprintf(buf, sizeof buf, "\"%s_seconds\": %.6f, ", #name, c.name##_ns.load() * 1e-9); \
  out += buf;
  DSM_TIMERS(DSM_EMIT)
#undef DSM_EMIT
  // protocol, comm_wait, lock_wait and barrier_wait do not overlap; the rest is the user's.
  std::snprintf(buf, sizeof buf, "\"user_seconds\": %.6f, \"total_seconds\": %.6f",
                total_seconds > waits ? total_seconds - waits : 0.0, total_seconds);
  out += buf;
  if (!extra.empty()) out += ", " + extra;
  out += "}";
  return out;
}

}  // namespace dsm::stats
