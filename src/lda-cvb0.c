/* Stochastic collapsed variational Bayes for LDA, SCVB0 (Foulds, Boyles,
 * DuBois, Smyth & Welling 2013, Algorithm 2 with clumping, eq. 9).
 * notes/math.md §4. Plain C over arrays: no SEXP here.
 *
 * Notation. lambda is K x V word-major (word v's K values contiguous) and
 * holds eta + NPhi, so (NPhi_vk + eta) / (NZ_k + V eta) = lambda_kv / tot_k with
 * tot_k = NZ_k + V eta. For one document with distinct words v (counts m_v)
 * and length N_d, each token-type update is
 *   gamma_vk  ~ lambda_kv / tot_k * (NTheta_dk + alpha_dk)         (eq. 5)
 *   NTheta_d <- (1 - rho_t)^m NTheta_d + N_d gamma_v (1 - (1 - rho_t)^m)   (eq. 9)
 * with alpha_dk = alpha, except for the background topic k = 0 when the
 * setting `background` b is positive: alpha_d0 = alpha + b N_d (the
 * paper's model is b = 0); rho_t = s (tau + t)^-kappa and t counting the
 * token-type updates made in this document so far (across its passes). The
 * last pass also adds m_v gamma_v to the minibatch summary NPhi_hat
 * (unscaled here; the global step multiplies by C / |M|).
 *
 * Randomness (one stream per document of the batch: a "block" of one
 * document, so that documents can be spread over threads one at a time and
 * still draw the same numbers), consumed in this order: K uniforms u for the start
 * NTheta_dk = N_d u_k / sum(u); then, when shuffling, for every pass a
 * Fisher-Yates permutation of the document's distinct words (starting from
 * their stored order; for i = n-1 .. 1, j = floor(u (i + 1))); with the
 * sampled sparse summary (top_L < K, top_rest = 1), one uniform per entry
 * of positive count in the last pass, as it is visited. The pure-R
 * reference in tests/testthat/helper-reference-cvb0.R draws the same numbers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "svi.h"
#include "lda-cvb0.h"
#include "pool.h"

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

/* The per-document kernel (lda-cvb0-kernel.h) in several vector widths,
 * chosen at run time from what the processor offers (or forced through the
 * settings, for the tests); all give the same bits. Fused multiply-adds are
 * off in this file so that no width contracts a * b + c differently. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CVB0_VW 2
#define CVB0_SUF v2
#define CVB0_TARGET
#include "lda-cvb0-kernel.h"
#undef CVB0_VW
#undef CVB0_SUF
#undef CVB0_TARGET
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CVB0_MULTI 1
#define CVB0_VW 4
#define CVB0_SUF v4
#define CVB0_TARGET __attribute__((target("avx2")))
#include "lda-cvb0-kernel.h"
#undef CVB0_VW
#undef CVB0_SUF
#undef CVB0_TARGET
#define CVB0_VW 8
#define CVB0_SUF v8
#define CVB0_TARGET __attribute__((target("avx512f")))
#include "lda-cvb0-kernel.h"
#undef CVB0_VW
#undef CVB0_SUF
#undef CVB0_TARGET
#endif
#define CVB0_BASE_DOC cvb0_doc_v2
#else
#define CVB0_VW 0
#define CVB0_SUF v0
#define CVB0_TARGET
#include "lda-cvb0-kernel.h"
#undef CVB0_VW
#undef CVB0_SUF
#undef CVB0_TARGET
#define CVB0_BASE_DOC cvb0_doc_v0
#endif

typedef void (*cvb0_doc_fn)(const svi_dtm *, int, const double *, const int *,
                            const cvb0_settings *, const double *, const double *,
                            svi_rng *, double *, double *, double *, int *, const int *,
                            double *, double *, const cvb0_sparse *, int *);

/* Width of the kernel: `want` 0 picks AVX2 when the processor runs it (on
 * the benchmark machine, an AMD EPYC, AVX-512 was no faster: inst/bench/
 * results/scvb0.txt), 2, 4 or 8 ask for one (falling back to narrower ones
 * the processor lacks). Returns the width used. */
int cvb0_kernel_width(int want) {
  int w = 2;
#ifdef CVB0_MULTI
  __builtin_cpu_init();
  if (want >= 8 && __builtin_cpu_supports("avx512f"))
    w = 8;
  else if ((want == 0 || want >= 4) && __builtin_cpu_supports("avx2"))
    w = 4;
#else
  (void)want;
#endif
  return w;
}

