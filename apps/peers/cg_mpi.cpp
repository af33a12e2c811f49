// cg_mpi: the peer version in MPI. Each rank keeps its block of rows of the matrix and of
// the vectors, and the entries of p that its rows' columns name in other blocks (ghosts).
// Before the iterations it works out which those are and tells their owners (the halo
// lists an MPI programmer writes for an irregular matrix, as NAS CG's MPI version does); before
// every product it exchanges exactly those entries with the ranks concerned. The dot
// products are MPI_Allreduce sums.
#include <algorithm>
#include <vector>

#include "../cg/kernel.hpp"
#include "csr_rows.hpp"

namespace {

// Who sends which entries of p to whom before a product.
struct Halo {
  std::vector<int> peers;                // ranks exchanged with, in order
  std::vector<std::vector<long>> send;   // for each peer: local indices of the entries it needs
  std::vector<long> recv_first, recv_count;  // for each peer: where its entries land among the ghosts
  long ghosts = 0;
};

// Renumbers m's columns into a local vector (this block's entries, then the ghosts in the
// order of their global index) and builds the exchange lists; collective.
Halo inspect(const peers::World& w, const peers::Blocks& blocks, peers::CsrRows& m) {
  const long rows = m.hi - m.lo;
  std::vector<long> ghosts;
  for (long c : m.col)
    if (c < m.lo || c >= m.hi) ghosts.push_back(c);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  for (long& c : m.col)
    c = c >= m.lo && c < m.hi ? c - m.lo : rows + (std::lower_bound(ghosts.begin(), ghosts.end(), c) - ghosts.begin());

  // How many ghosts each rank owns (ghosts are sorted, so each owner's are consecutive).
  std::vector<int> wanted(w.size, 0), offered(w.size, 0);
  std::vector<long> first_of(w.size, 0);
  for (std::size_t k = 0; k < ghosts.size(); ++k) {
    const int owner = static_cast<int>(std::upper_bound(blocks.displs.begin(), blocks.displs.end(), ghosts[k]) -
                                       blocks.displs.begin()) - 1;
    if (wanted[owner]++ == 0) first_of[owner] = static_cast<long>(k);
  }
  peers::check(MPI_Alltoall(wanted.data(), 1, MPI_INT, offered.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
  std::vector<int> want_displs(w.size, 0), offer_displs(w.size, 0);
  for (int r = 1; r < w.size; ++r) {
    want_displs[r] = want_displs[r - 1] + wanted[r - 1];
    offer_displs[r] = offer_displs[r - 1] + offered[r - 1];
  }
  std::vector<long> asked(offer_displs.back() + offered.back());
  peers::check(MPI_Alltoallv(ghosts.data(), wanted.data(), want_displs.data(), MPI_LONG, asked.data(), offered.data(),
                             offer_displs.data(), MPI_LONG, MPI_COMM_WORLD),
               "MPI_Alltoallv (ghost lists)");
  Halo h;
  h.ghosts = static_cast<long>(ghosts.size());
  for (int r = 0; r < w.size; ++r) {
    if (wanted[r] == 0 && offered[r] == 0) continue;
    h.peers.push_back(r);
    std::vector<long> send(asked.begin() + offer_displs[r], asked.begin() + offer_displs[r] + offered[r]);
    for (long& c : send) c -= m.lo;
    h.send.push_back(std::move(send));
    h.recv_first.push_back(rows + first_of[r]);
    h.recv_count.push_back(wanted[r]);
  }
  return h;
}

// Sends every peer the entries of p it needs and receives this rank's ghosts.
void exchange(const Halo& h, std::vector<double>& p, std::vector<std::vector<double>>& out) {
  std::vector<MPI_Request> requests;
  for (std::size_t k = 0; k < h.peers.size(); ++k) {
    if (h.recv_count[k] == 0) continue;
    requests.emplace_back();
    peers::check(MPI_Irecv(p.data() + h.recv_first[k], static_cast<int>(h.recv_count[k]), MPI_DOUBLE, h.peers[k], 7,
                           MPI_COMM_WORLD, &requests.back()),
                 "MPI_Irecv (ghosts)");
  }
  for (std::size_t k = 0; k < h.peers.size(); ++k) {
    if (h.send[k].empty()) continue;
    out[k].resize(h.send[k].size());
    for (std::size_t e = 0; e < h.send[k].size(); ++e) out[k][e] = p[h.send[k][e]];
    requests.emplace_back();
    peers::check(MPI_Isend(out[k].data(), static_cast<int>(out[k].size()), MPI_DOUBLE, h.peers[k], 7, MPI_COMM_WORLD,
                           &requests.back()),
                 "MPI_Isend (ghosts)");
  }
  peers::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

double sum_all(double part) {
  double all = 0;
  peers::check(MPI_Allreduce(&part, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "cg (MPI peer: row blocks, ghost exchange)", cg::defaults, cg::problems);
  const peers::World w = peers::init(&argc, &argv);
  const long n = cg::rows_of(o);
  peers::need_rows(w, n, "cg_mpi");
  std::vector<long> whole_start, whole_col;
  std::vector<double> whole_val, whole_x;
  if (w.rank == 0) {
    whole_start.resize(n + 1);
    whole_col.resize(cg::nonzeros_at_most(o));
    whole_val.resize(cg::nonzeros_at_most(o));
    whole_x.resize(n);
    cg::build(o, whole_start.data(), whole_col.data(), whole_val.data());
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  const double t0 = MPI_Wtime();
  app::Tracer trace(o.trace && w.rank == 0);
  peers::CsrRows m = peers::scatter_rows(w, n, whole_start.data(), whole_col.data(), whole_val.data());
  const peers::Blocks blocks = peers::blocks(w, n);
  const Halo halo = inspect(w, blocks, m);
  const long rows = m.hi - m.lo;
  std::vector<double> x(rows), r(rows), q(rows), p(rows + halo.ghosts);
  std::vector<std::vector<double>> out(halo.peers.size());
  cg::start_vectors(x.data(), r.data(), p.data(), 0, rows);
  double rr = static_cast<double>(n);
  for (long it = 0; it < o.iters; ++it) {
    exchange(halo, p, out);
    const double alpha = rr / sum_all(cg::product(m.start.data(), m.col.data(), m.val.data(), p.data(), q.data(), 0, rows));
    const double next = sum_all(cg::update(alpha, p.data(), q.data(), x.data(), r.data(), 0, rows));
    cg::direction(next / rr, r.data(), p.data(), 0, rows);
    rr = next;
    trace.iteration(it);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t = MPI_Wtime() - t0;

  peers::check(MPI_Gatherv(x.data(), static_cast<int>(rows), MPI_DOUBLE, whole_x.data(), blocks.counts.data(),
                           blocks.displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD),
               "MPI_Gatherv");
  const int rc = w.rank == 0 ? cg::conclude(o, whole_x.data(), rr, t) : 0;
  MPI_Finalize();
  return rc;
}
