/* Global steps of LDA (notes/math.md §3) and the topic terms of the ELBO.
 * Plain C over K x V word-major tables (a word's K values are contiguous). */
#include <math.h>
#include <string.h>
#include <R_ext/Memory.h>
#include "lda.h"

void lda_add_sparse(double *out, int K, int V, const int *p, const int *i, const double *x,
                    double sign) {
  for (int v = 0; v < V; v++) {
    double *col = out + (svi_len)v * K;
    for (int e = p[v]; e < p[v + 1]; e++) col[i[e]] += sign * x[e];
  }
}

void lda_topic_totals(const double *lambda, int K, int V, double *tot) {
  for (int k = 0; k < K; k++) tot[k] = 0.0;
  for (svi_len v = 0; v < V; v++) {
    const double *l = lambda + v * K;
    for (int k = 0; k < K; k++) tot[k] += l[k];
  }
}

void lda_lambda_from_stats(double *lambda, const double *S, svi_len n, double eta) {
  for (svi_len j = 0; j < n; j++) lambda[j] = eta + (S[j] > 0 ? S[j] : 0.0);
}

/* sum_k [lnG(V eta) - V lnG(eta) - lnG(sum_v lambda_kv) + sum_v lnG(lambda_kv)]
 *   + sum_kv (eta + S_kv - lambda_kv) Elogb_kv.
 * lambda = NULL: lambda = eta + max(S, 0), read from S (a memoized store).
 * Words are cut into fixed chunks whose partial sums are added in chunk
 * order, so the result does not depend on the number of threads. */
#define ELBO_CHUNK 256
/* lambda_j, given or (lambda = NULL) eta + max(S_j, 0) */
static inline double lambda_at(const double *lambda, const double *S, double eta, svi_len j) {
  return lambda ? lambda[j] : eta + (S[j] > 0 ? S[j] : 0.0);
}
double lda_elbo_topics(const double *lambda, const double *S, int K, int V, double eta,
                       int threads) {
  double *rs = (double *)R_alloc(K, sizeof(double));
  double *psirs = (double *)R_alloc(K, sizeof(double));
  memset(rs, 0, sizeof(double) * (size_t)K);
  for (svi_len v = 0; v < V; v++)
    for (int k = 0; k < K; k++) rs[k] += lambda_at(lambda, S, eta, v * K + k);
  for (int k = 0; k < K; k++) psirs[k] = svi_digamma(rs[k]);
  int nc = (V + ELBO_CHUNK - 1) / ELBO_CHUNK;
  double *part = (double *)R_alloc(nc > 0 ? nc : 1, sizeof(double));
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int c = 0; c < nc; c++) {
    int v0 = c * ELBO_CHUNK, v1 = v0 + ELBO_CHUNK;
    if (v1 > V) v1 = V;
    double s = 0;
    for (svi_len v = v0; v < v1; v++) {
      for (int k = 0; k < K; k++) {
        double l = lambda_at(lambda, S, eta, v * K + k);
        s += svi_lgamma(l);
        double g = eta + S[v * K + k] - l;
        if (g != 0) s += g * (svi_digamma(l) - psirs[k]);
      }
    }
    part[c] = s;
  }
  double out = 0;
  for (int c = 0; c < nc; c++) out += part[c];
  for (int k = 0; k < K; k++) out += svi_lgamma(V * eta) - V * svi_lgamma(eta) - svi_lgamma(rs[k]);
  return out;
}
