/* Vectorised kernels of the dense (L = K) full-covariance mixture local step
 * and summary (mix-simd.c, bodies in mix-simd-kern.h): the block's
 * log-weights component-major, their softmax with entropy, and the dense
 * statistics kernel. Each kernel is compiled twice, for two-double vectors
 * (SSE2, the x86-64 baseline) and, with GCC on x86-64, for four-double
 * vectors (AVX2, chosen at run time when the CPU has it). Vector lanes are
 * different points (or different features of a statistic), every lane does
 * the same arithmetic in the same order and no fused multiply-add is used,
 * so both builds give bit-identical results. Plain C: no R API. */
#ifndef SPARSEVI_MIX_SIMD_H
#define SPARSEVI_MIX_SIMD_H

#include <string.h>
#include "mix.h"

/* Responsibilities below exp(MIX_R_FLOOR) ~ 2^-53 times the largest of a
 * point are set to 0 and the rest renormalised (their sum is then the same
 * to within an ulp): exp() needs no subnormal range, and the summaries skip
 * the pairs (most of them when components are well apart). The entropy is
 * that of the truncated responsibilities, so the ELBO stays exact. */
#define MIX_R_FLOOR (-36.7368005696771)

/* exp's range reduction, shared by the mixture code's exps: k = round(x /
 * ln 2) by the 1.5 2^52 shift, r = x - k ln 2 in two parts (|r| <= ln(2) /
 * 2), 2^k built in the exponent bits (x must not give a subnormal). */
#define EXP_LOG2E 1.4426950408889634074
#define EXP_LN2_HI 6.93147180369123816490e-01
#define EXP_LN2_LO 1.90821492927058770002e-10
#define EXP_SHIFT 6755399441055744.0
/* Returns 2^k and sets *r; exp(x) = 2^k exp(r). */
static inline double mix_exp_reduce(double x, double *r) {
  double t = x * EXP_LOG2E + EXP_SHIFT, kd = t - EXP_SHIFT, shift = EXP_SHIFT;
  *r = (x - kd * EXP_LN2_HI) - kd * EXP_LN2_LO;
  long long ti, si;
  memcpy(&ti, &t, sizeof ti);
  memcpy(&si, &shift, sizeof si);
  long long bits = (ti - si + 1023) << 52;
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return scale;
}

/* The block's points, dimension-major with SVI_BLOCK lanes, zero past nb
 * (xb: D SVI_BLOCK doubles): the input of mix_simd_gauss_wt(). */
void mix_gather_block(const mix_data *x, svi_len s, int nb, double *xb);

/* Points per chunk of the weights kernel (a multiple of 4 vectors of 4). */
#define MIX_WT_CHUNK 16

/* 1 when the AVX2 kernels are used (CPU support, not disabled). */
int mix_simd_wide(void);
/* level 0: two-double kernels only; 1: AVX2 when available (default). */
void mix_simd_set(int level);

/* Wt[k SVI_BLOCK + i] = c_k - 1/2 || R_k^-1 x_i - shift_k ||^2 for the
 * SVI_BLOCK points of xb (dimension-major, SVI_BLOCK lanes per dimension,
 * padded with zeros past nb), all K components (full-covariance models). */
void mix_simd_gauss_wt(const mix_eval *ev, const double *xb, int nb, double *Wt);
/* Softmax over the K components of each of the nb points of a
 * component-major block Wt (stride SVI_BLOCK), floored at MIX_R_FLOOR:
 * responsibilities into resp (point-major, nb x K) and each point's entropy
 * into ent[nb]. Et: K SVI_BLOCK doubles of scratch. */
void mix_simd_softmax(const double *Wt, int nb, int K, double *resp, double *ent,
                      double *Et);
/* The dense statistic of one component: Sk[0..P) += sum_n r[n] phi_n over
 * its m points (rows[n] of phi, row stride Fp >= P, a multiple of 32, zero
 * past P), in order; 8 or 16 features of a kernel call in registers. */
void mix_simd_dense_comp(double *Sk, int P, const double *phi, int Fp, const int *rows,
                         const double *r, int m);

/* Doubles per vector of the kernels in use (2 or 4). */
int mix_simd_width(void);
/* Dense statistics of small models with the components in vector lanes
 * (W = mix_simd_width() per lane group, Kp = K rounded up to W): for the
 * groups [g0, g1), T[f Kp + k] += r_nk phi_f(x_n) for the P features of the
 * statistic and T[P Kp + k] += r_nk, over the points n0, ..., n0 + n - 1
 * of X (N x D, column-major) in order; resp is point-major n x K. Scratch:
 * rr of Kp doubles, x of D. */
void mix_simd_dense_lanes(const double *X, svi_len N, int D, int zero_mean, svi_len n0,
                          svi_len n, int K, const double *resp, int g0, int g1, double *T,
                          double *rr, double *x);

/* Feature rows [x (unless zero_mean), packed x x^T] of the m points
 * first.. of X (N x D, column-major) into phi (row stride Fp >= P + 3, zero
 * past P). xr: D + 4 doubles of scratch. */
void mix_simd_phi_rows(const double *X, svi_len N, int D, int zero_mean, svi_len first,
                       int m, double *phi, int Fp, double *xr);

/* exp(x) for x in [MIX_R_FLOOR, 0], 0 below: one value, and n values in
 * place (same arithmetic). */
double mix_exp_floor1(double x);
void mix_simd_exp_floor(double *x, int n);

#endif
