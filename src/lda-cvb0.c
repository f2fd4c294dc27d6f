/* Stochastic collapsed variational Bayes for LDA, SCVB0 (Foulds, Boyles,
 * DuBois, Smyth & Welling 2013, Algorithm 2 with clumping, eq. 9).
 * MATH.md section 5. Plain C over arrays: no SEXP here.
 *
 * Notation. lambda is K x V word-major (word v's K values contiguous) and
 * holds eta + NPhi, so (NPhi_vk + eta) / (NZ_k + V eta) = lambda_kv / tot_k with
 * tot_k = NZ_k + V eta. For one document with distinct words v (counts m_v)
 * and length N_d, each token-type update is
 *   gamma_vk  ~ lambda_kv / tot_k * (NTheta_dk + alpha)            (eq. 5)
 *   NTheta_d <- (1 - rho_t)^m NTheta_d + N_d gamma_v (1 - (1 - rho_t)^m)   (eq. 9)
 * with rho_t = s (tau + t)^-kappa and t counting the token-type updates made
 * in this document so far (across its passes). The last pass also adds
 * m_v gamma_v to the minibatch summary NPhi_hat (unscaled here; the global
 * step multiplies by C / |M|).
 *
 * Randomness (one stream per document of the batch: a "block" of one
 * document, so that documents can be spread over threads one at a time and
 * still draw the same numbers), consumed in this order: K uniforms u for the start
 * NTheta_dk = N_d u_k / sum(u); then, when shuffling, for every pass a
 * Fisher-Yates permutation of the document's distinct words (starting from
 * their stored order; for i = n-1 .. 1, j = floor(u (i + 1))). The pure-R
 * reference in tests/testthat/helper-reference-cvb0.R draws the same numbers.
 */
#include <math.h>
#include <string.h>
#include "svi.h"
#include "lda-cvb0.h"

/* Streams of this engine start at 7 * 2^48 (7: the issue of SCVB0), so they
 * never meet another engine's; the stream of document d of a batch is
 * CVB0_STREAM_OFFSET + stream_base + d, all below 2^53 so R can name it. */
#define CVB0_STREAM_OFFSET (7ULL << 48)

void cvb0_step_table(const cvb0_settings *cs, int T, double *rho, double *log1m) {
  for (int t = 0; t < T; t++) {
    double r = cs->doc_s * pow(cs->doc_tau + (double)t, -cs->doc_kappa);
    if (r > 1.0) r = 1.0;
    rho[t] = r;
    log1m[t] = log1p(-r);
  }
}

/* The two inner loops of a token-type update, over the K topics. They are
 * written with GCC/Clang vector extensions (two lanes of two doubles, plain
 * SSE2 on x86-64), with a scalar fallback that adds in exactly the same
 * order; the sums therefore do not depend on the compiler's vectoriser. */
