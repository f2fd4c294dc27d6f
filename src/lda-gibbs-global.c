/* The sparse lazy SVI update of the "gibbs" engine (Mimno, Hoffman & Blei
 * 2012, Appendix A, eqs. 14-19). With N*_kv = lambda_kv - eta and
 * pi_t = prod_{i <= t} (1 - rho_i), the dense update
 *   N*_t = (1 - rho_t) N*_{t-1} + rho_t (D / |B|) N_hat
 * becomes x_t = x_{t-1} + (rho_t / pi_t) (D / |B|) N_hat on the stored
 * x = N* / pi, which only touches the (word, topic) pairs of the batch.
 * When pi_t would fall below a threshold the caller instead merges with
 * a0 = pi_t, a1 = rho_t (D / |B|) and resets pi to 1 ("rescaling"). */
#include <math.h>
#include "lda-gibbs.h"

svi_len lda_gibbs_merge_nnz(int V, const int *p0, const int *k0, const int *p1,
                            const int *k1, int keep_old) {
  if (!keep_old) return (svi_len)p1[V];
  svi_len nnz = 0;
  for (int v = 0; v < V; v++) {
    int i = p0[v], ie = p0[v + 1], j = p1[v], je = p1[v + 1];
    while (i < ie && j < je) {
      if (k0[i] < k1[j])
        i++;
      else if (k0[i] > k1[j])
        j++;
      else {
        i++;
        j++;
      }
      nnz++;
    }
    nnz += (ie - i) + (je - j);
  }
  return nnz;
}

void lda_gibbs_merge(int V, const int *p0, const int *k0, const double *x0, double a0,
                     const int *p1, const int *k1, const double *x1, double a1,
                     int keep_old, int *p, int *k, double *x) {
  svi_len n = 0;
  p[0] = 0;
  for (int v = 0; v < V; v++) {
    int j = p1[v], je = p1[v + 1];
    if (keep_old) {
      int i = p0[v], ie = p0[v + 1];
      while (i < ie || j < je) {
        if (j >= je || (i < ie && k0[i] < k1[j])) {
          k[n] = k0[i];
          x[n++] = a0 * x0[i++];
        } else if (i >= ie || k0[i] > k1[j]) {
          k[n] = k1[j];
          x[n++] = a1 * x1[j++];
        } else {
          k[n] = k0[i];
          x[n++] = a0 * x0[i++] + a1 * x1[j++];
        }
      }
    } else {
      for (; j < je; j++) {
        k[n] = k1[j];
        x[n++] = a1 * x1[j];
      }
    }
    p[v + 1] = (int)n;
  }
}

void lda_gibbs_totals(int K, int V, const int *p, const int *k, const double *x,
                      double *tot) {
  for (int kk = 0; kk < K; kk++) tot[kk] = 0.0;
  for (int v = 0; v < V; v++)
    for (int j = p[v]; j < p[v + 1]; j++) tot[k[j]] += x[j];
}

void lda_gibbs_materialise(const gibbs_topics *tw, double *lambda) {
  int K = tw->K;
  for (int v = 0; v < tw->V; v++) {
    double *col = lambda + (svi_len)K * v;
    double e = tw->eta + tw->scale * tw->base;
    for (int kk = 0; kk < K; kk++) col[kk] = e;
    for (int j = tw->p[v]; j < tw->p[v + 1]; j++) col[tw->k[j]] += tw->scale * tw->x[j];
  }
}

/* The store of a dense K x V lambda (issue 20: in C, one pass, instead of
 * O(K V) R temporaries): nstar = lambda - eta, entries within the tolerance
 * below 0 read as 0. Counts the non-zeros per word into p (V + 1) when k is
 * NULL; else fills k, x and tot. Returns -1 when an entry is below eta by
 * more than the tolerance (1e-12 max(1, |lambda|)), else the non-zeros. */
svi_len lda_gibbs_store_dense(const double *lambda, int K, int V, double eta, int *p, int *k,
                              double *x, double *tot) {
  svi_len n = 0;
  if (k) for (int kk = 0; kk < K; kk++) tot[kk] = 0.0;
  if (!k) p[0] = 0;
  for (int v = 0; v < V; v++) {
    const double *col = lambda + (svi_len)K * v;
    for (int kk = 0; kk < K; kk++) {
      double l = col[kk], d = l - eta;
      if (d < -1e-12 * (fabs(l) > 1 ? fabs(l) : 1)) return -1;
      if (d > 0) {
        if (k) {
          k[n] = kk;
          x[n] = d;
          tot[kk] += d;
        }
        n++;
      }
    }
    if (!k) p[v + 1] = (int)n;
  }
  return n;
}
