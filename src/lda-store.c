/* The topic store of LDA training (notes/math.md §3.5): the topics
 * lambda = offset + scale X kept as a K x V table X (word-major: word v's K
 * values contiguous), a scale and the row sums xtot of X, so that a
 * minibatch's global step touches only the columns of its words. SCVB0,
 * stochastic / memoized / streaming vb and ML-OPE keep their topics in it
 * (R/lda-store.R). Plain C over arrays: no SEXP here. */
#include <math.h>
#include <string.h>
#include "svi.h"
#include "lda-store.h"

/* The start of a stochastic step on the store (both forms below): the new
 * scale (1 - rho) scale; when it falls below rescale_below (or reaches 0)
 * the step is dense: X is scaled by it now (*dense = 1) and the summary
 * enters with weight rho mult, else with rho mult / scale_new (*c). */
static double store_step_begin(int K, int V, double *X, double scale, double rho, double mult,
                               double rescale_below, int threads, int *dense, double *c) {
  const double scale_new = scale * (1.0 - rho);
  *dense = !(scale_new >= rescale_below) || !(scale_new > 0.0);
  *c = *dense ? rho * mult : rho * mult / scale_new;
  (void)threads;
  if (*dense) {
    const svi_len n = (svi_len)K * V;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
#endif
    for (svi_len j = 0; j < n; j++) X[j] *= scale_new;
  }
  return scale_new;
}

/* The end of the step: the new totals from the old and the summary's row
 * sums ssum; returns the store's new scale (1 after a dense step). */
static double store_step_end(int K, const double *xtot, const double *ssum, double *xtot_new,
                             int dense, double scale_new, double c) {
  if (dense) {
    for (int k = 0; k < K; k++) xtot_new[k] = scale_new * xtot[k] + c * ssum[k];
    return 1.0;
  }
  for (int k = 0; k < K; k++) xtot_new[k] = xtot[k] + c * ssum[k];
  return scale_new;
}

/* One pass over the minibatch's words: X[, w[u]] += c S[, u], then S[, u]
 * added to the row sums ssum, word after word. The columns of X sit far
 * apart (X is K x V and the minibatch's words are scattered over the
 * vocabulary): the next columns are prefetched while the current one is
 * updated (SVI_PREFETCH_COLUMN: with a non-temporal hint instead, the
 * pass took 0.95 s a lap over 10,000 wikipara paragraphs at K = 1000,
 * against 0.6 s). Written once as a macro and built
 * twice: for the processor the package is compiled for, and (x86-64, GCC)
 * with AVX2, picked when the processor has it. AVX2 without FMA: the same
 * products and sums, bit for bit. At K = 1000 and 2,500 words (60 MB
 * moved) the pass took 3.0 ms with R's usual flags and 2.1 ms with AVX2
 * (inst/bench/store-bandwidth.c). */
#define STORE_PASS(name, attr)                                                          \
  attr static void name(int K, int U, double *X, const int *w, const double *val,        \
                        double c, double *ssum) {                                       \
    const int ahead = 4;                                                                \
    for (int k = 0; k < K; k++) ssum[k] = 0.0;                                          \
    for (int u = 0; u < U; u++) {                                                       \
      STORE_PREFETCH(X, w, u, U, K, ahead);                                             \
      double *restrict col = X + (svi_len)w[u] * K;                                     \
      const double *restrict sv = val + (svi_len)u * K;                                 \
      STORE_ADD_COLUMN(col, sv, c, K)                                                   \
      SVI_SIMD                                                                        \
      for (int k = 0; k < K; k++) ssum[k] += sv[k];                                     \
    }                                                                                   \
  }
/* The step's one product and sum per value, col[k] += c sv[k], written once
 * for every pass over dense columns (the one pass, the split, an owner's
 * columns: store_update_owner()), so that all of them compile the same
 * expression and give the same bits: a shard's columns must equal the
 * whole table's. */
#define STORE_ADD_COLUMN(col, sv, c, K)                                                 \
  SVI_SIMD                                                                              \
  for (int k = 0; k < (K); k++) (col)[k] += (c) * (sv)[k];