static cvb0_doc_fn cvb0_pick(int width) {
#ifdef CVB0_MULTI
  if (width == 8) return cvb0_doc_v8;
  if (width == 4) return cvb0_doc_v4;
#else
  (void)width;
#endif
  return CVB0_BASE_DOC;
}

/* Column u of P, to dst (cvb0_topic_column(): P's column u): dst[k] =
 * P[u K + k] = (shift + scale lambda[w[u] K + k]) * inv_tot[k]
 * for the batch's U words w (increasing): lambda is stored as shift +
 * scale X when the global step is lazy (shift = eta, scale the running
 * product of (1 - rho)); shift 0 and scale 1 give lambda itself, bit for
 * bit. The columns sit far apart in a large lambda, so the column `ahead`
 * places on is prefetched while this one is scaled (SVI_PREFETCH_COLUMN).
 * With tp->normalise, the column is then divided by its sum. */
static inline void cvb0_topic_column_to(int K, const cvb0_topics *tp, int u, int U,
                                        double *restrict dst) {
  const int ahead = 4;
  if (u + ahead < U) SVI_PREFETCH_COLUMN(tp->lambda + (svi_len)tp->w[u + ahead] * K, K, 0);
  const double *restrict src = tp->lambda + (svi_len)tp->w[u] * K;
  const double shift = tp->shift, scale = tp->scale, *restrict inv_tot = tp->inv_tot;
  SVI_SIMD
  for (int k = 0; k < K; k++) dst[k] = (shift + scale * src[k]) * inv_tot[k];
  if (tp->normalise) {
    /* each column summing to 1 (the responsibilities, and so the fit, are
     * the same: they are normalised over k), for the "topics" start */
    double q[8] = {0, 0, 0, 0, 0, 0, 0, 0}, sum;
    int k = 0;
    for (; k + 8 <= K; k += 8)
      for (int j = 0; j < 8; j++) q[j] += dst[k + j];
    sum = ((q[0] + q[4]) + (q[2] + q[6])) + ((q[1] + q[5]) + (q[3] + q[7]));
    for (; k < K; k++) sum += dst[k];
    const double inv = 1.0 / sum;
    SVI_SIMD
    for (k = 0; k < K; k++) dst[k] *= inv;
  }
}