#if defined(__GNUC__) || defined(__clang__)
#define CVB0_VEC 1
typedef double cvb0_v2 __attribute__((vector_size(16)));
static inline cvb0_v2 v2_load(const double *p) {
  cvb0_v2 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void v2_store(double *p, cvb0_v2 v) {
  memcpy(p, &v, sizeof v);
}
#endif

/* g_k = p_k (theta_k + alpha); returns sum_k g_k. */
static inline double cvb0_gamma(int K, const double *restrict p,
                                const double *restrict th, double alpha,
                                double *restrict g) {
  int k = 0;
  double s;
#ifdef CVB0_VEC
  const cvb0_v2 al = {alpha, alpha};
  cvb0_v2 a0 = {0.0, 0.0}, a1 = {0.0, 0.0};
  for (; k + 4 <= K; k += 4) {
    cvb0_v2 g0 = v2_load(p + k) * (v2_load(th + k) + al);
    cvb0_v2 g1 = v2_load(p + k + 2) * (v2_load(th + k + 2) + al);
    v2_store(g + k, g0);
    v2_store(g + k + 2, g1);
    a0 += g0;
    a1 += g1;
  }
  cvb0_v2 a = a0 + a1;
  s = a[0] + a[1];
#else
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (; k + 4 <= K; k += 4) {
    g[k] = p[k] * (th[k] + alpha);
    g[k + 1] = p[k + 1] * (th[k + 1] + alpha);
    g[k + 2] = p[k + 2] * (th[k + 2] + alpha);
    g[k + 3] = p[k + 3] * (th[k + 3] + alpha);
    s0 += g[k];
    s1 += g[k + 1];
    s2 += g[k + 2];
    s3 += g[k + 3];
  }
  s = (s0 + s2) + (s1 + s3);
#endif
  for (; k < K; k++) {
    g[k] = p[k] * (th[k] + alpha);
    s += g[k];
  }
  return s;
}

/* theta <- decay theta + c g, then the next word's g from the new theta;
 * returns the next word's sum_k g_k. */
static inline double cvb0_step_gamma(int K, const double *restrict pn,
                                     double *restrict th, double decay, double c,
                                     double alpha, double *restrict g) {
  int k = 0;
  double s;
#ifdef CVB0_VEC
  const cvb0_v2 al = {alpha, alpha}, de = {decay, decay}, cc = {c, c};
  cvb0_v2 a0 = {0.0, 0.0}, a1 = {0.0, 0.0};
  for (; k + 4 <= K; k += 4) {
    cvb0_v2 t0 = de * v2_load(th + k) + cc * v2_load(g + k);
    cvb0_v2 t1 = de * v2_load(th + k + 2) + cc * v2_load(g + k + 2);
    v2_store(th + k, t0);
    v2_store(th + k + 2, t1);
    cvb0_v2 g0 = v2_load(pn + k) * (t0 + al);
    cvb0_v2 g1 = v2_load(pn + k + 2) * (t1 + al);
    v2_store(g + k, g0);
    v2_store(g + k + 2, g1);
    a0 += g0;
    a1 += g1;
  }
  cvb0_v2 a = a0 + a1;
  s = a[0] + a[1];
#else
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (; k + 4 <= K; k += 4) {
    for (int i = 0; i < 4; i++) {
      double t0 = decay * th[k + i] + c * g[k + i];
      th[k + i] = t0;
      g[k + i] = pn[k + i] * (t0 + alpha);
    }
    s0 += g[k];
    s1 += g[k + 1];
    s2 += g[k + 2];
    s3 += g[k + 3];
  }
  s = (s0 + s2) + (s1 + s3);
#endif
  for (; k < K; k++) {
    double t0 = decay * th[k] + c * g[k];
    th[k] = t0;
    g[k] = pn[k] * (t0 + alpha);
    s += g[k];
  }
  return s;
}

/* a = w g and dst += a, as separate loops (no contraction across them, so
 * adding here or later from a buffer gives the same bits). */
static inline void cvb0_scale(int K, double w, const double *restrict g,
                              double *restrict a) {
  int k = 0;
#ifdef CVB0_VEC
  const cvb0_v2 ww = {w, w};
  for (; k + 2 <= K; k += 2) v2_store(a + k, ww * v2_load(g + k));
#endif
  for (; k < K; k++) a[k] = w * g[k];
}
static inline void cvb0_add(int K, const double *restrict a, double *restrict dst) {
  int k = 0;
#ifdef CVB0_VEC
  for (; k + 2 <= K; k += 2) v2_store(dst + k, v2_load(dst + k) + v2_load(a + k));
#endif
  for (; k < K; k++) dst[k] += a[k];
}

/* One document. P is K x U: P[u K + k] = lambda_kv / tot_k for the word v
 * of column u = col_of[v]. theta (K) receives NTheta_d; g (K) and order
 * (n_d) are scratch. With acc not NULL, the last pass writes m gamma of the
 * j-th distinct word to acc + j K (the document's stored order); with sum
 * not NULL (one thread) it adds m gamma of each word to column col_of[v] of
 * sum instead, through g2 (K scratch), in the same order and arithmetic. */
static void cvb0_doc(const svi_dtm *x, int d, const double *P, const int *col_of,
                     const cvb0_settings *cs, const double *rho, const double *log1m,
                     svi_rng *r, double *theta, double *g, double *g2, int *order,
                     double *acc, double *sum) {
  const int K = cs->K;
  const double alpha = cs->alpha;
  const int start = x->doc_ptr[d], n = x->doc_ptr[d + 1] - start;
  const int *term = x->term + start;
  const double *cnt = x->count + start;
  double Nd = 0.0;
  for (int j = 0; j < n; j++) Nd += cnt[j];
  if (n == 0 || Nd <= 0.0) {
    for (int k = 0; k < K; k++) theta[k] = 0.0;
    if (acc) memset(acc, 0, sizeof(double) * (size_t)n * (size_t)K);
    return;
  }
  /* random start */
  double su = 0.0;
  for (int k = 0; k < K; k++) {
    theta[k] = svi_rng_unif(r);
    su += theta[k];
  }
  const double sc = Nd / su;
  for (int k = 0; k < K; k++) theta[k] *= sc;

  int t = 0;
  for (int pass = 0; pass < cs->passes; pass++) {
    const int last = (pass == cs->passes - 1);
    for (int j = 0; j < n; j++) order[j] = j;
    if (cs->shuffle) {
      for (int i = n - 1; i >= 1; i--) {
        int jj = (int)(svi_rng_unif(r) * (double)(i + 1));
        if (jj > i) jj = i;
        int tmp = order[i];
        order[i] = order[jj];
        order[jj] = tmp;
      }
    }
    double s = cvb0_gamma(K, P + (svi_len)col_of[term[order[0]]] * K, theta, alpha, g);
    for (int jo = 0; jo < n; jo++) {
      const int j = order[jo];
      const double m = cnt[j];
      const double decay = (m == 1.0) ? 1.0 - rho[t] : exp(m * log1m[t]);
      t++;
      const double c = Nd * (1.0 - decay) / s;
      if (last && (acc || sum)) {
        double *a = acc ? acc + (svi_len)j * K : g2;
        cvb0_scale(K, m / s, g, a);
        if (!acc) cvb0_add(K, g2, sum + (svi_len)col_of[term[j]] * K);
      }
      if (jo + 1 < n) {
        const double *pn = P + (svi_len)col_of[term[order[jo + 1]]] * K;
        s = cvb0_step_gamma(K, pn, theta, decay, c, alpha, g);
      } else {
        for (int k = 0; k < K; k++) theta[k] = decay * theta[k] + c * g[k];
      }
    }
  }
}

/* P[u K + k] = (shift + scale lambda[w[u] K + k]) * inv_tot[k] for the U
 * words w (increasing): lambda is stored as shift + scale X when the global
 * step is lazy (shift = eta, scale the running product of (1 - rho)); shift
 * 0 and scale 1 give lambda itself, bit for bit. The columns sit far apart in
 * a large lambda, so the next columns are prefetched while the current one
 * is scaled. */
void cvb0_topic_columns(int K, const double *lambda, double shift, double scale,
                        const double *inv_tot, int U, const int *w, double *P) {
  const int ahead = 4;
  for (int u = 0; u < U; u++) {
#if defined(__GNUC__) || defined(__clang__)
    if (u + ahead < U) {
      const char *c = (const char *)(lambda + (svi_len)w[u + ahead] * K);
      for (size_t off = 0; off < sizeof(double) * (size_t)K; off += 64)
        __builtin_prefetch(c + off, 0, 0);
    }
#endif
    const double *src = lambda + (svi_len)w[u] * K;
    double *dst = P + (svi_len)u * K;
    for (int k = 0; k < K; k++) dst[k] = (shift + scale * src[k]) * inv_tot[k];
  }
}

/* Largest number of distinct words in one document. */
static int max_doc_types(const svi_dtm *x) {
  int mx = 0;
  for (int d = 0; d < x->D; d++) {
    int n = x->doc_ptr[d + 1] - x->doc_ptr[d];
    if (n > mx) mx = n;
  }
  return mx;
}

/* Per-thread scratch strides, padded to whole cache lines plus one, so that
 * no two threads write the same line. */
svi_len cvb0_thread_stride(int K) { return (((svi_len)2 * K + 7) / 8) * 8 + 8; }
svi_len cvb0_order_stride(int max_types) {
  return (((svi_len)(max_types > 0 ? max_types : 1) + 15) / 16) * 16 + 16;
}

svi_len cvb0_scratch_size(const svi_dtm *x, const cvb0_settings *cs) {
  /* step tables (2 T) */
  return 2 * (svi_len)(max_doc_types(x) + 1) * cs->passes;
}

/* The local step over a minibatch (or the fold-in when summary is NULL).
 *
 * P: K x U, lambda_kv / tot_k for the U distinct words of the batch, col_of[v]
 * the column of word v (or -1). theta: K x D output (NTheta per document).
 * summary: K x U output (zeroed here). The summary is reduced in document
 * order whatever the thread count: with one thread each document adds
 * straight into it; with more, documents run in parallel (one at a time,
 * dynamically: each has its own stream) writing per-entry values into ebuf,
 * then, after a barrier inside the same parallel region, each thread adds
 * the entries of its own range of columns, scanning the entries in document
 * order. One parallel region per chunk (one per minibatch unless a minibatch
 * overflows ebuf) keeps the fork/join points few: on a shared machine each
 * one can wait for a descheduled thread. Chunks of documents bound the size
 * of ebuf (ebuf_len doubles, at least K times the largest document's
 * entries).
 *
 * Scratch the caller provides (R_alloc): tables (cvb0_scratch_size),
 * g_all (threads * cvb0_thread_stride(K) doubles), order_all (threads *
 * cvb0_order_stride(max types) ints). */
void cvb0_local(const svi_dtm *x, const double *P, const int *col_of, int U,
                const cvb0_settings *cs, uint64_t seed, uint64_t stream_base, int threads,
                double *theta, double *summary, double *ebuf, svi_len ebuf_len,
                double *tables, double *g_all, int *order_all) {
  const int K = cs->K;
  const int mt = max_doc_types(x);
  const int T = (mt + 1) * cs->passes;
  double *rho = tables, *log1m = tables + T;
  cvb0_step_table(cs, T, rho, log1m);
  if (summary) memset(summary, 0, sizeof(double) * (size_t)U * (size_t)K);
  const int direct = (threads <= 1);
  const svi_len gstride = cvb0_thread_stride(K), ostride = cvb0_order_stride(mt);

  if (direct) {
    for (int d = 0; d < x->D; d++) {
      svi_rng r;
      svi_rng_init(&r, seed, CVB0_STREAM_OFFSET + stream_base + (uint64_t)d);
      cvb0_doc(x, d, P, col_of, cs, rho, log1m, &r, theta + (svi_len)d * K, g_all,
               g_all + K, order_all, NULL, summary);
    }
    return;
  }

  int d0 = 0;
  while (d0 < x->D) {
    /* this chunk: documents d0 .. d1-1, with entries e0 .. e1-1 */
    int d1 = d0 + 1;
    const svi_len e0 = x->doc_ptr[d0];
    if (summary) {
      while (d1 < x->D && (svi_len)(x->doc_ptr[d1 + 1] - e0) * K <= ebuf_len) d1++;
    } else {
      d1 = x->D;
    }
    const svi_len e1 = x->doc_ptr[d1];
    int nthr = threads;
    if (nthr > U && U > 0) nthr = U;

#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
      const int tid = svi_thread_id();
      double *g = g_all + (svi_len)tid * gstride;
      int *order = order_all + (svi_len)tid * ostride;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (int d = d0; d < d1; d++) {
        svi_rng r;
        svi_rng_init(&r, seed, CVB0_STREAM_OFFSET + stream_base + (uint64_t)d);
        double *acc = summary ? ebuf + (svi_len)(x->doc_ptr[d] - e0) * K : NULL;
        cvb0_doc(x, d, P, col_of, cs, rho, log1m, &r, theta + (svi_len)d * K, g, g + K,
                 order, acc, NULL);
      }
      /* (implicit barrier) reduce: part i owns columns [U i / n, U (i + 1) / n) */
      if (summary) {
#ifdef _OPENMP
#pragma omp for schedule(static, 1)
#endif
        for (int part = 0; part < nthr; part++) {
          const int ua = (int)((svi_len)U * part / nthr);
          const int ub = (int)((svi_len)U * (part + 1) / nthr);
          for (svi_len e = e0; e < e1; e++) {
            const int u = col_of[x->term[e]];
            if (u < ua || u >= ub) continue;
            cvb0_add(K, ebuf + (e - e0) * K, summary + (svi_len)u * K);
          }
        }
      }
    }
    d0 = d1;
  }
}

