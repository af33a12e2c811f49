// The libfabric objects a transport stands on: a reliable-datagram endpoint (FI_EP_RDM), its
// fabric, domain, address vector and completion queue, on the provider the job chose, and
// the address of every rank of the job.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "job/bootstrap.hpp"
#include "job/job_env.hpp"

namespace dsm::net {

// Throw std::runtime_error naming the libfabric call and the provider's error.
[[noreturn]] void fail(const char* what, int rc);
void check(const char* what, int rc);

struct FidCloser {
  void operator()(fid* f) const { fi_close(f); }
};
template <class T>
struct Fid {
  T* p = nullptr;
  std::unique_ptr<fid, FidCloser> owner;
  void reset(T* q) {
    p = q;
    owner.reset(&q->fid);
  }
};
struct InfoFree {
  void operator()(fi_info* i) const;
};

// The job's provider: "shm" or "tcp" (none named: shm). Throws for any other.
std::string choose_provider(const job::JobEnv& env);

struct Endpoint {
  // Opens every object on `prov`. The completion queue has a wait fd (cq_fd) on tcp; on shm
  // it has none, and doorbells wake a sleeper.
  void open(const std::string& prov, const job::JobEnv& env);
  // Exchanges the endpoints' names through the rendezvous (collective) and enters every
  // rank's in the address vector (peers).
  void connect(job::Bootstrap& boot, const job::JobEnv& env);

  bool shm = false;
  std::unique_ptr<fi_info, InfoFree> info;
  Fid<fid_fabric> fabric;
  Fid<fid_domain> domain;
  Fid<fid_av> av;
  Fid<fid_cq> cq;
  Fid<fid_ep> ep;
  std::vector<fi_addr_t> peers;
  std::size_t inject_size = 0;
  int cq_fd = -1;
};

}  // namespace dsm::net