#define STORE_PREFETCH(X, w, u, U, K, ahead)                                            \
  if ((u) + (ahead) < (U)) SVI_PREFETCH_COLUMN((X) + (svi_len)(w)[(u) + (ahead)] * (K), K, 1)
STORE_PASS(store_pass_base, )
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STORE_MULTI 1
STORE_PASS(store_pass_avx2, __attribute__((target("avx2"))))
#endif

static void store_pass(int K, int U, double *X, const int *w, const double *val, double c,
                       double *ssum) {
#ifdef STORE_MULTI
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    store_pass_avx2(K, U, X, w, val, c, ssum);
    return;
  }
#endif
  store_pass_base(K, U, X, w, val, c, ssum);
}

/* The stochastic global step on the store (the form of src/lda-gibbs-global.c),
 * as SCVB0, stochastic vb and ML-OPE take it (cvb0_global() is its dense
 * form). With
 * lambda = eta + N and N = scale X, the dense update
 *   N_new = (1 - rho) N + rho mult S
 * is scale_new = (1 - rho) scale and X_new = X + (rho mult / scale_new) S,
 * which touches only the columns (words) of the minibatch: O(K U), not
 * O(K V). xtot_k = sum_v X_kv follows the same rule with the row sums of S
 * (added in word order, so the result does not depend on threads). When
 * scale_new would fall below rescale_below (or reach 0, rho = 1) the step is
 * applied densely instead, X_new = scale_new X + rho mult S, and the scale
 * returns to 1 ("rescaling", one O(K V) pass every few hundred minibatches
 * at most). X is updated in place, xtot_new (K) receives the new totals;
 * ssum is K doubles of scratch. Returns the new scale.
 *
 * The update moves the summary and the minibatch's columns of X through
 * memory (60 MB at K = 1000 and 2,500 words). Split over threads, the
 * threads take the words (columns of X) in turn, then blocks of topics of
 * the row sums, each summed in word order: the same bits as the one pass
 * (store_pass()). One or two threads run the one pass; from three threads
 * on the update is split above 8,192 values (store_update_split()).
 * Two threads used to split above 524,288 values: measured then (b0736fc),
 * a pass over 60,000 wikipara paragraphs at K = 1000 took 3.7-4.4 s split
 * against 5.5-5.8 s in one pass. Measured again (a later build, with the
 * columns prefetched, a818ee5; perhaps another host), the one pass took
 * 2.5-2.75 s on two threads against the split's 2.9-3.5 s (2.35-3.0 s on
 * one thread; six runs each, builds alternating, inst/bench/results/
 * scale.txt): the two cores share about 13-15 GB/s (inst/bench/
 * store-bandwidth.c), and the split reads the summary twice. */
#define STORE_SHARE_TWO 524288.0
/* Whether a step of K x U values is one thread's (store_update_fills(),
 * store_update_owner()): below 8,192 values a second thread costs more
 * than it saves, and two threads keep it one thread's up to
 * STORE_SHARE_TWO values (above, they share the columns: the shape form's
 * making, the owner's update). */
static int store_one_pass(int K, int U, int threads) {
  const double n_values = (double)K * U;
  return threads <= 1 || n_values < 8192.0 || (threads == 2 && n_values <= STORE_SHARE_TWO);
}

/* Whether store_update() splits its step over the threads (above). */
static int store_update_split(int K, int U, int threads) {
  return threads >= 3 && (double)K * U >= 8192.0;
}

