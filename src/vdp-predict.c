/* Fast-VDP prediction: per point, the scores S_k = E ln pi_k + E ln p(x |
 * component k) that give q(z) (eq. 3, the infinite tail as one column, eq.
 * 6) and the Student-t log predictive densities whose mixture is eq. 7.
 * With S_k = ln w_k + ln N(x | m_k, W_k^-1) the log-sum-exp of the S_k is
 * the log density of a Gaussian mixture (type 3, the plug-in density).
 * All need the quadratic form (x - m_k)' W_k (x - m_k) = ||U_k (x - m_k)||^2
 * with W_k = U_k' U_k; per component the caller supplies m_k, U_k and
 *   S_k = a_k - s_k quad,   ln w_k + ln t_k(x) = c_k - e_k ln(1 + r_k quad).
 * Points are independent: blocks of SVI_BLOCK run on threads with no
 * reduction, so results do not depend on the thread count. Plain C. */
#include <math.h>
#include <string.h>
#include "vdp.h"

void vdp_predict(const vdp_predict_args *a) {
  const int D = a->D, K1 = a->K1;
  const svi_len N = a->N, nb = svi_n_blocks(N);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(a->threads)
#endif
  for (svi_len bb = 0; bb < nb; bb++) {
    double *scr = a->scratch + (size_t)svi_thread_id() * (2 * D + 2 * K1);
    double *x = scr, *z = x + D, *S = z + D, *L = S + K1;
    svi_len i1 = (bb + 1) * SVI_BLOCK < N ? (bb + 1) * SVI_BLOCK : N;
    for (svi_len i = bb * SVI_BLOCK; i < i1; i++) {
      for (int d = 0; d < D; d++) x[d] = a->X[i + (size_t)d * N];
      double smax = -INFINITY, lmax = -INFINITY;
      int best = 0;
      for (int k = 0; k < K1; k++) {
        const double *m = a->M + (size_t)k * D, *U = a->U + (size_t)k * D * D;
        for (int d = 0; d < D; d++) z[d] = x[d] - m[d];
        double quad = 0.0;
        for (int r = 0; r < D; r++) { /* row r of the upper triangular U */
          double t = 0.0;
          for (int c = r; c < D; c++) t += U[r + (size_t)c * D] * z[c];
          quad += t * t;
        }
        const double *p = a->par + k; /* columns a, s, c, e, r of a K1 x 5 matrix */
        S[k] = p[0] - p[K1] * quad;
        L[k] = p[2 * K1] - p[3 * K1] * log1p(p[4 * K1] * quad);
        if (S[k] > smax) {
          smax = S[k];
          best = k;
        }
        if (L[k] > lmax) lmax = L[k];
      }
      if (a->type == 0) {
        a->out_int[i] = best;
      } else if (a->type == 1) {
        double zs = 0.0;
        for (int k = 0; k < K1; k++) zs += (S[k] = exp(S[k] - smax));
        for (int k = 0; k < K1; k++) a->out[i + (size_t)k * N] = S[k] / zs;
      } else if (a->type == 2) {
        double zs = 0.0;
        for (int k = 0; k < K1; k++) zs += exp(L[k] - lmax);
        a->out[i] = lmax + log(zs);
      } else { /* 3: log sum_k exp(S_k), a mixture of Gaussians when
                  S_k = ln w_k + ln N(x | m_k, W_k^-1) */
        double zs = 0.0;
        for (int k = 0; k < K1; k++) zs += exp(S[k] - smax);
        a->out[i] = smax + log(zs);
      }
    }
  }
}
