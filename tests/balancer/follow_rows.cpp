// Integration check through dsmrun: a loop keyed like another (rows of equal bytes, first row
// 0) but over fewer rows decides its own split. 3mm's product over 800 rows of 900 doubles
// had taken the cut at row 512 of the initialization of a 1000-row factor, rows of the same
// bytes, and ran 64 % of its rows on rank 0. Each rank counts the product's rows it ran; the
// program fails when a rank's share is off its equal block by more than a cut may move to a
// page boundary (a 32nd of a block), or when an element differs from a sequential computation.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr long cols = 900, factor_rows = 1000, product_rows = 800;

double init(long i, long j) { return static_cast<double>((i * (j + 1) + 2) % cols) / (5.0 * cols); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_b = dsm::alloc<double>(factor_rows * cols);
  double* sh_e = dsm::alloc<double>(product_rows * cols);
  static dsm::lb::Site fill("follow_rows.cpp:fill"), product("follow_rows.cpp:product");
  const dsm::lb::Section fill_acc[] = {dsm::lb::section(sh_b, dsm::lb::Access::write, cols, 0, cols - 1)};
  for (const dsm::lb::Range& r : dsm::lb::redistribute(fill, 0, factor_rows, 1, fill_acc))
    for (long i = r.lb; i < r.ub; i += r.step)
      for (long j = 0; j < cols; ++j) sh_b[i * cols + j] = init(i, j);
  dsm::barrier();
  const dsm::lb::Section product_acc[] = {dsm::lb::section(sh_e, dsm::lb::Access::write, cols, 0, cols - 1),
                                          dsm::lb::section(sh_b, dsm::lb::Access::read, 0, 0, factor_rows * cols - 1)};
  long mine = 0;
  for (const dsm::lb::Range& r : dsm::lb::redistribute(product, 0, product_rows, 1, product_acc))
    for (long i = r.lb; i < r.ub; i += r.step, ++mine)
      for (long j = 0; j < cols; ++j) sh_e[i * cols + j] = sh_b[i * cols + j] + sh_b[(i + 200) * cols + j];
  dsm::barrier();
  long wrong = 0;
  if (dsm::rank() == 0)
    for (long i = 0; i < product_rows; ++i)
      for (long j = 0; j < cols; ++j) wrong += sh_e[i * cols + j] != init(i, j) + init(i + 200, j);
  const long block = product_rows / dsm::nprocs(), slack = block / 32 + 1;
  const bool balanced = std::labs(mine - block) <= slack;
  std::printf("follow_rows: rank %d ran %ld of %ld rows%s\n", dsm::rank(), mine, product_rows,
              balanced ? "" : ", off its equal block");
  if (dsm::rank() == 0) std::printf("follow_rows: %ld wrong elements\n", wrong);
  const int status = wrong != 0 || !balanced;
  dsm::finalize();
  return status;
}
