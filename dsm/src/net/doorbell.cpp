#include "net/doorbell.hpp"

#include <unistd.h>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <string>

#include "net/segments.hpp"
#include "net/wait_counter.hpp"

namespace dsm::net {

namespace {
namespace bip = boost::interprocess;

// Every rank of a shm job is on this host; the segment name comes from the job token.
std::string segment_name(const job::JobEnv& env) {
  return env.under_dsmrun ? shm_segment_prefix(env.token) + "bell" : "dsm-bell-" + std::to_string(getpid());
}
}  // namespace

Doorbells::Doorbells() = default;
Doorbells::~Doorbells() = default;

void Doorbells::open(const job::JobEnv& env) {
  const std::string name = segment_name(env);
  bip::shared_memory_object shm(bip::open_or_create, name.c_str(), bip::read_write);
  shm.truncate(static_cast<bip::offset_t>(sizeof(Bell) * env.size));
  region_ = std::make_unique<bip::mapped_region>(shm, bip::read_write);
  bells_ = static_cast<Bell*>(region_->get_address());
  if (!env.under_dsmrun) bip::shared_memory_object::remove(name.c_str());
}

void Doorbells::unlink(const job::JobEnv& env) { bip::shared_memory_object::remove(segment_name(env).c_str()); }

void Doorbells::ring(int dest) {
  Bell& b = bells_[dest];
  b.ring.fetch_add(1, std::memory_order_seq_cst);
  if (b.sleeping.load(std::memory_order_seq_cst) && !b.polling.load(std::memory_order_seq_cst))
    futex_wake_all(b.ring, true);
}

}  // namespace dsm::net
