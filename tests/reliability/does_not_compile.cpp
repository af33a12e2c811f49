// Deliberately broken input for reliability.dsmcxx_bad_source: dsmc++ must report the
// compiler's error and exit non-zero.
#include <dsm/dsm.hpp>
int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_a = dsm::alloc<double>(100);
#pragma dsm parallel for
  for (long i = 0; i < 100; ++i) sh_a[i] = undeclared_variable * i;
  dsm::finalize();
}
