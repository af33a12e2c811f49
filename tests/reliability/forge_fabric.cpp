// A process outside the job sends forged libfabric messages straight to a rank's shm
// endpoint (bypassing the rendezvous, which tests/net's rogue test covers): a header with a
// wrong job token, one with a bad magic, a message shorter than a header, and, with the
// job's token as a rank gone wrong would send it, a large-payload header announcing 8192
// bytes whose tagged payload brings 100. The rank must drop and log them, and the job must
// go on and finish with exact results.
//
//   forge_fabric job           the DSM program (run through dsmrun --provider shm): rank 0
//                              starts the rogue against rank 1 mid-job, waits for it, then
//                              the ranks keep working (lock increments, barriers) and check
//   forge_fabric rogue NAME    the rogue: opens its own shm endpoint and sends to NAME
//   forge_fabric forged KIND   a reply forged inside the job reaches rank 1 ahead of the real
//                              one (queued as the service thread queues what arrives); rank 1
//                              must refuse it, naming it. KIND:
//       stray        a lock grant nobody waits for, before a barrier (not read as the departure)
//       stamp        a lock grant whose interval of rank 0 claims to have seen rank 1's
//                    interval 999 (a whole-page notice with such a stamp drops changes)
//       own          the same, with rank 1's "own" interval 999 in the grant to cover it
//       diff_signed  a diff reply from rank 0 that says rank 1 wrote it
//       diff_flags   a diff reply from rank 0 that answers a request made at a collection
//       diff_kind    a whole page where the fault asks rank 0 for a diff
//       diff_unasked a change of the page after the one the fault asks for
//       diff_through a whole page "as the interval asked for left it", which is no newer
#include <dsm/dsm.hpp>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "net/transport.hpp"
#include "net/wire.hpp"
#include "proto/diffs.hpp"
#include "proto/state.hpp"

namespace {

int fail(const char* what, int rc) {
  std::fprintf(stderr, "forge_fabric rogue: %s: %s\n", what, fi_strerror(-rc));
  return 3;
}

int rogue(const std::string& target) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED;
  hints->domain_attr->mr_mode = 0;
  hints->fabric_attr->prov_name = strdup("shm");
  fi_info* info = nullptr;
  if (int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info)) return fail("fi_getinfo", rc);
  fid_fabric* fabric;
  fid_domain* domain;
  fid_av* av;
  fid_cq* cq;
  fid_ep* ep;
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  if (int rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) return fail("fi_fabric", rc);
  if (int rc = fi_domain(fabric, info, &domain, nullptr)) return fail("fi_domain", rc);
  if (int rc = fi_av_open(domain, &av_attr, &av, nullptr)) return fail("fi_av_open", rc);
  if (int rc = fi_cq_open(domain, &cq_attr, &cq, nullptr)) return fail("fi_cq_open", rc);
  if (int rc = fi_endpoint(domain, info, &ep, nullptr)) return fail("fi_endpoint", rc);
  if (int rc = fi_ep_bind(ep, &av->fid, 0)) return fail("fi_ep_bind", rc);
  if (int rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) return fail("fi_ep_bind", rc);
  if (int rc = fi_enable(ep)) return fail("fi_enable", rc);
  fi_addr_t peer;
  if (fi_av_insert(av, target.c_str(), 1, &peer, 0, nullptr) != 1) return fail("fi_av_insert", -FI_EINVAL);

  using namespace dsm::net;
  std::vector<std::vector<std::byte>> forged;
  Header h;
  h.src = 0;
  h.token = token_digest("not the job's token");  // what a stranger can put there
  std::vector<std::byte> m(header_size);
  encode(h, std::span<std::byte, header_size>(m.data(), header_size));
  forged.push_back(m);
  forged.push_back(std::vector<std::byte>(header_size, std::byte{0}));  // bad magic
  forged.push_back(std::vector<std::byte>(3, std::byte{0x44}));       // too short
  // Far ahead of rank 0's own sequence to rank 1, so no real message is stashed behind it.
  Header large;
  large.src = 0;
  large.flags = flag_large;
  large.seq = 500000;
  large.length = 8192;
  const char* token = std::getenv("DSM_TOKEN");
  large.token = token_digest(token ? token : "");
  encode(large, std::span<std::byte, header_size>(m.data(), header_size));
  forged.push_back(m);
  const std::vector<std::byte> short_payload(100, std::byte{0x55});
  const auto completed = [&](ssize_t rc) {
    if (rc) return fail("send", int(rc));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    fi_cq_msg_entry e;
    while ((rc = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
      if (std::chrono::steady_clock::now() > until) return fail("send completion", -FI_ETIMEDOUT);
    return rc == 1 ? 0 : fail("fi_cq_read", int(rc));
  };
  int ctx;
  for (auto& msg : forged) {
    ssize_t rc;
    while ((rc = fi_send(ep, msg.data(), msg.size(), nullptr, peer, &ctx)) == -FI_EAGAIN) fi_cq_read(cq, nullptr, 0);
    if (int bad = completed(rc)) return bad;
  }
  ssize_t rc;
  while ((rc = fi_tsend(ep, short_payload.data(), short_payload.size(), nullptr, peer, large_tag(0, large.seq), &ctx)) ==
         -FI_EAGAIN)
    fi_cq_read(cq, nullptr, 0);
  if (int bad = completed(rc)) return bad;
  std::printf("rogue: sent %zu forged messages to %s\n", forged.size() + 1, target.c_str());
  std::fflush(stdout);
  fi_close(&ep->fid);
  fi_close(&cq->fid);
  fi_close(&av->fid);
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  fi_freeinfo(hints);
  return 0;
}

int job(const char* self) {
  long* sh = dsm::alloc<long>(1);
  dsm::barrier();
  if (dsm::rank() == 0) {
    const char* token = std::getenv("DSM_TOKEN");
    const std::string target = dsm::net::shm_segment_prefix(token ? token : "") + "1";
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", self, "rogue", target.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "forge_fabric: the rogue failed (status %d)\n", status);
      return 1;
    }
  }
  // The job goes on: exact results after the forged messages.
  for (int k = 0; k < 100; ++k) {
    dsm::lock_acquire(1);
    *sh += 1;
    dsm::lock_release(1);
  }
  dsm::barrier();
  const bool ok = *sh == 100L * dsm::nprocs();
  if (!ok) std::fprintf(stderr, "rank %d: counter %ld, want %ld\n", dsm::rank(), *sh, 100L * dsm::nprocs());
  dsm::finalize();
  if (ok && dsm::rank() == 0) std::printf("forge ok\n");
  return ok ? 0 : 1;
}