double store_update(int K, int V, double *X, const double *xtot, double scale,
                        double rho, double mult, int U, const int *w, const double *val,
                        double rescale_below, double *ssum, double *xtot_new, int threads) {
  int dense;
  double c;
  const double scale_new = store_step_begin(K, V, X, scale, rho, mult, rescale_below, threads,
                                            &dense, &c);
  if (!store_update_split(K, U, threads)) {
    store_pass(K, U, X, w, val, c, ssum);
  } else {
    const int ahead = 4;
    int B = (K + 2 * threads - 1) / (2 * threads);
    B = ((B + 7) / 8) * 8;
    if (B > 256) B = 256;
    const int nb = (K + B - 1) / B;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16) nowait
#endif
      for (int u = 0; u < U; u++) {
        STORE_PREFETCH(X, w, u, U, K, ahead);
        double *restrict col = X + (svi_len)w[u] * K;
        const double *restrict sv = val + (svi_len)u * K;
        STORE_ADD_COLUMN(col, sv, c, K)
      }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
      for (int b = 0; b < nb; b++) {
        const int k0 = B * b, n = k0 + B < K ? B : K - k0;
        double acc[256];
        for (int k = 0; k < n; k++) acc[k] = 0.0;
        for (int u = 0; u < U; u++) {
          const double *restrict sv = val + (svi_len)u * K + k0;
          SVI_SIMD
          for (int k = 0; k < n; k++) acc[k] += sv[k];
        }
        memcpy(ssum + k0, acc, sizeof(double) * (size_t)n);
      }
    }
  }
  return store_step_end(K, xtot, ssum, xtot_new, dense, scale_new, c);
}

/* store_update() on a summary made column by column: fill(ctx, u, buf)
 * writes column u's K values to buf just before the step adds them to
 * X[, w[u]], so fill may read that column as it stands before the step
 * (SCVB0's shape form reads the word's topic column, cvb0_shape_fill()).
 * The products and sums of store_pass(), in the same order: the same bits
 * as store_update() on the K x U values fill writes, without them in
 * memory, and each column of X read once. At K = 1000 over 10,000 wikipara
 * paragraphs (L = 32, one lap, one thread), making the columns first took
 * 1.9 s and the update 1.0 s; made as they are added, 1.8-2.1 s in all
 * (1.1-1.4 s with the prefetch of cvb0_topic_column()). Only where one
 * thread runs the whole step (store_one_pass()) with no dense rescaling:
 * store_update_fills() says so. buf: K doubles. */
int store_update_fills(int K, int U, double scale, double rho, double rescale_below,
                       int threads) {
  const double scale_new = scale * (1.0 - rho);
  const int dense = !(scale_new >= rescale_below) || !(scale_new > 0.0);
  return !dense && store_one_pass(K, U, threads);
}

#define STORE_FILL_PASS(name, attr)                                                     \
  attr static void name(int K, int U, double *X, const int *w, store_fill_fn fill,        \
                        const void *ctx, double *restrict buf, double c,                \
                        double *ssum) {                                                 \
    for (int k = 0; k < K; k++) ssum[k] = 0.0;                                          \
    for (int u = 0; u < U; u++) {                                                       \
      fill(ctx, u, buf); /* (reads the column: no restrict on col) */                  \
      double *col = X + (svi_len)w[u] * K;                                              \
      SVI_SIMD                                                                        \
      for (int k = 0; k < K; k++) col[k] += c * buf[k];                                 \
      SVI_SIMD                                                                        \
      for (int k = 0; k < K; k++) ssum[k] += buf[k];                                    \
    }                                                                                   \
  }
STORE_FILL_PASS(store_fill_pass_base, )
#ifdef STORE_MULTI
STORE_FILL_PASS(store_fill_pass_avx2, __attribute__((target("avx2"))))
#endif

double store_update_fill(int K, int V, double *X, const double *xtot, double scale,
                         double rho, double mult, int U, const int *w, store_fill_fn fill,
                         const void *ctx, double *buf, double rescale_below, double *ssum,
                         double *xtot_new) {
  int dense;
  double c;
  const double scale_new = store_step_begin(K, V, X, scale, rho, mult, rescale_below, 1,
                                            &dense, &c);
#ifdef STORE_MULTI
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    store_fill_pass_avx2(K, U, X, w, fill, ctx, buf, c, ssum);
  else
#endif
    store_fill_pass_base(K, U, X, w, fill, ctx, buf, c, ssum);
  return store_step_end(K, xtot, ssum, xtot_new, dense, scale_new, c);
}

/* The sparse step's columns: X[k, w[u]] += c val at the entries of word u
 * (store_update_sparse(), an owner's store_update_owner_sparse()); each
 * column written by one thread. */
