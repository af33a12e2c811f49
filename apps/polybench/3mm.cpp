// PolyBench/C 4.2.1 3mm (G = (A B) (C D)), ported: three matrix products, each parallel over
// its rows; the third reads what the first two wrote, after a barrier.
#include "polybench.hpp"

#ifdef MINI_DATASET
#define NI 16
#define NJ 18
#define NK 20
#define NL 22
#define NM 24
#endif
#ifdef SMALL_DATASET
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#define NM 80
#endif
#ifdef MEDIUM_DATASET
#define NI 180
#define NJ 190
#define NK 200
#define NL 210
#define NM 220
#endif
#ifdef LARGE_DATASET
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200
#endif

static void init_array(int ni, int nj, int nk, int nl, int nm, double A[][NK], double B[][NJ], double C[][NM],
                       double D[][NL]) {
  int i, j;

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++) A[i][j] = (double)((i * j + 1) % ni) / (5 * ni);
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++) B[i][j] = (double)((i * (j + 1) + 2) % nj) / (5 * nj);
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < nj; i++)
    for (j = 0; j < nm; j++) C[i][j] = (double)(i * (j + 3) % nl) / (5 * nl);
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < nm; i++)
    for (j = 0; j < nl; j++) D[i][j] = (double)((i * (j + 2) + 2) % nk) / (5 * nk);
}

static void print_array(int ni, int nl, double G[][NL]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("G");
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      if ((i * ni + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, G[i][j]);
    }
  POLYBENCH_DUMP_END("G");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_3mm(int ni, int nj, int nk, int nl, int nm, double E[][NJ], double A[][NK], double B[][NJ],
                       double F[][NL], double C[][NM], double D[][NL], double G[][NL]) {
  int i, j, k;

  /* E := A*B */
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < nk; ++k) E[i][j] += A[i][k] * B[k][j];
    }
  /* F := C*D */
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = 0.0;
      for (k = 0; k < nm; ++k) F[i][j] += C[i][k] * D[k][j];
    }
  dsm::barrier();
  /* G := E*F */
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = 0.0;
      for (k = 0; k < nj; ++k) G[i][j] += E[i][k] * F[k][j];
    }
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int ni = NI;
  int nj = NJ;
  int nk = NK;
  int nl = NL;
  int nm = NM;

  auto sh_E = dsm::alloc<double[NJ]>(NI);
  auto sh_A = dsm::alloc<double[NK]>(NI);
  auto sh_B = dsm::alloc<double[NJ]>(NK);
  auto sh_F = dsm::alloc<double[NL]>(NJ);
  auto sh_C = dsm::alloc<double[NM]>(NJ);
  auto sh_D = dsm::alloc<double[NL]>(NM);
  auto sh_G = dsm::alloc<double[NL]>(NI);

  init_array(ni, nj, nk, nl, nm, sh_A, sh_B, sh_C, sh_D);
  {
    polybench::KernelTimer timer;
    kernel_3mm(ni, nj, nk, nl, nm, sh_E, sh_A, sh_B, sh_F, sh_C, sh_D, sh_G);
  }
  if (dsm::rank() == 0) print_array(ni, nl, sh_G);
  dsm::finalize();
  return 0;
}