int forged_reply(const std::string& kind) {
  using namespace dsm::proto;
  long* sh = dsm::alloc<long>(512);  // a page
  if (dsm::rank() == 0) sh[0] = 1;
  dsm::barrier();
  if (dsm::rank() == 1) {
    dsm::proto::codec::Writer w;
    if (kind == "stray") {
      w.put<std::uint32_t>(0);
      post_inbox(0, lock_grant, w.buffer());
      dsm::barrier();
    } else if (kind == "stamp" || kind == "own") {
      const Interval own{.proc = 1, .idx = 999, .vt = {0, 1000}, .runs = {}};
      const Interval forged{.proc = 0, .idx = 0, .vt = {1, 1000}, .runs = {}};
      std::vector<const Interval*> list{&forged};
      if (kind == "own") list.insert(list.begin(), &own);
      w.put<std::uint32_t>(0);  // the lock
      encode_list(w, list);
      post_inbox(0, lock_grant, w.buffer());
      dsm::lock_acquire(0);
      dsm::lock_release(0);
    } else if (kind == "diff_signed" || kind == "diff_flags") {
      w.put<std::uint32_t>(kind == "diff_signed" ? 1 : 0);  // the writer it names
      w.put<std::uint32_t>(kind == "diff_flags" ? 1 : 0);   // the request's flags
      w.put<std::uint32_t>(0);  // items
      post_inbox(0, diff_reply, w.buffer());
      std::printf("read %ld\n", *static_cast<volatile long*>(sh));  // the fault fetches rank 0's write
    } else if (kind == "diff_kind" || kind == "diff_unasked" || kind == "diff_through") {
      // One item, for the change the fault will ask for: as a whole page where a diff is
      // due, as a whole page of an interval that is no newer, or for the page after it,
      // which nobody asks for.
      auto& st = state();
      const auto page = std::uint32_t(st.region->page_of(sh));
      const std::uint32_t idx = st.heap.pages[page].pending.at(0).idx;
      w.put<std::uint32_t>(0);
      w.put<std::uint32_t>(0);
      w.put<std::uint32_t>(1);
      w.put<std::uint32_t>(kind == "diff_unasked" ? page + 1 : page);
      w.put(idx);
      w.put<std::uint8_t>(kind == "diff_kind" ? item_whole : kind == "diff_through" ? whole_through : item_diff);
      if (kind == "diff_through") w.put(idx);  // the page as the interval asked for left it: not newer
      w.bytes(std::span(zero_page, dsm::mem::page_size));
      post_inbox(0, diff_reply, w.buffer());
      std::printf("read %ld\n", *static_cast<volatile long*>(sh));
    } else {
      std::fprintf(stderr, "forge_fabric: unknown KIND '%s'\n", kind.c_str());
      return 2;
    }
  }
  dsm::barrier();
  dsm::finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "rogue" && argc > 2) return rogue(argv[2]);
  if (mode == "job") {
    dsm::init(argc, argv);
    return job(argv[0]);
  }
  if (mode == "forged" && argc > 2) {
    dsm::init(argc, argv);
    return forged_reply(argv[2]);
  }
  std::fprintf(stderr, "usage: forge_fabric job | forge_fabric rogue NAME | forge_fabric forged KIND\n");
  return 2;
}