static void store_sparse_columns(int K, int U, double *X, const int *w, const int *p,
                                 const int *k, const double *val, double c, int threads) {
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1 && p[U] >= 8192)
#endif
  for (int u = 0; u < U; u++) {
    double *restrict col = X + (svi_len)w[u] * K;
    for (int e = p[u]; e < p[u + 1]; e++) col[k[e]] += c * val[e];
  }
}

/* store_update() with a sparse S: word w[u] has the values val[p[u] ..
 * p[u + 1]) at topics k (0-based; SCVB0's sparse summary, R/lda-cvb0.R).
 * The same step: scale_new = (1 - rho) scale and X[k, w] += (rho mult /
 * scale_new) val at those entries only, O(entries), or the dense form below
 * rescale_below; the row sums of S are added serially in word order, so
 * the totals stay exact and the result does not depend on threads (each
 * column of X is written by one thread). ssum, xtot_new: K doubles. */
double store_update_sparse(int K, int V, double *X, const double *xtot, double scale,
                           double rho, double mult, int U, const int *w, const int *p,
                           const int *k, const double *val, double rescale_below,
                           double *ssum, double *xtot_new, int threads) {
  int dense;
  double c;
  const double scale_new =
      store_step_begin(K, V, X, scale, rho, mult, rescale_below, threads, &dense, &c);
  store_sparse_columns(K, U, X, w, p, k, val, c, threads);
  store_rowsums_sparse(K, p[U], k, val, ssum);
  return store_step_end(K, xtot, ssum, xtot_new, dense, scale_new, c);
}

/* The row sums ssum (K) of a summary, as the steps above add them: dense
 * (K values per word, val), word after word from 0, the sums of
 * store_pass() and of the split's blocks of topics; sparse (n entries at
 * topics k), entry after entry, those of store_update_sparse(). Only
 * additions, in that order, so the same bits at any vector width. A
 * sharded store's owners take them from here for the whole summary
 * (store_update_owner()). */
void store_rowsums(int K, int U, const double *val, double *ssum) {
  for (int k = 0; k < K; k++) ssum[k] = 0.0;
  for (int u = 0; u < U; u++) {
    const double *restrict sv = val + (svi_len)u * K;
    SVI_SIMD
    for (int k = 0; k < K; k++) ssum[k] += sv[k];
  }
}

void store_rowsums_sparse(int K, int n, const int *k, const double *val, double *ssum) {
  for (int j = 0; j < K; j++) ssum[j] = 0.0;
  for (int e = 0; e < n; e++) ssum[k[e]] += val[e];
}

/* The step of store_update() on a store sharded by word (R/executor-sharded.R):
 * X is one owner's columns of the whole table (K x its words), w the
 * minibatch's words among them (local columns, increasing) and val their K
 * values each, and ssum (K) the row
 * sums of the WHOLE minibatch's summary (store_rowsums()), which the owner
 * does not see. The scale, the dense rescaling and the new totals follow
 * from the whole store's scale and totals alone, so with meta identical to
 * the whole store's the owner's columns and xtot_new come out bit for bit
 * as the whole table's step leaves them: the same helpers, the same column
 * add (STORE_ADD_COLUMN) and ssum made as that step makes it. Each column
 * is written by one thread, so the result does not depend on threads. */
#define STORE_COLUMNS_PASS(name, attr)                                                  \
  attr static void name(int K, int U, double *X, const int *w, const double *val,        \
                        double c) {                                                     \
    const int ahead = 4;                                                                \
    for (int u = 0; u < U; u++) {                                                       \
      STORE_PREFETCH(X, w, u, U, K, ahead);                                             \
      double *restrict col = X + (svi_len)w[u] * K;                                     \
      const double *restrict sv = val + (svi_len)u * K;                                 \
      STORE_ADD_COLUMN(col, sv, c, K)                                                   \
    }                                                                                   \
  }
STORE_COLUMNS_PASS(store_columns_base, )
#ifdef STORE_MULTI
STORE_COLUMNS_PASS(store_columns_avx2, __attribute__((target("avx2"))))
#endif

