// The CPUs a rank's job may use on its host: what dsmrun passes (DSM_HOST_CPUS) and what the
// rank makes of it and of its own affinity (sys::host_cpus, read by dsm::init's choice of
// polling and by the measure of other programs' load alike).
#include <catch2/catch.hpp>

#include <sched.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "runtime/cpus.hpp"
#include "settings.hpp"

namespace {

// Sets (or, with none, removes) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Binds this thread to one CPU for the scope, as dsmrun --bind (or srun's task plugin) does.
class ScopedBind {
 public:
  explicit ScopedBind(int cpu) {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  }
  ~ScopedBind() { sched_setaffinity(0, sizeof saved_, &saved_); }

 private:
  cpu_set_t saved_;
};

}  // namespace

TEST_CASE("A rank's job CPUs: DSM_HOST_CPUS, else its affinity, never Slurm's count of the step") {
  using dsm::sys::host_cpus;
  const std::vector<int> mask = dsm::sys::allowed_cpus();
  REQUIRE(!mask.empty());
  ScopedEnv slurm("SLURM_CPUS_ON_NODE", mask.size() == 1 ? "2" : "1");
  {
    ScopedEnv none("DSM_HOST_CPUS", std::nullopt);
    CHECK(host_cpus().mine == mask);
    CHECK(host_cpus().count == int(mask.size()));
    ScopedEnv empty("DSM_HOST_CPUS", "");
    CHECK(host_cpus().count == int(mask.size()));
  }
  {
    ScopedEnv given("DSM_HOST_CPUS", "7");
    CHECK(host_cpus().mine == mask);
    CHECK(host_cpus().count == 7);
  }
  {
    // A rank bound to one CPU without dsmrun's count (srun binding its step): one CPU.
    ScopedEnv none("DSM_HOST_CPUS", std::nullopt);
    ScopedBind bound(mask.back());
    CHECK(host_cpus().mine == std::vector<int>{mask.back()});
    CHECK(host_cpus().count == 1);
  }
}

TEST_CASE("A rank dsmrun binds on its host counts the CPUs dsmrun may use, not its one") {
  const std::vector<int> mask = dsm::sys::allowed_cpus();
  dsm::launcher::Options opt;
  opt.n = 2;
  const auto env = dsm::launcher::rank_environment(opt, {"127.0.0.1:1", "t", "shm"}, {1, 2, mask.size(), {}});
  std::optional<ScopedEnv> passed;
  for (const auto& [k, v] : env)
    if (k == "DSM_HOST_CPUS") passed.emplace("DSM_HOST_CPUS", v);
  REQUIRE(passed);
  ScopedBind bound(mask.front());
  const auto cpus = dsm::sys::host_cpus();
  CHECK(cpus.mine == std::vector<int>{mask.front()});
  CHECK(cpus.count == int(mask.size()));
}
