// Descriptors through macros: a bound or step that is a macro stays as written; an accessor
// macro's array and the variables named in its body are the loop's own; an inner loop that
// reuses the marked loop's name is a variable of its own.
#include <dsm/dsm.hpp>

#define START 1
#define STEP 2
#define N 97
#define NX (n - 2)
#define A(r, c) sh_a[(r) * n + (c)]

void macros(long* sh_a, long* sh_b, long n) {
#pragma dsm parallel for
  for (long i = START; i < N; i += STEP) sh_b[i] = i;
#pragma dsm parallel for
  for (long i{0}; i < NX; ++i)
    for (long j = 0; j < NX; ++j) sh_b[i * NX + j] = A(i + 1, j + 1) - A(i, j);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    const long row = i;
    for (long i = 0; i < 4; ++i) sh_b[row * n + n - 1 - i] = row + i;
  }
}
