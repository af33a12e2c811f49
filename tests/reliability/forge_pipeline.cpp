// A pipeline's tile message forged by the rank above (a member gone wrong): the rank below
// must stop, naming the rank and what is wrong, before it writes anything.
//
//   forge_pipeline KIND   (dsmrun -n 2) rank 0 sends rank 1 one forged message (for its first
//                         block, which rank 1's first block reads), then both run a sweep of
//                         a pipelined nest. KIND:
//       short    fewer bytes than a header
//       sweep    a message of another sweep
//       columns  columns that do not follow the ones received
//       bytes    more bytes than its columns hold
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/runtime_hooks.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const std::string kind = argc > 1 ? argv[1] : "";
  constexpr long n = 64;
  double* sh_a = dsm::alloc<double>(n * n);
  dsm::barrier();
  dsm::lb::Pipeline pipe("forged", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 1);
  if (dsm::rank() == 0) {
    std::uint64_t sweep = kind == "sweep" ? 7 : 1;
    std::int64_t head[3] = {0, kind == "columns" ? 5 : 1, 9};  // block 0, columns [1, 9)
    std::vector<std::byte> m(32 + 8 * 8 + (kind == "bytes" ? 8 : 0));
    std::memcpy(m.data(), &sweep, 8);
    std::memcpy(m.data() + 8, head, 24);
    if (kind == "short") m.resize(20);
    dsm::detail::send_to(1, m);
  }
  for (const dsm::lb::Tile& tile : pipe.sweep())
    for (long i = tile.rows().lb; i < tile.rows().ub; ++i)
      for (long j = tile.cols(i).lb; j < tile.cols(i).ub; ++j) sh_a[i * n + j] += 1;
  dsm::barrier();
  std::printf("not refused\n");
  dsm::finalize();
  return 0;
}
