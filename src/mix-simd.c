/* Vectorised kernels of the dense full-covariance mixture local step and
 * summary, compiled for two-double vectors and (GCC on x86-64) for AVX2,
 * chosen at run time. The same arithmetic lane by lane in both, without
 * fused multiply-adds, so the choice never changes a result. See
 * mix-simd.h. */
#include <math.h>
#include <string.h>
#include "mix-simd.h"

/* exp by the range reduction of mix_exp_reduce() (mix-simd.h), the degree-13
 * Taylor polynomial (truncation below 1e-17; Estrin's scheme) and 2^k: within
 * 2 ulp of libm on [MIX_R_FLOOR, 0], where no result is subnormal. */

/* p = sum_{i <= 13} r^i / i! by Estrin's scheme (pairs, then powers r^2,
 * r^4, r^8): a third of Horner's latency for two more operations. T is
 * double or a vector type (constants broadcast); the scalar and vector
 * versions do the same operations in the same order. */
#define MIX_EXP_POLY(p, r, T)                                                            \
  do {                                                                                   \
    T r2_ = (r) * (r), r4_ = r2_ * r2_, r8_ = r4_ * r4_;                                 \
    T q0_ = (r)*1.0 + 1.0, q1_ = (r) * (1.0 / 6) + 1.0 / 2;                              \
    T q2_ = (r) * (1.0 / 120) + 1.0 / 24, q3_ = (r) * (1.0 / 5040) + 1.0 / 720;          \
    T q4_ = (r) * (1.0 / 362880) + 1.0 / 40320;                                          \
    T q5_ = (r) * (1.0 / 39916800) + 1.0 / 3628800;                                      \
    T q6_ = (r) * (1.0 / 6227020800.0) + 1.0 / 479001600;                                \
    T t0_ = q1_ * r2_ + q0_, t1_ = q3_ * r2_ + q2_, t2_ = q5_ * r2_ + q4_;               \
    T u0_ = t1_ * r4_ + t0_, u1_ = q6_ * r4_ + t2_;                                      \
    (p) = u1_ * r8_ + u0_;                                                               \
  } while (0)

double mix_exp_floor1(double x) {
  if (x < MIX_R_FLOOR) return 0.0;
  double r, scale = mix_exp_reduce(x, &r), p;
  MIX_EXP_POLY(p, r, double);
  return p * scale;
}

#if defined(__GNUC__) || defined(__clang__)
/* two-double vectors: SSE2 on x86-64, whatever the target elsewhere */
#define MIX_VW 2
#define MIX_SUFFIX _v2
#include "mix-simd-kern.h"
#undef MIX_VW
#undef MIX_SUFFIX

/* Not on Windows: GCC there does not align the stack for spilled AVX
 * registers. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(_WIN32)
#define MIX_HAVE_WIDE 1
#pragma GCC push_options
#pragma GCC target("avx2")
#define MIX_VW 4
#define MIX_SUFFIX _v4
#include "mix-simd-kern.h"
#undef MIX_VW
#undef MIX_SUFFIX
#pragma GCC pop_options
#endif
#else
#error "sparsevi needs GCC or Clang vector extensions"
#endif

static int simd_level = 1, simd_wide = -1;

void mix_simd_set(int level) {
  simd_level = level;
  simd_wide = -1;
}

int mix_simd_wide(void) {
  if (simd_wide < 0) {
    int w = 0;
#ifdef MIX_HAVE_WIDE
    /* AVX2 only: FMA would change the arithmetic */
    w = simd_level > 0 && __builtin_cpu_supports("avx2");
#endif
    simd_wide = w;
  }
  return simd_wide;
}

#ifdef MIX_HAVE_WIDE
#define MIX_DISPATCH(name, args)                                                         \
  if (mix_simd_wide()) {                                                                 \
    name##_v4 args;                                                                      \
    return;                                                                              \
  }                                                                                      \
  name##_v2 args;
#else
#define MIX_DISPATCH(name, args) name##_v2 args;
#endif

void mix_simd_gauss_wt(const mix_eval *ev, const double *xb, int nb, double *Wt) {
  MIX_DISPATCH(gauss_wt, (ev, xb, nb, Wt))
}

void mix_simd_softmax(const double *Wt, int nb, int K, double *resp, double *ent,
                      double *Et) {
  MIX_DISPATCH(softmax, (Wt, nb, K, resp, ent, Et))
}

void mix_simd_dense_comp(double *Sk, int P, const double *phi, int Fp, const int *rows,
                         const double *r, int m) {
  MIX_DISPATCH(dense_comp, (Sk, P, phi, Fp, rows, r, m))
}

void mix_simd_exp_floor(double *x, int n) {
  MIX_DISPATCH(exp_floor, (x, n))
}

int mix_simd_width(void) {
  return mix_simd_wide() ? 4 : 2;
}

void mix_simd_dense_lanes(const double *X, svi_len N, int D, int zero_mean, svi_len n0,
                          svi_len n, int K, const double *resp, int g0, int g1, double *T,
                          double *rr, double *x) {
  MIX_DISPATCH(dense_lanes, (X, N, D, zero_mean, n0, n, K, resp, g0, g1, T, rr, x))
}

void mix_simd_phi_rows(const double *X, svi_len N, int D, int zero_mean, svi_len first,
                       int m, double *phi, int Fp, double *xr) {
  MIX_DISPATCH(phi_rows, (X, N, D, zero_mean, first, m, phi, Fp, xr))
}

void mix_gather_block(const mix_data *x, svi_len s, int nb, double *xb) {
  for (int i = 0; i < x->D; i++) {
    const double *xi = x->X + (svi_len)i * x->N + s;
    double *xbi = xb + (svi_len)i * SVI_BLOCK;
    for (int l = 0; l < nb; l++) xbi[l] = xi[l];
    for (int l = nb; l < SVI_BLOCK; l++) xbi[l] = 0;
  }
}
