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

/* ---- reading the store without a dense K x V table (the sparse kind of a
 * fit's topics, issue 33) ---- */

void lda_gibbs_row_sums(const gibbs_topics *tw, double *rs) {
  double e = tw->eta + tw->scale * tw->base;
  for (int kk = 0; kk < tw->K; kk++) rs[kk] = tw->vocab * e + tw->scale * tw->tot[kk];
}

void lda_gibbs_columns(const gibbs_topics *tw, const int *U, int nU, int mode,
                       const double *rs, double *out) {
  int K = tw->K;
  double e = tw->eta + tw->scale * tw->base;
  for (int u = 0; u < nU; u++) {
    double *col = out + (svi_len)K * u;
    int v = U[u];
    if (mode == 2) {
      for (int kk = 0; kk < K; kk++) col[kk] = 0.0;
      for (int j = tw->p[v]; j < tw->p[v + 1]; j++) col[tw->k[j]] = tw->x[j];
      continue;
    }
    /* lambda as lda_gibbs_materialise() computes it, bit for bit */
    for (int kk = 0; kk < K; kk++) col[kk] = e;
    for (int j = tw->p[v]; j < tw->p[v + 1]; j++) col[tw->k[j]] += tw->scale * tw->x[j];
    if (mode == 1)
      for (int kk = 0; kk < K; kk++) col[kk] /= rs[kk];
  }
}

/* (a, va) ranks after (b, vb): a smaller value, or the same value and a
 * later word (order(-p) is stable: ties by word order) */
static inline int ranks_after(double a, int va, double b, int vb) {
  return a < b || (a == b && va > vb);
}

static void heap_down(double *hv, int *hw, int m, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, w = i;
    if (l < m && ranks_after(hv[l], hw[l], hv[w], hw[w])) w = l;
    if (r < m && ranks_after(hv[r], hw[r], hv[w], hw[w])) w = r;
    if (w == i) return;
    double tv = hv[i];
    int tw_ = hw[i];
    hv[i] = hv[w];
    hw[i] = hw[w];
    hv[w] = tv;
    hw[w] = tw_;
    i = w;
  }
}

static void heap_up(double *hv, int *hw, int i) {
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!ranks_after(hv[i], hw[i], hv[p], hw[p])) return;
    double tv = hv[i];
    int tw_ = hw[i];
    hv[i] = hv[p];
    hw[i] = hw[p];
    hv[p] = tv;
    hw[p] = tw_;
    i = p;
  }
}

void lda_gibbs_top(const gibbs_topics *tw, int n, int *word, double *val, int *fill) {
  int K = tw->K, V = tw->V;
  double e = tw->eta + tw->scale * tw->base;
  /* per topic a heap of its n best entries above the smoothing e (the
   * worst at the root), one pass over the store in word order */
  for (int kk = 0; kk < K; kk++) fill[kk] = 0;
  for (int v = 0; v < V; v++) {
    for (int j = tw->p[v]; j < tw->p[v + 1]; j++) {
      int kk = tw->k[j];
      double l = e;
      l += tw->scale * tw->x[j];
      if (!(l > e)) continue; /* ties with the words without an entry */
      double *hv = val + (svi_len)n * kk;
      int *hw = word + (svi_len)n * kk;
      int m = fill[kk];
      if (m < n) {
        hv[m] = l;
        hw[m] = v;
        fill[kk] = m + 1;
        heap_up(hv, hw, m);
      } else if (ranks_after(hv[0], hw[0], l, v)) {
        hv[0] = l;
        hw[0] = v;
        heap_down(hv, hw, n, 0);
      }
    }
  }
  for (int kk = 0; kk < K; kk++) {
    double *hv = val + (svi_len)n * kk;
    int *hw = word + (svi_len)n * kk;
    int m = fill[kk];
    /* best first: pop the heap into the slots from the back */
    for (int s = m - 1; s > 0; s--) {
      double tv = hv[0];
      int tw_ = hw[0];
      hv[0] = hv[s];
      hw[0] = hw[s];
      hv[s] = tv;
      hw[s] = tw_;
      heap_down(hv, hw, s, 0);
    }
    /* (popping the worst to the back leaves the best first) */
    /* then the words at the smoothing value, in word order, skipping the
     * m already taken */
    int v = 0;
    for (int s = m; s < n && v < V; v++) {
      int taken = 0;
      for (int i = 0; i < m; i++)
        if (hw[i] == v) {
          taken = 1;
          break;
        }
      if (taken) continue;
      hw[s] = v;
      hv[s] = e;
      s++;
    }
  }
}

/* ---- re-seeding dead topics (fit_lda(reuse_dead = TRUE), issue 35) ---- */

svi_len lda_gibbs_reseed(int V, const int *p0, const int *k0, const double *x0,
                         const unsigned char *dead, const int *p1, const int *k1,
                         const double *x1, double a1, int *p, int *k, double *x) {
  svi_len n = 0;
  if (k) p[0] = 0;
  for (int v = 0; v < V; v++) {
    int i = p0[v], ie = p0[v + 1], j = p1[v], je = p1[v + 1];
    /* both columns hold their topics in increasing order, the seed's only
     * dead topics: a merge that skips the old entries of dead topics */
    while (i < ie || j < je) {
      if (i < ie && dead[k0[i]]) {
        i++;
      } else if (j >= je || (i < ie && k0[i] < k1[j])) {
        if (k) {
          k[n] = k0[i];
          x[n] = x0[i];
        }
        n++;
        i++;
      } else {
        if (k) {
          k[n] = k1[j];
          x[n] = a1 * x1[j];
        }
        n++;
        j++;
      }
    }
    if (k) p[v + 1] = (int)n;
  }
  return n;
}
