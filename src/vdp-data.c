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
    long double s = 0.0L;
    double lo = INFINITY, hi = -INFINITY;
    int bad = 0;
    for (svi_len i = 0; i < N; i++) {
      double v = x[i];
      bad |= !isfinite(v);
      s += v;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (bad) *nonfinite = 1;
    center[j] = (double)(s / (long double)N);
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
  const int P = gw_packed_size(D);
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
  int P = gw_packed_size(D);
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
