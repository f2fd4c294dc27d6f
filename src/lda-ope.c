/* OPE: online maximum a posteriori estimation of a document's topic mixture
 * (Than & Doan, Algorithm 1), the batch summaries of its learners and the
 * ML-OPE topic update. Plain C over arrays; no R API.
 *
 * For one document with distinct words v_j and counts c_j, OPE maximises
 *   f(theta) = g1 + g2,  g1 = sum_j c_j ln x_j,  x_j = sum_k theta_k beta_k,v_j,
 *                        g2 = sum_k (alpha_k - 1) ln theta_k
 * with alpha_k = alpha, except for topic 1 with a background (background b >
 * 0): alpha_1 = alpha + b N_d, N_d = sum_j c_j (notes/math.md §5)
 * over the eps-simplex {theta : sum_k theta_k = 1, theta_k >= eps}. At
 * iteration t it draws g1 or g2 uniformly, keeps the counts a_t, b_t of the
 * draws, and moves towards the vertex of the eps-simplex with the largest
 * component of F'_t = (2 / t)(a_t g1' + b_t g2') at theta_t.
 *
 * Step size. The paper writes theta_{t+1} = theta_t + (e_t - theta_t) / t,
 * which at t = 1 replaces theta_1 by the vertex e_1 and so discards the
 * initial point. We count theta_1 as the first of the averaged iterates and
 * step by 1 / (t + 1): theta_{T+1} = (theta_1 + e_1 + ... + e_T) / (T + 1).
 * The convergence argument (O(1/t), Theorem 2) is unchanged, and the random
 * start keeps a small share of every topic, which avoids components sitting
 * at eps when alpha < 1.
 *
 * First pick. F'_t averages t random picks of g1 or g2. Alg. 1 draws the
 * first one at random too; we count g1 (the likelihood) once before the first
 * draw, as the authors' public code does (its pick counts start at [1, 0]).
 * Without it, half of the documents start with F'_1 = g2', whose vertex is
 * merely the largest component of the random theta_1: a random topic that
 * then holds a share 1 / (T + 1) or more of theta, and that the prior's
 * rich-get-richer gradient (alpha - 1) / theta_k (alpha < 1) keeps favouring.
 * ML-OPE's topics, averages of whole documents weighted by theta, are blurred
 * by these picks: on nips_f20 (K = 100, the paper's settings) the head start
 * improves the predictive probability after 70 laps from -7.319 to -7.283
 * (inst/bench/results/ope.txt). a_t / t -> 1/2 still, so Theorem 2's argument
 * is unchanged. The draws are the same (one uniform per iteration).
 *
 * Random draws of one document, in this order from its block's stream:
 * K uniforms u_k for theta_1 (theta_1 proportional to 1 + u_k, mapped into
 * the eps-simplex), then one uniform per iteration (g1 when u < 1/2). The
 * pure-R reference in tests/testthat/helper-reference-ope.R draws the same.
 *
 * Words no topic can emit (beta_kv = 0 for every k, e.g. a word ML-OPE has
 * not seen yet) would make f = -inf whatever theta is; they carry no
 * information about theta and are left out of f and of its gradient.
 *
 * topic-word tables are word-major: beta + (svi_len)v * K holds word v's K
 * values. */
#include <math.h>
#include <string.h>
#include "svi.h"
#include "pool.h"
#include "lda-ope.h"

/* Inner loops over topics are short, contiguous and hot: ask for SIMD code
 * (plain -O2 leaves loops of unknown length scalar). The order of a
 * reduction then depends on the vector width only, never on the threads. */
#ifdef _OPENMP
#define OPE_PRAGMA(x) _Pragma(#x)
#define OPE_SIMD OPE_PRAGMA(omp simd)
#define OPE_SIMD_SUM(v) OPE_PRAGMA(omp simd reduction(+ : v))
#else
#define OPE_SIMD
#define OPE_SIMD_SUM(v)
#endif

/* Objective f(theta) for one document, recomputing x exactly; bg = b N_d. */
static double ope_objective(const ope_opts *o, const double *beta, const int *term,
                            const double *count, int n, const double *theta, double bg) {
  const int K = o->K;
  double f = 0.0;
  for (int j = 0; j < n; j++) {
    const double *b = beta + (svi_len)term[j] * K;
    double xj = 0.0;
    OPE_SIMD_SUM(xj)
    for (int k = 0; k < K; k++) xj += theta[k] * b[k];
    if (xj > 0.0) f += count[j] * log(xj); /* see "Words no topic can emit" */
  }
  if (o->alpha != 1.0) {
    double s = 0.0;
    for (int k = 0; k < K; k++) s += log(theta[k]);
    f += (o->alpha - 1.0) * s;
  }
  if (bg > 0.0) f += bg * log(theta[0]);
  return f;
}