/* Global step (eqs. 7-8 on lambda = eta + NPhi and tot = V eta + NZ):
 *   lambda_new = (1 - rho) lambda + rho eta + rho scale S
 *   tot_new    = (1 - rho) tot    + rho V eta + rho scale rowsum(S)
 * S is given by columns: for word v, entries p[v] .. p[v+1]-1 with topics
 * idx[] and values val[] (a dgCMatrix K x V). Each cell is written by one
 * thread from its own inputs, so the result does not depend on threads. */
void cvb0_global(int K, int V, const double *lambda, const double *tot, double eta,
                 double rho, double scale, const int *p, const int *idx,
                 const double *val, int threads, double *lambda_new, double *tot_new) {
  const double a = 1.0 - rho, b = rho * eta, c = rho * scale;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (int v = 0; v < V; v++) {
    const double *src = lambda + (svi_len)v * K;
    double *dst = lambda_new + (svi_len)v * K;
    for (int k = 0; k < K; k++) dst[k] = a * src[k] + b;
    for (int e = p[v]; e < p[v + 1]; e++) dst[idx[e]] += c * val[e];
  }
  /* row sums of S in column order (serial: fixed order) */
  for (int k = 0; k < K; k++) tot_new[k] = 0.0;
  for (int v = 0; v < V; v++)
    for (int e = p[v]; e < p[v + 1]; e++) tot_new[idx[e]] += val[e];
  for (int k = 0; k < K; k++) tot_new[k] = a * tot[k] + rho * eta * V + c * tot_new[k];
}

