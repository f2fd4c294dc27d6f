/* Fast-VDP data preparation: one pass of column scans (finiteness, range,
 * mean) and a blocked covariance, then the centred D x N transpose the
 * kernels read. Replaces R-side anyNA / is.finite / apply / colMeans / cov /
 * t(X) - centre, each of which made a pass (and most a copy) over the N x D
 * data. Plain C, no SEXP. */
#include <math.h>
#include <string.h>
#include "vdp.h"

#define PREP_ROWS 256

void vdp_data_scan(const double *X, svi_len N, int D, double *center, int *nonfinite,
                   int *constant) {
  *nonfinite = 0;
  for (int j = 0; j < D; j++) {
    const double *x = X + (size_t)j * N;
    /* blocks of PREP_ROWS summed in four double partial sums (a long double
     * sum per entry is latency-bound), the block sums added in long double:
     * the mean to about a block's rounding */
    long double s = 0.0L;
    double lo0 = INFINITY, hi0 = -INFINITY, lo1 = INFINITY, hi1 = -INFINITY;
    int bad = 0;
    for (svi_len i0 = 0; i0 < N; i0 += PREP_ROWS) {
      svi_len i1 = i0 + PREP_ROWS < N ? i0 + PREP_ROWS : N, i = i0;
      double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
      for (; i + 4 <= i1; i += 4) {
        double v0 = x[i], v1 = x[i + 1], v2 = x[i + 2], v3 = x[i + 3];
        b0 += v0;
        b1 += v1;
        b2 += v2;
        b3 += v3;
        lo0 = v0 < lo0 ? v0 : lo0;
        hi0 = v0 > hi0 ? v0 : hi0;
        lo1 = v1 < lo1 ? v1 : lo1;
        hi1 = v1 > hi1 ? v1 : hi1;
        lo0 = v2 < lo0 ? v2 : lo0;
        hi0 = v2 > hi0 ? v2 : hi0;
        lo1 = v3 < lo1 ? v3 : lo1;
        hi1 = v3 > hi1 ? v3 : hi1;
      }
      for (; i < i1; i++) {
        double v = x[i];
        b0 += v;
        lo0 = v < lo0 ? v : lo0;
        hi0 = v > hi0 ? v : hi0;
      }
      /* a NaN or an infinity makes the block's sum NaN or infinite (so
       * does an overflow of finite values: those blocks are checked entry
       * by entry) */
      double bs = (b0 + b1) + (b2 + b3);
      if (!isfinite(bs))
        for (i = i0; i < i1; i++) bad |= !isfinite(x[i]);
      s += bs;
    }
    if (bad) *nonfinite = 1;
    center[j] = (double)(s / (long double)N);
    double lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;
    constant[j] = N > 1 && lo == hi;
  }
}

/* The blocked covariance of the centred data (D x D, divisor N - 1) in
 * packed running sums of per-block sums (pairwise-like accuracy). Each
 * centred row block (point-major) is written to Xt at its rows when Xt is
 * given (the D x N transpose the kernels read), else to a scratch block in
 * work; the sums read it from there, in cache. Both ways do the same
 * arithmetic, so the covariance is the same bits. work:
 * vdp_data_cov_work(D) doubles. */
static void cov_blocks(const double *X, svi_len N, int D, const double *center, double *Xt,
                       double *cov, double *work) {
  const int P = svi_packed_size(D);
  double *lacc = work + (size_t)D * PREP_ROWS, *blk_acc = lacc + P;
  for (int p = 0; p < P; p++) lacc[p] = 0.0;
  for (svi_len i0 = 0; i0 < N; i0 += PREP_ROWS) {
    int nr = (int)(N - i0 < PREP_ROWS ? N - i0 : PREP_ROWS);
    double *blk = Xt ? Xt + (size_t)i0 * D : work;
    for (int j = 0; j < D; j++) {
      const double *x = X + (size_t)j * N + i0;
      const double c = center[j];
      for (int r = 0; r < nr; r++) blk[(size_t)r * D + j] = x[r] - c;
    }
    memset(blk_acc, 0, sizeof(double) * P);
    for (int r = 0; r < nr; r++) {
      const double *x = blk + (size_t)r * D;
      int idx = 0;
      for (int b = 0; b < D; b++) {
        double xb = x[b];
        for (int a = 0; a <= b; a++) blk_acc[idx++] += x[a] * xb;
      }
    }
    for (int p = 0; p < P; p++) lacc[p] += blk_acc[p];
  }
  double div = N > 1 ? (double)(N - 1) : 1.0;
  int idx = 0;
  for (int b = 0; b < D; b++)
    for (int a = 0; a <= b; a++, idx++) {
      double v = lacc[idx] / div;
      cov[a + (size_t)b * D] = v;
      cov[b + (size_t)a * D] = v;
    }
}

void vdp_data_cov(const double *X, svi_len N, int D, const double *center, double *cov,
                  double *work) {
  cov_blocks(X, N, D, center, NULL, cov, work);
}

size_t vdp_data_cov_work(int D) {
  int P = svi_packed_size(D);
  /* row block, running sums, block sums */
  return (size_t)D * PREP_ROWS + 2 * (size_t)P;
}

void vdp_data_transpose_cov(const double *X, svi_len N, int D, const double *center,
                            double *Xt, double *cov, double *work) {
  cov_blocks(X, N, D, center, Xt, cov, work);
}

void vdp_data_transpose(const double *X, svi_len N, int D, const double *center,
                        double *Xt) {
  for (svi_len i0 = 0; i0 < N; i0 += PREP_ROWS) {
    svi_len i1 = i0 + PREP_ROWS < N ? i0 + PREP_ROWS : N;
    for (int j = 0; j < D; j++) {
      const double *x = X + (size_t)j * N;
      const double c = center[j];
      for (svi_len i = i0; i < i1; i++) Xt[(size_t)i * D + j] = x[i] - c;
    }
  }
}

/* vdp_data_transpose, and key[i] = v . (centred point i) for every point
 * (the kd-tree root's keys, as its build computes them), each block's keys
 * from the block just written, in cache: one pass over the data where the
 * build would make a second. */
void vdp_data_transpose_keys(const double *X, svi_len N, int D, const double *center,
                             double *Xt, const double *v, double *key) {
  for (svi_len i0 = 0; i0 < N; i0 += PREP_ROWS) {
    svi_len i1 = i0 + PREP_ROWS < N ? i0 + PREP_ROWS : N;
    for (int j = 0; j < D; j++) {
      const double *x = X + (size_t)j * N;
      const double c = center[j];
      for (svi_len i = i0; i < i1; i++) Xt[(size_t)i * D + j] = x[i] - c;
    }
    for (svi_len i = i0; i < i1; i++) key[i] = svi_dot4(v, Xt + (size_t)i * D, D);
  }
}