double ope_doc(const ope_opts *o, const double *beta, const double *colsum,
               const int *term, const double *count, int n, svi_rng *r, double *theta,
               double *x, double *grad, double *f_start) {
  const int K = o->K;
  const double eps = o->eps, top = 1.0 - K * eps, am1 = o->alpha - 1.0;
  double bg = 0.0;
  if (o->background > 0.0) {
    for (int j = 0; j < n; j++) bg += count[j];
    bg *= o->background;
  }

  /* theta_1: proportional to 1 + u_k, inside the eps-simplex */
  double s = 0.0;
  for (int k = 0; k < K; k++) {
    theta[k] = 1.0 + svi_rng_unif(r);
    s += theta[k];
  }
  for (int k = 0; k < K; k++) theta[k] = eps + top * theta[k] / s;
  for (int j = 0; j < n; j++) {
    const double *b = beta + (svi_len)term[j] * K;
    double xj = 0.0;
    OPE_SIMD_SUM(xj)
    for (int k = 0; k < K; k++) xj += theta[k] * b[k];
    x[j] = xj;
  }
  if (f_start) *f_start = ope_objective(o, beta, term, count, n, theta, bg);

  /* how often g1 and g2 were picked; g1 once before the first draw (see
   * "First pick") */
  double a = 1.0, bcnt = 0.0;
  for (int t = 1; t <= o->T; t++) {
    if (svi_rng_unif(r) < 0.5)
      a += 1.0;
    else
      bcnt += 1.0;
    /* F'_t up to the positive factor 2 / t, which leaves the argmax alone */
    const int use_g1 = a > 0.0 && n > 0, use_g2 = bcnt > 0.0 && (am1 != 0.0 || bg > 0.0);
    /* F'_t vanishes (an empty document with alpha = 1, or only g2 drawn so
     * far for an empty document): every vertex maximises <F'_t, x>, so stay
     * put rather than favour one topic arbitrarily. */
    if (!use_g1 && !use_g2) continue;
    memset(grad, 0, sizeof(double) * K);
    if (use_g1) {
      /* four words per sweep over grad: one store per four multiply-adds */
      int j = 0, m = 0;
      const double *bq[4];
      double wq[4];
      for (; j < n; j++) {
        if (!(x[j] > 0.0)) continue;
        bq[m] = beta + (svi_len)term[j] * K;
        wq[m] = a * count[j] / x[j];
        if (++m == 4) {
          const double *b0 = bq[0], *b1 = bq[1], *b2 = bq[2], *b3 = bq[3];
          const double w0 = wq[0], w1 = wq[1], w2 = wq[2], w3 = wq[3];
          OPE_SIMD
          for (int k = 0; k < K; k++)
            grad[k] += w0 * b0[k] + w1 * b1[k] + w2 * b2[k] + w3 * b3[k];
          m = 0;
        }
      }
      for (int q = 0; q < m; q++) {
        const double *b = bq[q];
        const double w = wq[q];
        OPE_SIMD
        for (int k = 0; k < K; k++) grad[k] += w * b[k];
      }
    }
    if (use_g2) {
      const double w = bcnt * am1;
      for (int k = 0; k < K; k++) grad[k] += w / theta[k];
      if (bg > 0.0) grad[0] += bcnt * bg / theta[0];
    }
    int best = 0;
    for (int k = 1; k < K; k++)
      if (grad[k] > grad[best]) best = k;
    /* theta <- theta + rho (e_best - theta), e_best the eps-simplex vertex */
    const double rho = 1.0 / (t + 1.0), keep = 1.0 - rho;
    OPE_SIMD
    for (int k = 0; k < K; k++) theta[k] = keep * theta[k] + rho * eps;
    theta[best] += rho * top;
    for (int j = 0; j < n; j++) {
      const double bv = beta[(svi_len)term[j] * K + best];
      x[j] = keep * x[j] + rho * (eps * colsum[term[j]] + top * bv);
    }
  }
  return ope_objective(o, beta, term, count, n, theta, bg);
}

