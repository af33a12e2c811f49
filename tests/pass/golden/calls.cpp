// Shared arrays passed to functions the loop calls: a callee whose body is visible gives the
// sections of what it does with its pointer parameter, in the caller's terms (its integer
// parameters bound to the arguments), also through a further call, a 2-D row, a pointer to
// rows, a template and a lambda. Where it cannot, the call is named and the whole array
// assumed: a body not visible, a parameter of another type or moved, a subscript that is not
// affine, recursion.
#include <dsm/dsm.hpp>

constexpr long M = 32;

void relax_row(float* out, const float* up, const float* mid, const float* down, long n) {
  for (long j = 1; j < n - 1; ++j) out[j] = 0.25f * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}
void set_row(float* row, long first, long count, float v) {
  for (long k = 0; k < count; ++k) row[first + k] = v;
}
void clear_row(float* row, long n) { set_row(row, 0, n, 0.0f); }
void copy_row(double* dst, const double* src) {
  for (long j = 0; j < M; ++j) dst[j] = src[j];
}
double row_sum(const double (*g)[M], long r) {
  double s = 0;
  for (long j = 0; j < M; ++j) s += g[r][j];
  return s;
}
template <class T>
void scale_at(T* a, long i, T f) {
  a[i] *= f;
}

void sweep(float* sh_new, float* sh_old, float* sh_edge, long n) {
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i) {
    relax_row(&sh_new[i * n], &sh_old[(i - 1) * n], sh_old + i * n, &sh_old[(i + 1) * n], n);
    clear_row(sh_edge + 2 * i, 2);
  }
}

void rows(double (*sh_g)[M], double (*sh_h)[M], double* sh_s, double* sh_v, long count) {
#pragma dsm parallel for
  for (long i = 0; i < count; ++i) {
    copy_row(sh_h[i], sh_g[i]);
    sh_s[i] = row_sum(sh_g, i);
    scale_at(sh_v, i + 1, 2.0);
    auto put = [](double* p) { p[0] = 1.0; };
    put(sh_v + 3 * i);
  }
}

void opaque(double* p, long n);
void bytes(void* p);
void walk(double* p, long n) {
  for (long k = 0; k < n; ++k) *p++ = 0;
}
void gather(double* p, const long* idx, long k) { p[idx[k]] = 1.0; }
void twice(double* p, long n) {
  if (n > 0) twice(p + 1, n - 1);
}

void refused(double* sh_a, double* sh_b, double* sh_c, double* sh_d, double* sh_e, const long* idx, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    opaque(sh_a + i, 1);
    bytes(sh_b + i);
    walk(sh_c + i, 1);
    gather(sh_d, idx, i);
    twice(sh_e + i, 2);
  }
}

// What a callee's body cannot stand for: a default argument that is not a constant, a
// virtual member (an override may run), a conversion to bool or to a narrower type, a
// reference the callee returns, a static local set once. A pointer that is only tested is
// no access.
long g_len = 8;
void fill_n(double* p, long n = g_len) {
  for (long k = 0; k < n; ++k) p[k] = 0;
}
void fill_4(double* p, long n = 4) {
  for (long k = 0; k < n; ++k) p[k] = 0;
}
struct Base {
  virtual void put(double* p, long i) const { p[i] = 1; }
  virtual ~Base() = default;
};
void at_flag(double* p, bool last) { p[last] = 1; }
void at_byte(double* p, unsigned char k) { p[k] = 1; }
double& ref_at(double* p, long i) { return p[i]; }
void guarded(double* p, long i) {
  if (!p || p == nullptr) return;
  p[i] = 2;
}
void first_only(double* p, long k) {
  static const long first = k;
  p[first] = 1;
}

void limits(double* sh_f, double* sh_four, double* sh_g, double* sh_h, double* sh_k, double* sh_r, double* sh_q,
            double* sh_o, const Base& b, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    fill_n(sh_f + 8 * i);
    fill_4(sh_four + 4 * i);
    b.put(sh_g, i);
    at_flag(sh_h, i);
    at_byte(sh_k, i);
    ref_at(sh_r, i) = 1;
    guarded(sh_q, i);
    first_only(sh_o, i);
  }
}
