// Output from a marked loop: each rank prints from the iterations it runs (as OpenMP's
// threads do), so writing to standard and file streams and to C FILEs is allowed; a string
// stream declared before the loop collects data, and writing it is an error.
#include <dsm/dsm.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

void report(double* sh_a, long n, std::ofstream& log, std::FILE* f) {
  std::ostringstream text;
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_a[i] = 2.0 * i;
    if (i % 100 == 0) std::cout << "row " << i << ": " << sh_a[i] << '\n';
    if (sh_a[i] < 0) std::cerr << "negative at " << i << std::endl;
    if (i == 7) log << i << '\n';
    if (i == 8) std::printf("%ld\n", i);
    if (i == 9) std::fprintf(stderr, "%ld\n", i);
    if (i == 10) std::fputs("ten\n", f);
    std::ostringstream line;  // one of this iteration
    line << i;
    text << line.str();
  }
}