void ope_batch_topics(const double *X, int K, const int *words, int Vb, double offset,
                      double scale, const double *inv_tot, double *beta, double *colsum) {
  for (int w = 0; w < Vb; w++) {
    if (w + 4 < Vb) SVI_PREFETCH_COLUMN(X + (svi_len)words[w + 4] * K, K, 0);
    const double *l = X + (svi_len)words[w] * K;
    double *b = beta + (svi_len)w * K;
    double cs = 0.0;
    for (int k = 0; k < K; k++) {
      b[k] = (offset + scale * l[k]) * inv_tot[k];
      cs += b[k];
    }
    colsum[w] = cs;
  }
}

/* Draws of a document (see lda_local_ope): K + T, the same for every one. */
static uint64_t ope_doc_draws(int d, const void *ctx) {
  (void)d;
  return *(const uint64_t *)ctx;
}

/* lda_local_ope() as a job of the package's threads (pool.h: they sleep,
 * not spin, while R works between minibatches): the blocks' stream starts,
 * a barrier, then the documents one at a time. */
typedef struct {
  const svi_dtm *x;
  const double *beta, *colsum;
  const ope_opts *o;
  uint64_t seed, stream0;
  double *theta, *f_start, *f_end, *scratch;
  svi_len per_thread;
  int max_nnz;
  svi_rng *doc_rng, *doc_end;
  uint64_t per_doc;
  int next_block, next_doc;
  svi_pool_barrier bar;
} ope_local_job;

static void ope_local_run(void *arg, int tid, int n_threads) {
  ope_local_job *j = (ope_local_job *)arg;
  const svi_dtm *x = j->x;
  const int K = j->o->K;
  svi_doc_stream_starts(x->D, j->seed, j->stream0, ope_doc_draws, &j->per_doc, j->doc_rng,
                        &j->next_block);
  svi_pool_barrier_wait(&j->bar, n_threads);
  double *xs = j->scratch + (svi_len)tid * j->per_thread;
  double *grad = xs + j->max_nnz;
  int d, d1;
  while (svi_pool_take(&j->next_doc, 1, x->D, &d, &d1)) {
    const int p = x->doc_ptr[d], n = x->doc_ptr[d + 1] - p;
    double fs;
    svi_rng r = j->doc_rng[d];
    double fe = ope_doc(j->o, j->beta, j->colsum, x->term + p, x->count + p, n, &r,
                        j->theta + (svi_len)d * K, xs, grad, &fs);
    j->doc_end[d] = r;
    j->f_start[d] = fs;
    j->f_end[d] = fe;
  }
}

int lda_local_ope(const svi_dtm *x, const double *beta, const double *colsum,
                  const ope_opts *o, uint64_t seed, uint64_t stream0, int threads,
                  double *theta, double *f_start, double *f_end, double *scratch,
                  int max_nnz, svi_rng *doc_rng, svi_rng *doc_end) {
  const int K = o->K;
  const svi_len per_thread = (svi_len)max_nnz + K;
  /* A document draws exactly K + T uniforms (one svi_rng_next each) from its
   * block's stream, so the state at which each document starts is known
   * before any is solved. Pass 1 (parallel over blocks, cheap) records these
   * states; pass 2 solves the documents one at a time in parallel, which
   * balances the threads even when a batch has fewer blocks than threads or
   * blocks of unequal cost. The draws, hence theta, are those of a
   * block-by-block run for any thread count. */
  const uint64_t per_doc = (uint64_t)K + (uint64_t)o->T;
  ope_local_job j = {x, beta, colsum, o, seed, stream0, theta, f_start, f_end, scratch,
                     per_thread, max_nnz, doc_rng, doc_end, per_doc, 0, 0, {0, 0}};
  svi_pool_run(threads, ope_local_run, &j);
  return svi_doc_streams_check(x->D, doc_rng, doc_end);
}

void ope_transpose(const svi_dtm *x, int *col_ptr, int *col_doc, double *col_count) {
  const int V = x->V;
  for (int v = 0; v <= V; v++) col_ptr[v] = 0;
  const int nnz = x->doc_ptr[x->D];
  for (int i = 0; i < nnz; i++) col_ptr[x->term[i] + 1]++;
  for (int v = 0; v < V; v++) col_ptr[v + 1] += col_ptr[v];
  /* fill in document order, so each word's entries are sorted by document;
   * col_ptr[v] serves as word v's running insertion point */
  for (int d = 0; d < x->D; d++) {
    for (int i = x->doc_ptr[d]; i < x->doc_ptr[d + 1]; i++) {
      const int v = x->term[i];
      const int pos = col_ptr[v]++;
      col_doc[pos] = d;
      col_count[pos] = x->count[i];
    }
  }
  /* col_ptr[v] now points at the end of word v: shift back */
  for (int v = V; v > 0; v--) col_ptr[v] = col_ptr[v - 1];
  col_ptr[0] = 0;
}