double store_update_owner(int K, int V, double *X, const double *xtot, double scale,
                          double rho, double mult, int U, const int *w, const double *val,
                          double rescale_below, const double *ssum, double *xtot_new,
                          int threads) {
  int dense;
  double c;
  const double scale_new =
      store_step_begin(K, V, X, scale, rho, mult, rescale_below, threads, &dense, &c);
  /* (store_one_pass()'s thresholds: below them a second thread costs
   * more than it saves) */
  if (store_one_pass(K, U, threads)) {
#ifdef STORE_MULTI
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
      store_columns_avx2(K, U, X, w, val, c);
    else
#endif
      store_columns_base(K, U, X, w, val, c);
  } else {
    const int ahead = 4;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
#endif
    for (int u = 0; u < U; u++) {
      STORE_PREFETCH(X, w, u, U, K, ahead);
      double *restrict col = X + (svi_len)w[u] * K;
      const double *restrict sv = val + (svi_len)u * K;
      STORE_ADD_COLUMN(col, sv, c, K)
    }
  }
  return store_step_end(K, xtot, ssum, xtot_new, dense, scale_new, c);
}

/* store_update_owner() with a sparse summary (p, k, val as in
 * store_update_sparse()): the columns of store_update_sparse() and the
 * given ssum. */
double store_update_owner_sparse(int K, int V, double *X, const double *xtot,
                                 double scale, double rho, double mult, int U,
                                 const int *w, const int *p, const int *k,
                                 const double *val, double rescale_below,
                                 const double *ssum, double *xtot_new, int threads) {
  int dense;
  double c;
  const double scale_new =
      store_step_begin(K, V, X, scale, rho, mult, rescale_below, threads, &dense, &c);
  store_sparse_columns(K, U, X, w, p, k, val, c, threads);
  return store_step_end(K, xtot, ssum, xtot_new, dense, scale_new, c);
}

/* lambda = eta + scale X (K x V) and tot = V eta + scale xtot (K). lambda
 * may be X itself (the store turned into lambda in place: each entry is read
 * before it is written). */
void store_lambda(int K, int V, const double *X, const double *xtot, double eta,
                  double scale, double *lambda, double *tot) {
  const svi_len n = (svi_len)K * V;
  for (svi_len j = 0; j < n; j++) lambda[j] = eta + scale * X[j];
  for (int k = 0; k < K; k++) tot[k] = V * eta + scale * xtot[k];
}

/* X = lambda - eta (K x V), the store of a dense lambda (scale 1). X may be
 * lambda itself (converted in place). */
void store_from_lambda(int K, int V, const double *lambda, double eta, double *X) {
  const svi_len n = (svi_len)K * V;
  for (svi_len j = 0; j < n; j++) X[j] = lambda[j] - eta;
}

/* The store of the memoized sums S (K x V): X = max(S, 0) (negative entries
 * are rounding of S - old + new) and tot its row sums, summed word by word;
 * S = NULL gives an all-zero store. X may be S itself. */
void store_from_counts(int K, int V, const double *S, double *X, double *tot) {
  memset(tot, 0, sizeof(double) * (size_t)K);
  if (S == NULL) {
    memset(X, 0, sizeof(double) * (size_t)K * (size_t)V);
    return;
  }
  for (svi_len v = 0; v < V; v++) {
    const double *col = S + v * K;
    double *out = X + v * K;
    for (int k = 0; k < K; k++) {
      double a = col[k] > 0 ? col[k] : 0.0;
      out[k] = a;
      tot[k] += a;
    }
  }
}

/* X[, w] <- max(X[, w] + sign * val, 0) and the row sums tot by the same
 * changes: O(K x U). val holds K doubles per word; words increase. */
void store_add(int K, double *X, double *tot, int U, const int *w, const double *val,
               double sign) {
  for (int u = 0; u < U; u++) {
    double *col = X + (svi_len)w[u] * K;
    const double *a = val + (svi_len)u * K;
    for (int k = 0; k < K; k++) {
      if (a[k] == 0) continue;
      double old = col[k], nw = old + sign * a[k];
      if (nw < 0) nw = 0;
      col[k] = nw;
      tot[k] += nw - old;
    }
  }
}
