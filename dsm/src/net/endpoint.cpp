#include "net/endpoint.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "net/fabric_lib.hpp"
#include "net/segments.hpp"

namespace dsm::net {

[[noreturn]] void fail(const char* what, int rc) {
  throw std::runtime_error(std::string("dsm: libfabric ") + what + ": " + fabric::strerror(-rc));
}
void check(const char* what, int rc) {
  if (rc != 0) fail(what, rc);
}
void InfoFree::operator()(fi_info* i) const { fabric::freeinfo(i); }

std::string choose_provider(const job::JobEnv& env) {
  std::string prov = env.provider.empty() ? "shm" : env.provider;
  if (prov != "shm" && prov != "tcp") throw std::runtime_error("dsm: unknown provider '" + prov + "'");
  return prov;
}

void Endpoint::open(const std::string& prov, const job::JobEnv& env) {
  shm = prov == "shm";
  // shm's messages above its inject size (4 KiB) go by default through cross-memory attach
  // (process_vm_writev), a system call that walks and pins the receiver's pages: in a
  // virtual machine that is slower, in latency and in bandwidth, than the provider's
  // segmented copy through shared buffers. The provider reads this when libfabric
  // initializes, at the first fi_getinfo, which follows. A value the user set stays.
  if (shm) setenv("FI_SHM_DISABLE_CMA", "1", 0);
  std::unique_ptr<fi_info, InfoFree> hints(fabric::allocinfo());
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED;
  hints->mode = 0;
  hints->domain_attr->mr_mode = 0;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  hints->fabric_attr->prov_name = strdup(shm ? "shm" : "tcp;ofi_rxm");
  fi_info* got = nullptr;
  if (int rc = fabric::getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &got); rc != 0)
    throw std::runtime_error("dsm: libfabric provider " + prov + " unavailable: " + fabric::strerror(-rc));
  info.reset(got);
  inject_size = info->tx_attr->inject_size;

  fid_fabric* f;
  check("fi_fabric", fabric::open_fabric(info->fabric_attr, &f, nullptr));
  fabric.reset(f);
  fid_domain* d;
  check("fi_domain", fi_domain(fabric.p, info.get(), &d, nullptr));
  domain.reset(d);
  // shm refuses larger address vectors with a bare "Function not implemented".
  if (shm && info->domain_attr->ep_cnt > 0 && std::size_t(env.size) > info->domain_attr->ep_cnt)
    throw std::runtime_error("the shm provider joins at most " + std::to_string(info->domain_attr->ep_cnt) +
                             " ranks and this job has " + std::to_string(env.size) +
                             ": run it with dsmrun --provider tcp, or over several hosts (--hosts)");
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<std::size_t>(env.size);
  fid_av* a;
  check("fi_av_open", fi_av_open(domain.p, &av_attr, &a, nullptr));
  av.reset(a);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = 1024;
  cq_attr.wait_obj = shm ? FI_WAIT_NONE : FI_WAIT_FD;
  fid_cq* c;
  check("fi_cq_open", fi_cq_open(domain.p, &cq_attr, &c, nullptr));
  cq.reset(c);
  if (!shm) check("fi_control(FI_GETWAIT)", fi_control(&cq.p->fid, FI_GETWAIT, &cq_fd));
  fid_ep* e;
  check("fi_endpoint", fi_endpoint(domain.p, info.get(), &e, nullptr));
  ep.reset(e);
  if (shm && env.under_dsmrun) {
    // shm names its segment after the pid by default; pids are reused quickly on a busy
    // host, and a crashed rank's segment would then block a new job. Name it by job and rank
    // instead (dsmrun removes what a crashed job leaves, by this prefix).
    std::string name = shm_segment_prefix(env.token) + std::to_string(env.rank);
    check("fi_setname", fi_setname(&ep.p->fid, name.data(), name.size() + 1));
  }
  check("fi_ep_bind(av)", fi_ep_bind(ep.p, &av.p->fid, 0));
  check("fi_ep_bind(cq)", fi_ep_bind(ep.p, &cq.p->fid, FI_TRANSMIT | FI_RECV));
  check("fi_enable", fi_enable(ep.p));
}

void Endpoint::connect(job::Bootstrap& boot, const job::JobEnv& env) {
  std::vector<std::byte> name(256);
  std::size_t len = name.size();
  check("fi_getname", fi_getname(&ep.p->fid, name.data(), &len));
  name.resize(len);
  const auto names = boot.allgather(name);
  if (names.size() != std::size_t(env.size)) throw std::runtime_error("dsm: the rendezvous returned a wrong number of addresses");
  peers.resize(env.size);
  for (int r = 0; r < env.size; ++r) {
    // The provider reads an address of its own length (shm: up to the NUL of its name).
    const std::vector<std::byte>& a = names[r];
    const bool whole = shm ? std::find(a.begin(), a.end(), std::byte{0}) != a.end() : a.size() == len;
    if (!whole) throw std::runtime_error("dsm: the endpoint address of rank " + std::to_string(r) + " is malformed");
    if (fi_av_insert(av.p, a.data(), 1, &peers[r], 0, nullptr) != 1)
      throw std::runtime_error("dsm: fi_av_insert failed for rank " + std::to_string(r));
  }
}

}  // namespace dsm::net