/* lda_summary_ope() and lda_summary_ope_sparse() as jobs of the package's
 * threads: the words in chunks of 64, each thread with its own scratch. */
typedef struct {
  const ope_summary_in *in;
  int mode;
  double *S, *scratch;
  /* the sparse form's */
  const int *top_k;
  const double *top_w, *base, *colsum;
  int L;
  const svi_len *cap;
  int *out_k;
  double *out_v;
  int *out_n;
  double *out_r;
  int *marks;
  int next;
} ope_summary_job;

static void ope_summary_run(void *arg, int tid, int n_threads) {
  ope_summary_job *j = (ope_summary_job *)arg;
  const ope_summary_in *in = j->in;
  const int K = in->K, V = in->V, mode = j->mode;
  double *S = j->S;
  double *s = j->scratch + (svi_len)tid * K;
  int v, v1;
  (void)n_threads;
  while (svi_pool_take(&j->next, 64, V, &v, &v1)) {
    for (; v < v1; v++) {
      const double *b = in->beta + (svi_len)v * K;
      for (int k = 0; k < K; k++) s[k] = 0.0;
      for (int i = in->col_ptr[v]; i < in->col_ptr[v + 1]; i++) {
        const double *th = in->theta + (svi_len)in->col_doc[i] * K;
        const double c = in->col_count[i];
        if (mode == OPE_SUMMARY_THETA) {
          OPE_SIMD
          for (int k = 0; k < K; k++) s[k] += c * th[k];
        } else {
          double xv = 0.0;
          OPE_SIMD_SUM(xv)
          for (int k = 0; k < K; k++) xv += th[k] * b[k];
          if (!(xv > 0.0)) continue; /* a word no topic emits */
          const double w = c / xv;
          OPE_SIMD
          for (int k = 0; k < K; k++) s[k] += w * th[k] * b[k];
        }
      }
      memcpy(S + (svi_len)v * K, s, sizeof(double) * (size_t)K);
    }
  }
}

void lda_summary_ope(const ope_summary_in *in, int mode, int threads, double *S,
                     double *scratch) {
  /* Each word's column is a sum over its documents in document order, so the
   * result does not depend on how words are shared among threads. The sum
   * is taken in the thread's K scratch values and then copied to S's column:
   * word v reads beta's column v only, so S may be beta itself (the
   * summary written over the topics it was made from, no second K x Vb
   * table). */
  ope_summary_job j = {.in = in, .mode = mode, .S = S, .scratch = scratch};
  svi_pool_run(threads, ope_summary_run, &j);
}

/* Document d's `keep` largest proportions th (K) by repeated selection,
 * O(K keep): keep is small. Ties: the lower topic first. taken[k] == d
 * marks the chosen topics, tk and tw get them in the order chosen. */
static void ope_pick(const double *th, int K, int keep, int d, int *taken, int *tk,
                     double *tw) {
  for (int j = 0; j < keep; j++) {
    int best = -1;
    for (int k = 0; k < K; k++) {
      if (taken[k] == d) continue;
      if (best < 0 || th[k] > th[best]) best = k;
    }
    tk[j] = best;
    tw[j] = th[best];
    taken[best] = d;
  }
}

/* L (topic, weight) pairs in increasing topic order (insertion sort). */
static void ope_sort_pairs(int L, int *tk, double *tw) {
  for (int j = 1; j < L; j++) {
    const int v = tk[j];
    const double w = tw[j];
    int i = j - 1;
    for (; i >= 0 && tk[i] > v; i--) {
      tk[i + 1] = tk[i];
      tw[i + 1] = tw[i];
    }
    tk[i + 1] = v;
    tw[i + 1] = w;
  }
}