static inline void cvb0_topic_column(int K, const cvb0_topics *tp, int u, int U, double *P) {
  cvb0_topic_column_to(K, tp, u, U, P + (svi_len)u * K);
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

/* Where each entry of a batch puts its last-pass m gamma (cvb0_doc()), so
 * that documents can run on several threads and the summary still be
 * summed in document order, as on one thread. The documents are cut into R
 * ranges of consecutive documents with about equal numbers of entries
 * (rdoc, R + 1 boundaries), one thread each, which runs its documents in
 * order. A column's entries in the first range that holds its word go
 * straight to the summary, in order: the first writes the column (dest[e]
 * = 2 u), the others add to it (2 u + 1). Every entry of the word in a
 * later range writes its own slot of K values, dest[e] = -(slot + 1),
 * slots numbered in entry order; the slots of column u are xslot[xptr[u]
 * .. xptr[u + 1]), increasing, and are added after the ranges, in order.
 * Each cell is then the same sum in the same order as on one thread; only
 * entries of a word seen in an earlier range need a slot (with R = 1, none).
 * ecol[e] is the column of entry e (U columns); xptr has U + 1 ints, xslot
 * room for nnz - U, first U ints of scratch. Returns the number of slots,
 * or -1 as soon as they pass max_slots (xptr and xslot are then not
 * filled). O(nnz + U + D). */
int cvb0_summary_plan(const svi_dtm *x, const int *ecol, int U, int R, int max_slots,
                      int *rdoc, int *dest, int *xptr, int *xslot, int *first) {
  const svi_len nnz = x->doc_ptr[x->D];
  /* ranges: range r starts at the first document whose entries start at
   * or after r nnz / R */
  rdoc[0] = 0;
  int d = 0;
  for (int r = 1; r < R; r++) {
    const double at = (double)nnz * r / R;
    while (d < x->D && (double)x->doc_ptr[d] < at) d++;
    rdoc[r] = d;
  }
  rdoc[R] = x->D;
  for (int u = 0; u < U; u++) {
    first[u] = -1;
    xptr[u] = 0;
  }
  xptr[U] = 0;
  int n_extra = 0;
  for (int r = 0; r < R; r++) {
    for (svi_len e = x->doc_ptr[rdoc[r]]; e < x->doc_ptr[rdoc[r + 1]]; e++) {
      const int u = ecol[e];
      if (first[u] < 0) {
        first[u] = r;
        dest[e] = 2 * u;
      } else if (first[u] == r) {
        dest[e] = 2 * u + 1;
      } else {
        if (n_extra == max_slots) return -1;
        dest[e] = -(++n_extra);
        xptr[u]++;
      }
    }
  }
  /* xptr[u]: the end of column u's slots, then (filled backwards) its start */
  int end = 0;
  for (int u = 0; u < U; u++) {
    end += xptr[u];
    xptr[u] = end;
  }
  xptr[U] = n_extra;
  for (svi_len e = nnz - 1; e >= 0; e--)
    if (dest[e] < 0) xslot[--xptr[ecol[e]]] = -dest[e] - 1;
  return n_extra;
}

/* The plan of a sparse summary (settings top_L = L < K): cptr, cent the
 * batch's entries by column (entry order within a column), cap[u] the
 * start of column u's room, min(K, L x its entries); eoff[e] the start of
 * entry e's slots, L each; in the shape form (shape = 1) full[u] flags a
 * full column (L x its entries >= K: room K), whose entries hold K slots,
 * or none when `direct` (one thread adds them to the column as it goes).
 * Returns cap[U]. */
svi_len cvb0_sparse_plan(svi_len nnz, const int *ecol, int U, int K, int L, int shape,
                         int direct, int *cptr, int *cent, svi_len *cap, svi_len *eoff,
                         int *full) {
  for (int u = 0; u <= U; u++) cptr[u] = 0;
  for (svi_len e = 0; e < nnz; e++) cptr[ecol[e] + 1]++;
  if (shape)
    for (int u = 0; u < U; u++) full[u] = (svi_len)L * cptr[u + 1] >= K;
  eoff[0] = 0;
  for (svi_len e = 0; e < nnz; e++) {
    const int w = (shape && full[ecol[e]]) ? (direct ? 0 : K) : L;
    eoff[e + 1] = eoff[e] + w;
  }
  cap[0] = 0;
  for (int u = 0; u < U; u++) {
    const svi_len room = (svi_len)L * cptr[u + 1];
    cap[u + 1] = cap[u] + (room < K ? room : K);
    cptr[u + 1] += cptr[u];
  }
  for (svi_len e = 0; e < nnz; e++) cent[cptr[ecol[e]]++] = (int)e;
  for (int u = U; u > 0; u--) cptr[u] = cptr[u - 1];
  cptr[0] = 0;
  return cap[U];
}

/* Column u of cvb0_shape_columns(), to dst (K doubles). */
static void cvb0_shape_column(int K, const cvb0_topics *tp, int u, int U, const int *p,
                              const int *k, const double *v, const double *r, double *dst) {
  if (r[u] != 0.0) {
    cvb0_topic_column_to(K, tp, u, U, dst);
    for (int j = 0; j < K; j++) dst[j] *= r[u];
  } else {
    memset(dst, 0, sizeof(double) * (size_t)K);
  }
  for (int i = p[u]; i < p[u + 1]; i++) dst[k[i]] += v[i];
  for (int j = 0; j < K; j++) dst[j] = dst[j] > 0.0 ? dst[j] : 0.0;
}

/* The shape form's summary as the global step adds it (cvb0_shape()): for
 * each of the U columns (words tp->w, the sparse form p, k, v and tail
 * sums r of a local step), x[u K + k] = max(0, r[u] p_k + the column's
 * value at k), p the word's topic column under tp (lambda_kv / tot_k,
 * normalised over k: tp->normalise must be set). A full column (r[u] = 0)
 * gives its values as they are. The threads share the columns. */
void cvb0_shape_columns(int K, const cvb0_topics *tp, int U, const int *p, const int *k,
                        const double *v, const double *r, double *x, int threads) {
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
#endif
  for (int u = 0; u < U; u++)
    cvb0_shape_column(K, tp, u, U, p, k, v, r, x + (svi_len)u * K);
}

/* cvb0_shape_columns()'s column u alone, to out (K doubles), for
 * store_update_fill(): ctx is a cvb0_shape_ctx. */
void cvb0_shape_fill(const void *ctx, int u, double *out) {
  const cvb0_shape_ctx *c = (const cvb0_shape_ctx *)ctx;
  cvb0_shape_column(c->K, c->tp, u, c->U, c->p, c->k, c->v, c->r, out);
}

static int cmp_int(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Column u of the sparse summary: the sums, topic by topic, of its entries'
 * values in entry order (each starts at 0), written as increasing topics
 * ok and sums ov from cap[u]; nz[u] their number; in the shape form r[u]
 * the sum of its entries' tail weights, in entry order. acc (K, all 0),
 * mark (K, all 0) and touched (K) are scratch, left as found. */
static void cvb0_sparse_column(int K, const cvb0_sparse *sp, int u, double *acc, int *mark,
                               int *touched) {
  int nt = 0;
  double rs = 0.0;
  if (sp->full && sp->full[u]) {
    /* a full column of the shape form: all K topics, each the sum of its
     * entries' values in entry order (on one thread added as the documents
     * ran, in the same order; else from each entry's K slots, topics
     * 0 .. K - 1 in order, or none for a document without tokens) */
    int *ok = sp->ok + sp->cap[u];
    double *ov = sp->ov + sp->cap[u];
    if (sp->fullacc) {
      memcpy(ov, sp->fullacc + (svi_len)u * K, sizeof(double) * (size_t)K);
    } else {
      for (int k = 0; k < K; k++) ov[k] = 0.0;
      for (int i = sp->cptr[u]; i < sp->cptr[u + 1]; i++) {
        const svi_len o = sp->eoff[sp->cent[i]];
        if (sp->tk[o] < 0) continue;
        const double *tv = sp->tv + o;
        for (int k = 0; k < K; k++) ov[k] += tv[k];
      }
    }
    for (int k = 0; k < K; k++) ok[k] = k;
    sp->nz[u] = K;
    sp->r[u] = 0.0;
    return;
  }
  for (int i = sp->cptr[u]; i < sp->cptr[u + 1]; i++) {
    const int e = sp->cent[i];
    for (svi_len o = sp->eoff[e]; o < sp->eoff[e + 1]; o++) {
      const int k = sp->tk[o];
      if (k < 0) continue;
      if (!mark[k]) {
        mark[k] = 1;
        touched[nt++] = k;
      }
      acc[k] += sp->tv[o];
    }
    if (sp->tc) rs += sp->tc[e];
  }
  if (sp->r) sp->r[u] = rs;
  int *ok = sp->ok + sp->cap[u];
  double *ov = sp->ov + sp->cap[u];
  if ((svi_len)nt * 8 > K) {
    int n = 0;
    for (int k = 0; k < K; k++) {
      if (!mark[k]) continue;
      ok[n] = k;
      ov[n++] = acc[k];
      acc[k] = 0.0;
      mark[k] = 0;
    }
  } else {
    qsort(touched, (size_t)nt, sizeof(int), cmp_int);
    for (int n = 0; n < nt; n++) {
      const int k = touched[n];
      ok[n] = k;
      ov[n] = acc[k];
      acc[k] = 0.0;
      mark[k] = 0;
    }
  }
  sp->nz[u] = nt;
}

/* What every document of a local step reads: the batch, its topics (and
 * the U columns P they fill), the settings, the kernel, the step tables,
 * the random streams' seed and base, and the documents' topic counts. */
typedef struct {
  const svi_dtm *x;
  const cvb0_topics *tp;
  double *P;
  const int *ecol;
  int U;
  const cvb0_settings *cs;
  cvb0_doc_fn doc_fn;
  const double *rho, *log1m;
  uint64_t seed, stream_base;
  double *theta;
} cvb0_pass;

/* One document with its own random stream, writing its summary parts
 * where dest / extra / summary or tk / tv / il say (cvb0_doc()); g and
 * order are the calling thread's scratch. */
static void cvb0_pass_doc(const cvb0_pass *ps, int d, double *g, int *order, const int *dest,
                          double *extra, double *summary, const cvb0_sparse *sp, int *il) {
  svi_rng r;
  svi_rng_init(&r, ps->seed, CVB0_STREAM_OFFSET + ps->stream_base + (uint64_t)d);
  ps->doc_fn(ps->x, d, ps->P, ps->ecol, ps->cs, ps->rho, ps->log1m, &r,
             ps->theta + (svi_len)ps->cs->K * d, g, g + ps->cs->K, order, dest, extra, summary,
             sp, il);
}

/* A local step as one job of the package's threads (pool.h): the work of
 * cvb0_local() below and where each thread's scratch and shared counters
 * are. */
typedef struct {
  const cvb0_pass *ps;
  double *g_all;
  int *order_all;
  svi_len gstride, ostride;
  /* the documents: R ranges rdoc (each on one thread, in order), or with
   * rdoc NULL one at a time */
  int R;
  const int *rdoc;
  const int *dest;
  double *extra, *summary;
  const cvb0_plan *plan; /* training with slots: add them to the summary */
  const cvb0_sparse *sp; /* the sparse summary */
  int next_col, next_doc, next_sum; /* the dynamic loops' counters */
  svi_pool_barrier bar;
} cvb0_job;

/* Thread tid of n: the batch's topic columns P (the threads share the
 * words), then the documents, then the summary's columns (the slots of
 * each added in document order, or the sparse entries of each); a barrier
 * between the parts. */
static void cvb0_job_run(void *arg, int tid, int n) {
  cvb0_job *j = (cvb0_job *)arg;
  const cvb0_pass *ps = j->ps;
  const int K = ps->cs->K, U = ps->U;
  double *g = j->g_all + (svi_len)tid * j->gstride;
  int *order = j->order_all + (svi_len)tid * j->ostride;
  int *il = j->sp ? j->sp->il + (svi_len)tid * (ps->cs->top_L + K) : NULL;
  int lo, hi;
  while (svi_pool_take(&j->next_col, 32, U, &lo, &hi))
    for (int u = lo; u < hi; u++) cvb0_topic_column(K, ps->tp, u, U, ps->P);
  svi_pool_barrier_wait(&j->bar, n);
  if (j->rdoc) {
    for (int r = tid; r < j->R; r += n)
      for (int d = j->rdoc[r]; d < j->rdoc[r + 1]; d++)
        cvb0_pass_doc(ps, d, g, order, j->dest, j->extra, j->summary, j->sp, il);
  } else {
    while (svi_pool_take(&j->next_doc, 1, ps->x->D, &lo, &hi))
      cvb0_pass_doc(ps, lo, g, order, j->dest, j->extra, j->summary, j->sp, il);
  }
  if (j->sp) {
    const cvb0_sparse *sp = j->sp;
    double *acc = sp->acc + (svi_len)tid * K;
    int *mark = sp->mark + (svi_len)tid * K, *touched = sp->touched + (svi_len)tid * K;
    svi_pool_barrier_wait(&j->bar, n);
    while (svi_pool_take(&j->next_sum, 16, U, &lo, &hi))
      for (int u = lo; u < hi; u++) cvb0_sparse_column(K, sp, u, acc, mark, touched);
  } else if (j->plan) {
    /* each column's later entries, in document order (the slots of a
     * column increase) */
    const cvb0_plan *plan = j->plan;
    svi_pool_barrier_wait(&j->bar, n);
    while (svi_pool_take(&j->next_sum, 16, U, &lo, &hi)) {
      for (int u = lo; u < hi; u++) {
        double *dst = j->summary + (svi_len)u * K;
        for (int i = plan->xptr[u]; i < plan->xptr[u + 1]; i++) {
          const double *a = j->extra + (svi_len)plan->xslot[i] * K;
          SVI_SIMD
          for (int k = 0; k < K; k++) dst[k] += a[k];
        }
      }
    }
  }
}

/* The local step over a minibatch (or the fold-in when summary is NULL).
 *
 * P: K x U output, lambda_kv / tot_k for the U distinct words of the batch
 * (cvb0_topic_column(); the threads share the words), ecol[e] the column
 * of the word of entry e. theta: K x D output (NTheta per document).
 * summary: K x U output, column u the sum over the batch's entries of word
 * u, in document order, of m gamma.
 *
 * Each document has its own random stream. Training (a summary) with plan
 * not NULL (cvb0_summary_plan(); extra holds K doubles per slot) runs the
 * plan's ranges of documents, one thread each: an entry whose word first
 * appears in its range adds its m gamma to the summary, any other writes
 * its own slot; then the threads share the summary's columns and each adds
 * its columns' slots in document order. Every cell of the summary is the
 * same sum in the same order as with documents added one after another, so
 * the fit does not depend on threads. A plan of one range (one thread, or
 * too many slots on several) has no slots: its documents run in order on
 * one thread, each column written by its first entry. With plan NULL
 * training runs the documents as one range too, adding into the summary
 * zeroed first (the threads share only the topic columns); the fold-in (no
 * summary) and the sparse summary (each entry's top L in its own place,
 * then the threads share the columns, each summed in entry order) spread
 * the documents over the threads one at a time.
 *
 * The threads are the package's own (pool.h), not OpenMP's: this step
 * runs once per minibatch, and between two of them R works while the
 * threads sleep instead of spinning on a core another program may need
 * (inst/bench/results/scale.txt).
 *
 * Scratch the caller provides (R_alloc): tables (cvb0_scratch_size),
 * g_all (threads * cvb0_thread_stride(K) doubles), order_all (threads *
 * cvb0_order_stride(max types) ints). */
void cvb0_local(const svi_dtm *x, const cvb0_topics *tp, double *P, const int *ecol, int U,
                const cvb0_settings *cs, uint64_t seed, uint64_t stream_base, int threads,
                double *theta, double *summary, const cvb0_plan *plan,
                const cvb0_sparse *sp, double *tables, double *g_all, int *order_all) {
  const int K = cs->K;
  const int mt = max_doc_types(x);
  const int T = (mt + 1) * cs->passes;
  double *rho = tables, *log1m = tables + T;
  cvb0_step_table(cs, T, rho, log1m);
  const cvb0_pass ps = {x, tp, P, ecol, U, cs, cvb0_pick(cvb0_kernel_width(cs->kernel)),
                        rho, log1m, seed, stream_base, theta};
  cvb0_job j = {.ps = &ps, .g_all = g_all, .order_all = order_all,
                .gstride = cvb0_thread_stride(K), .ostride = cvb0_order_stride(mt)};
  const int whole[2] = {0, x->D};
  if (sp) {
    j.sp = sp;
  } else if (summary && !plan) {
    memset(summary, 0, sizeof(double) * (size_t)U * (size_t)K);
    j.R = 1;
    j.rdoc = whole;
    j.summary = summary;
  } else if (summary) {
    j.R = plan->R;
    j.rdoc = plan->rdoc;
    j.dest = plan->dest;
    j.extra = plan->extra;
    j.summary = summary;
    j.plan = plan;
  }
  svi_pool_run(threads, cvb0_job_run, &j);
}

/* Global step (eqs. 7-8 on lambda = eta + NPhi and tot = V eta + NZ):
 *   lambda_new = (1 - rho) lambda + rho eta + rho scale S
 *   tot_new    = (1 - rho) tot    + rho V eta + rho scale rowsum(S)
 * S is given by its U words w (increasing) and their K values each (val,
 * K x U). Each cell is written by one thread from its own inputs, so the
 * result does not depend on threads. */
void cvb0_global(int K, int V, const double *lambda, const double *tot, double eta,
                 double rho, double scale, int U, const int *w, const double *val,
                 int threads, double *lambda_new, double *tot_new) {
  const double a = 1.0 - rho, b = rho * eta, c = rho * scale;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (int v = 0; v < V; v++) {
    const double *src = lambda + (svi_len)v * K;
    double *dst = lambda_new + (svi_len)v * K;
    for (int k = 0; k < K; k++) dst[k] = a * src[k] + b;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (int u = 0; u < U; u++) {
    double *dst = lambda_new + (svi_len)w[u] * K;
    const double *sv = val + (svi_len)u * K;
    for (int k = 0; k < K; k++) dst[k] += c * sv[k];
  }
  /* row sums of S in word order (serial: fixed order) */
  for (int k = 0; k < K; k++) tot_new[k] = 0.0;
  for (int u = 0; u < U; u++)
    for (int k = 0; k < K; k++) tot_new[k] += val[(svi_len)u * K + k];
  for (int k = 0; k < K; k++) tot_new[k] = a * tot[k] + rho * eta * V + c * tot_new[k];
}
