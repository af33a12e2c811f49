// PolyBench/C 4.2.1 deriche (edge detection filter), ported; single precision, as the
// original. Each of its six loops is parallel as written: the row passes over i, the column
// passes over j, with the filter's running values private to each line; a barrier after each
// pass whose result the next reads.
#include "polybench.hpp"

#include <cmath>

#ifdef MINI_DATASET
#define W 64
#define H 64
#endif
#ifdef SMALL_DATASET
#define W 192
#define H 128
#endif
#ifdef MEDIUM_DATASET
#define W 720
#define H 480
#endif
#ifdef LARGE_DATASET
#define W 4096
#define H 2160
#endif

static void init_array(int w, int h, float* alpha, float imgIn[][H]) {
  int i, j;

  *alpha = 0.25;  // parameter of the filter

  // input should be between 0 and 1 (grayscale image pixel)
#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++) imgIn[i][j] = (float)((313 * i + 991 * j) % 65536) / 65535.0f;
}

static void print_array(int w, int h, float imgOut[][H]) {
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("imgOut");
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++) {
      if ((i * h + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, "%0.2f ", imgOut[i][j]);
    }
  POLYBENCH_DUMP_END("imgOut");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_deriche(int w, int h, float alpha, float imgIn[][H], float imgOut[][H], float y1[][H], float y2[][H]) {
  int i, j;
  float xm1, tm1, ym1, ym2;
  float xp1, xp2;
  float tp1, tp2;
  float yp1, yp2;

  float k;
  float a1, a2, a3, a4, a5, a6, a7, a8;
  float b1, b2, c1, c2;

  k = (1.0f - expf(-alpha)) * (1.0f - expf(-alpha)) / (1.0f + 2.0f * alpha * expf(-alpha) - expf(2.0f * alpha));
  a1 = a5 = k;
  a2 = a6 = k * expf(-alpha) * (alpha - 1.0f);
  a3 = a7 = k * expf(-alpha) * (alpha + 1.0f);
  a4 = a8 = -k * expf(-2.0f * alpha);
  b1 = powf(2.0f, -alpha);
  b2 = -expf(-2.0f * alpha);
  c1 = c2 = 1;

#pragma omp parallel for private(ym1, ym2, xm1)
#pragma dsm parallel for private(ym1, ym2, xm1)
  for (i = 0; i < w; i++) {
    ym1 = 0.0f;
    ym2 = 0.0f;
    xm1 = 0.0f;
    for (j = 0; j < h; j++) {
      y1[i][j] = a1 * imgIn[i][j] + a2 * xm1 + b1 * ym1 + b2 * ym2;
      xm1 = imgIn[i][j];
      ym2 = ym1;
      ym1 = y1[i][j];
    }
  }

#pragma omp parallel for private(yp1, yp2, xp1, xp2)
#pragma dsm parallel for private(yp1, yp2, xp1, xp2)
  for (i = 0; i < w; i++) {
    yp1 = 0.0f;
    yp2 = 0.0f;
    xp1 = 0.0f;
    xp2 = 0.0f;
    for (j = h - 1; j >= 0; j--) {
      y2[i][j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2;
      xp2 = xp1;
      xp1 = imgIn[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++) {
      imgOut[i][j] = c1 * (y1[i][j] + y2[i][j]);
    }
  dsm::barrier();

#pragma omp parallel for private(tm1, ym1, ym2)
#pragma dsm parallel for private(tm1, ym1, ym2)
  for (j = 0; j < h; j++) {
    tm1 = 0.0f;
    ym1 = 0.0f;
    ym2 = 0.0f;
    for (i = 0; i < w; i++) {
      y1[i][j] = a5 * imgOut[i][j] + a6 * tm1 + b1 * ym1 + b2 * ym2;
      tm1 = imgOut[i][j];
      ym2 = ym1;
      ym1 = y1[i][j];
    }
  }

#pragma omp parallel for private(tp1, tp2, yp1, yp2)
#pragma dsm parallel for private(tp1, tp2, yp1, yp2)
  for (j = 0; j < h; j++) {
    tp1 = 0.0f;
    tp2 = 0.0f;
    yp1 = 0.0f;
    yp2 = 0.0f;
    for (i = w - 1; i >= 0; i--) {
      y2[i][j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2;
      tp2 = tp1;
      tp1 = imgOut[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }
  dsm::barrier();

#pragma omp parallel for
#pragma dsm parallel for
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++) imgOut[i][j] = c2 * (y1[i][j] + y2[i][j]);
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int w = W;
  int h = H;

  float alpha;
  auto sh_imgIn = dsm::alloc<float[H]>(W);
  auto sh_imgOut = dsm::alloc<float[H]>(W);
  auto sh_y1 = dsm::alloc<float[H]>(W);
  auto sh_y2 = dsm::alloc<float[H]>(W);

  init_array(w, h, &alpha, sh_imgIn);
  {
    polybench::KernelTimer timer;
    kernel_deriche(w, h, alpha, sh_imgIn, sh_imgOut, sh_y1, sh_y2);
  }
  if (dsm::rank() == 0) print_array(w, h, sh_imgOut);
  dsm::finalize();
  return 0;
}