void ope_doc_top(const double *theta, int K, int D, int L, int rest, uint64_t seed,
                 uint64_t stream, int *top_k, double *top_w, int *taken) {
  const int keep = rest ? L - 1 : L;
  for (int k = 0; k < K; k++) taken[k] = -1;
  for (int d = 0; d < D; d++) {
    const double *th = theta + (svi_len)d * K;
    int *tk = top_k + (svi_len)d * L;
    double *tw = top_w + (svi_len)d * L;
    ope_pick(th, K, keep, d, taken, tk, tw);
    if (rest) {
      /* the rest of the mass on one topic drawn in proportion to its share
       * from the others (increasing topic order), one uniform of the
       * document's own stream */
      long double r = 0.0L;
      for (int k = 0; k < K; k++)
        if (taken[k] != d) r += th[k];
      svi_rng g;
      svi_rng_init(&g, seed, stream + (uint64_t)d);
      const long double target = (long double)svi_rng_unif(&g) * r;
      long double c = 0.0L;
      int pick = -1;
      for (int k = 0; k < K; k++) {
        if (taken[k] == d) continue;
        pick = k; /* (the last of the others if rounding leaves c <= target) */
        c += th[k];
        if (c > target) break;
      }
      tk[keep] = pick;
      tw[keep] = (double)r;
    } else {
      /* divided by their sum, summed as R's sum() (long double) */
      long double sm = 0.0L;
      for (int j = 0; j < L; j++) sm += tw[j];
      const double sd = (double)sm;
      for (int j = 0; j < L; j++) tw[j] = tw[j] / sd;
    }
    ope_sort_pairs(L, tk, tw);
  }
}

void ope_doc_shape(const double *theta, int K, int D, int L, int *top_k, double *top_w,
                   double *base, int *taken) {
  for (int k = 0; k < K; k++) taken[k] = -1;
  for (int d = 0; d < D; d++) {
    const double *th = theta + (svi_len)d * K;
    int *tk = top_k + (svi_len)d * L;
    double *tw = top_w + (svi_len)d * L;
    ope_pick(th, K, L, d, taken, tk, tw);
    long double r = 0.0L;
    for (int k = 0; k < K; k++)
      if (taken[k] != d) r += th[k];
    const double b = (double)(r / (long double)(K - L));
    base[d] = b;
    /* the largest proportions are at least the mean of the others: the
     * excess is >= 0 (exactly so when they tie) */
    for (int j = 0; j < L; j++) tw[j] = tw[j] > b ? tw[j] - b : 0.0;
    ope_sort_pairs(L, tk, tw);
  }
}

/* Word v's column of a sparse summary: the topics it touched (list, n of
 * them; mark[k] == v) in increasing order with their sums s, written to ok,
 * ov. Returns n. */
static int ope_column_out(int K, int v, int n, const int *mark, int *list, const double *s,
                          int *ok, double *ov) {
  if (4 * n > K) {
    n = 0;
    for (int k = 0; k < K; k++)
      if (mark[k] == v) list[n++] = k;
  } else {
    for (int j = 1; j < n; j++) {
      const int t = list[j];
      int i = j - 1;
      for (; i >= 0 && list[i] > t; i--) list[i + 1] = list[i];
      list[i + 1] = t;
    }
  }
  for (int j = 0; j < n; j++) {
    ok[j] = list[j];
    ov[j] = s[list[j]];
  }
  return n;
}

static void ope_summary_sparse_run(void *arg, int tid, int n_threads) {
  ope_summary_job *jb = (ope_summary_job *)arg;
  const ope_summary_in *in = jb->in;
  const int K = in->K, V = in->V, mode = jb->mode, L = jb->L;
  const int *top_k = jb->top_k;
  const double *top_w = jb->top_w, *base = jb->base, *colsum = jb->colsum;
  (void)n_threads;
  {
    double *s = jb->scratch + (svi_len)tid * K;
    int *mark = jb->marks + (svi_len)tid * 2 * K;
    int *list = mark + K;
    for (int k = 0; k < K; k++) mark[k] = -1;
    int v, v1;
    while (svi_pool_take(&jb->next, 64, V, &v, &v1)) for (; v < v1; v++) {
      const double *b = in->beta + (svi_len)v * K;
      int n = 0;
      double r = 0.0;
      for (int i = in->col_ptr[v]; i < in->col_ptr[v + 1]; i++) {
        const int d = in->col_doc[i];
        const int *tk = top_k + (svi_len)d * L;
        const double *tw = top_w + (svi_len)d * L;
        const double c = in->col_count[i];
        double w = c;
        if (mode == OPE_SUMMARY_PHI) {
          /* phi_dvk proportional to (base_d + w_dk) beta_kv; the tail
           * base_d beta_kv is base_d colsum_v times the word's topic column
           * normalised */
          double xv = base ? base[d] * colsum[v] : 0.0;
          for (int j = 0; j < L; j++) xv += tw[j] * b[tk[j]];
          if (!(xv > 0.0)) continue; /* a word none of the topics emits */
          w = c / xv;
          if (base) r += w * base[d] * colsum[v];
        } else if (base) {
          /* theta_dk = base_d + w_dk: the tail c base_d on each of the K
           * topics */
          r += c * base[d] * K;
        }
        for (int j = 0; j < L; j++) {
          const int k = tk[j];
          const double a = mode == OPE_SUMMARY_PHI ? w * tw[j] * b[k] : c * tw[j];
          if (mark[k] != v) {
            mark[k] = v;
            s[k] = 0.0;
            list[n++] = k;
          }
          s[k] += a;
        }
      }
      jb->out_n[v] = ope_column_out(K, v, n, mark, list, s, jb->out_k + jb->cap[v],
                                   jb->out_v + jb->cap[v]);
      if (jb->out_r) jb->out_r[v] = r;
    }
  }
}