/* The same global step, lazily (the form of src/lda-gibbs-global.c). With
 * lambda = eta + N and N = scale X, the dense update
 *   N_new = (1 - rho) N + rho mult S
 * is scale_new = (1 - rho) scale and X_new = X + (rho mult / scale_new) S,
 * which touches only the columns (words) of the minibatch: O(K U), not
 * O(K V). xtot_k = sum_v X_kv follows the same rule with the row sums of S
 * (added in column order, so the result does not depend on threads). When
 * scale_new would fall below rescale_below (or reach 0, rho = 1) the step is
 * applied densely instead, X_new = scale_new X + rho mult S, and the scale
 * returns to 1 ("rescaling", one O(K V) pass every few hundred minibatches
 * at most). X is updated in place; xtot_new (K) receives the new totals.
 * Returns the new scale. */
double cvb0_global_lazy(int K, int V, double *X, const double *xtot, double scale,
                        double rho, double mult, const int *p, const int *idx,
                        const double *val, double rescale_below, double *xtot_new) {
  const double scale_new = scale * (1.0 - rho);
  for (int k = 0; k < K; k++) xtot_new[k] = 0.0;
  for (int v = 0; v < V; v++)
    for (int e = p[v]; e < p[v + 1]; e++) xtot_new[idx[e]] += val[e];
  if (!(scale_new >= rescale_below) || !(scale_new > 0.0)) {
    const double c = rho * mult;
    const svi_len n = (svi_len)K * V;
    for (svi_len j = 0; j < n; j++) X[j] *= scale_new;
    for (int v = 0; v < V; v++) {
      double *col = X + (svi_len)v * K;
      for (int e = p[v]; e < p[v + 1]; e++) col[idx[e]] += c * val[e];
    }
    for (int k = 0; k < K; k++) xtot_new[k] = scale_new * xtot[k] + c * xtot_new[k];
    return 1.0;
  }
  const double c = rho * mult / scale_new;
  for (int v = 0; v < V; v++) {
    if (p[v] == p[v + 1]) continue;
    double *col = X + (svi_len)v * K;
    for (int e = p[v]; e < p[v + 1]; e++) col[idx[e]] += c * val[e];
  }
  for (int k = 0; k < K; k++) xtot_new[k] = xtot[k] + c * xtot_new[k];
  return scale_new;
}