void lda_summary_ope_sparse(const ope_summary_in *in, int mode, const int *top_k,
                            const double *top_w, const double *base, const double *colsum,
                            int L, int threads, const svi_len *cap, int *out_k, double *out_v,
                            int *out_n, double *out_r, double *scratch, int *marks) {
  /* As lda_summary_ope(): each word's column (and its tail weight) sums its
   * documents in document order (and each document's topics in increasing
   * order), whatever the threads. marks[k] = the word that last touched
   * topic k; list holds the word's touched topics. */
  ope_summary_job j = {.in = in, .mode = mode, .scratch = scratch, .top_k = top_k,
                       .top_w = top_w, .base = base, .colsum = colsum, .L = L, .cap = cap,
                       .out_k = out_k, .out_v = out_v, .out_n = out_n, .out_r = out_r,
                       .marks = marks};
  svi_pool_run(threads, ope_summary_sparse_run, &j);
}

void ope_rows_normalise(double *X, int K, svi_len V, int r_sums, int divide,
                        long double *acc, double *f) {
  if (r_sums) {
    /* R's rowSums(): long double sums, column after column */
    for (int k = 0; k < K; k++) acc[k] = 0.0L;
    for (svi_len v = 0; v < V; v++) {
      const double *x = X + v * K;
      for (int k = 0; k < K; k++) acc[k] += x[k];
    }
    for (int k = 0; k < K; k++) f[k] = (double)acc[k];
  } else {
    /* lda_topic_totals() */
    for (int k = 0; k < K; k++) f[k] = 0.0;
    for (svi_len v = 0; v < V; v++) {
      const double *x = X + v * K;
      for (int k = 0; k < K; k++) f[k] += x[k];
    }
  }
  if (divide) {
    for (svi_len v = 0; v < V; v++) {
      double *x = X + v * K;
      for (int k = 0; k < K; k++) x[k] = x[k] / f[k];
    }
  } else {
    for (int k = 0; k < K; k++) f[k] = f[k] > 0 ? 1.0 / f[k] : 0.0;
    for (svi_len v = 0; v < V; v++) {
      double *x = X + v * K;
      for (int k = 0; k < K; k++) x[k] = x[k] * f[k];
    }
  }
}

void lda_global_ml(const double *beta, const double *S, int K, int V, double rho,
                   double *out, double *rowsum_scratch) {
  for (int k = 0; k < K; k++) rowsum_scratch[k] = 0.0;
  for (int v = 0; v < V; v++) {
    const double *s = S + (svi_len)v * K;
    for (int k = 0; k < K; k++) rowsum_scratch[k] += s[k];
  }
  /* a topic the batch never touched keeps its old row */
  for (int k = 0; k < K; k++)
    rowsum_scratch[k] = rowsum_scratch[k] > 0.0 ? rho / rowsum_scratch[k] : 0.0;
  for (int v = 0; v < V; v++) {
    const double *s = S + (svi_len)v * K;
    const double *b = beta + (svi_len)v * K;
    double *o = out + (svi_len)v * K;
    for (int k = 0; k < K; k++) {
      const double w = rowsum_scratch[k] > 0.0 ? 1.0 - rho : 1.0;
      o[k] = w * b[k] + rowsum_scratch[k] * s[k];
    }
  }
}
