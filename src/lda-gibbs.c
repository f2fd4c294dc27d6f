/* The "gibbs" local step (Mimno, Hoffman & Blei 2012, Algorithm 1 and
 * Appendix A): per document, initialise each token conditioned on the
 * earlier ones, run `burnin` sweeps, then `samples` saved sweeps whose
 * assignments are averaged into a sparse topic-word summary.
 *
 * A token's conditional (alpha_k + N_dk) exp(E log beta_kw) is split into
 * four parts (see lda-gibbs.h): two constant per batch, sampled by binary
 * search, and two over the topics of the document (with a background topic
 * a fifth, topic 1's extra prior background x N_d, one term), so a draw
 * costs about O(min(T_d log nnz(w), nnz(w)) + T_d + log K) with T_d the
 * number of topics in the document, not O(K). */
#include <math.h>
#include <stdlib.h>
#include "lda-gibbs.h"
#include "pool.h"

/* Each word's part of lda_gibbs_prepare(), the words shared by a job of
 * the package's threads (pool.h), each word's by one thread. */
typedef struct {
  const gibbs_topics *tw;
  const double *alpha;
  const unsigned char *used;
  gibbs_prep *pp;
  double eta;
  int next;
} gibbs_prep_job;

static void gibbs_prep_run(void *arg, int tid, int n) {
  gibbs_prep_job *jb = (gibbs_prep_job *)arg;
  const gibbs_topics *tw = jb->tw;
  gibbs_prep *pp = jb->pp;
  int v, v1;
  (void)tid;
  (void)n;
  while (svi_pool_take(&jb->next, 64, tw->V, &v, &v1)) {
    for (; v < v1; v++) {
      if (jb->used && !jb->used[v]) continue;
      double acc_w = 0.0;
      for (int j = tw->p[v]; j < tw->p[v + 1]; j++) {
        double e = exp(svi_digamma(jb->eta + tw->scale * tw->x[j]));
        pp->d[j] = pp->c[tw->k[j]] * (e - pp->e0);
        acc_w += jb->alpha[tw->k[j]] * pp->d[j];
        pp->cum_wa[j] = acc_w;
      }
    }
  }
}

void lda_gibbs_prepare(const gibbs_topics *tw, const double *alpha,
                       const unsigned char *used, int threads, gibbs_prep *pp) {
  int K = tw->K;
  /* the smoothing of every pair: eta plus the (decayed) shared base */
  double eta = tw->eta + tw->scale * tw->base;
  double Veta = tw->vocab * eta;
  pp->K = K;
  pp->alpha = alpha;
  pp->background = 0.0;
  pp->e0 = exp(svi_digamma(eta));
  double acc = 0.0;
  for (int k = 0; k < K; k++) {
    pp->c[k] = exp(-svi_digamma(Veta + tw->scale * tw->tot[k]));
    acc += alpha[k] * pp->e0 * pp->c[k];
    pp->cum_alpha[k] = acc;
  }
  pp->A = acc;
  gibbs_prep_job j = {tw, alpha, used, pp, eta, 0};
  svi_pool_run(threads, gibbs_prep_run, &j);
}

/* One document's sampler state: topic counts, the list of topics present
 * and the document part of the normaliser, maintained incrementally. */
typedef struct {
  int *ndk, *list, *pos, *cand;
  int nlist;
  double B;
  double bg; /* topic 1's extra prior in this document, background x N_d */
  double *q;
} doc_state;

static void doc_state_init(doc_state *s, int K, int *iscr, double *dscr) {
  s->ndk = iscr;
  s->list = iscr + K;
  s->pos = iscr + 2 * K;
  s->cand = iscr + 3 * K;
  s->q = dscr;
  s->nlist = 0;
  s->B = 0.0;
  s->bg = 0.0;
  for (int k = 0; k < K; k++) s->ndk[k] = 0;
}

static inline void doc_add(doc_state *s, const gibbs_prep *pp, int k) {
  if (s->ndk[k]++ == 0) {
    s->pos[k] = s->nlist;
    s->list[s->nlist++] = k;
  }
  s->B += pp->e0 * pp->c[k];
}

static inline void doc_remove(doc_state *s, const gibbs_prep *pp, int k) {
  if (--s->ndk[k] == 0) {
    int i = s->pos[k], last = s->list[--s->nlist];
    s->list[i] = last;
    s->pos[last] = i;
  }
  s->B -= pp->e0 * pp->c[k];
  if (s->nlist == 0) s->B = 0.0;
}

/* Exact document part from the counts (resets rounding drift). */
static void doc_refresh(doc_state *s, const gibbs_prep *pp) {
  double b = 0.0;
  for (int i = 0; i < s->nlist; i++) {
    int k = s->list[i];
    b += s->ndk[k] * pp->c[k];
  }
  s->B = pp->e0 * b;
}

/* Index of k among the sorted topics kk[lo..hi), or -1. */
static inline int find_topic(const int *kk, int lo, int hi, int k) {
  int end = hi;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (kk[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (lo < end && kk[lo] == k) ? lo : -1;
}

/* First index i in [lo, hi) with cum[i] > u (hi - 1 if none). */
static inline int first_above(const double *cum, int lo, int hi, double u) {
  hi--;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (cum[mid] > u)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Draws a topic for a token of word w; part[0..3] count which part of the
 * normaliser the draw came from, part[4] the entries visited to form the
 * word-document part. */
static int draw_topic(const gibbs_topics *tw, const gibbs_prep *pp, doc_state *s, int w,
                      svi_rng *rng, double *part) {
  int j0 = tw->p[w], j1 = tw->p[w + 1], nw = j1 - j0, nc = 0;
  const int *kk = tw->k;
  /* word-document part: topics in the document and among the word's
   * non-zeros, found from whichever list is shorter */
  double Q = 0.0;
  if (nw > 0 && s->nlist > 0) {
    int lg = 1;
    while ((1 << lg) < nw && lg < 30) lg++;
    if ((double)s->nlist * lg < (double)nw) {
      for (int i = 0; i < s->nlist; i++) {
        int k = s->list[i], j = find_topic(kk, j0, j1, k);
        if (j >= 0) {
          double q = s->ndk[k] * pp->d[j];
          s->cand[nc] = k;
          s->q[nc++] = q;
          Q += q;
        }
      }
      part[4] += (double)s->nlist * lg;
    } else {
      for (int j = j0; j < j1; j++) {
        int k = kk[j];
        if (s->ndk[k] > 0) {
          double q = s->ndk[k] * pp->d[j];
          s->cand[nc] = k;
          s->q[nc++] = q;
          Q += q;
        }
      }
      part[4] += (double)nw;
    }
  }
  double Wa = nw > 0 ? pp->cum_wa[j1 - 1] : 0.0;
  double B = s->B > 0.0 ? s->B : 0.0;
  /* background part: topic 1's extra prior bg times exp(E log beta_1w) =
   * e0 c_1 + d_1w (the word's topics are sorted: topic 1 comes first) */
  double P = 0.0;
  if (s->bg > 0.0) P = s->bg * (pp->e0 * pp->c[0] + (nw > 0 && kk[j0] == 0 ? pp->d[j0] : 0.0));
  double u = svi_rng_unif(rng) * (Q + Wa + B + P + pp->A);
  if (u < Q && nc > 0) {
    part[0] += 1.0;
    for (int i = 0; i < nc; i++) {
      u -= s->q[i];
      if (u < 0.0) return s->cand[i];
    }
    return s->cand[nc - 1];
  }
  u -= Q;
  if (u < Wa) {
    part[1] += 1.0;
    return kk[first_above(pp->cum_wa, j0, j1, u)];
  }
  u -= Wa;
  if (u < B && s->nlist > 0) {
    part[2] += 1.0;
    u /= pp->e0;
    for (int i = 0; i < s->nlist; i++) {
      int k = s->list[i];
      u -= s->ndk[k] * pp->c[k];
      if (u < 0.0) return k;
    }
    return s->list[s->nlist - 1];
  }
  u -= B;
  if (u < P) {
    part[2] += 1.0;
    return 0;
  }
  u -= P;
  part[3] += 1.0;
  return first_above(pp->cum_alpha, 0, pp->K, u);
}

static void sample_document(const svi_dtm *x, const gibbs_topics *tw,
                            const gibbs_prep *pp, int d, int burnin, int samples,
                            svi_len n_tok, svi_rng *rng, const svi_len *tok_off,
                            int *tok_word, int *zcur, int *tok_z, int *iscr, double *dscr,
                            double *stats) {
  int K = tw->K;
  svi_len a = tok_off[d], n = tok_off[d + 1] - a;
  int *words = tok_word + a, *z = zcur + a;
  /* the draw counters live on this thread's stack while the document is
   * sampled: neighbouring documents run on other threads, and their
   * counters in `stats` would share cache lines updated on every draw */
  double part[GIBBS_NSTAT];
  for (int i = 0; i < GIBBS_NSTAT; i++) part[i] = 0.0;
  /* expand the bag of words and shuffle it: the order tokens are visited in */
  svi_len t = 0;
  for (int e = x->doc_ptr[d]; e < x->doc_ptr[d + 1]; e++) {
    int m = (int)floor(x->count[e] + 0.5);
    for (int r = 0; r < m; r++) words[t++] = x->term[e];
  }
  for (svi_len i = n - 1; i > 0; i--) {
    svi_len j = (svi_len)(svi_rng_unif(rng) * (double)(i + 1));
    if (j > i) j = i;
    int tmp = words[i];
    words[i] = words[j];
    words[j] = tmp;
  }
  doc_state s;
  doc_state_init(&s, K, iscr, dscr);
  s.bg = pp->background * (double)n;
  /* initialise each token conditioned on the earlier ones */
  for (svi_len i = 0; i < n; i++) {
    z[i] = draw_topic(tw, pp, &s, words[i], rng, part);
    doc_add(&s, pp, z[i]);
  }
  for (int sweep = 0; sweep < burnin + samples; sweep++) {
    doc_refresh(&s, pp);
    for (svi_len i = 0; i < n; i++) {
      doc_remove(&s, pp, z[i]);
      z[i] = draw_topic(tw, pp, &s, words[i], rng, part);
      doc_add(&s, pp, z[i]);
    }
    if (sweep >= burnin) {
      int *out = tok_z + (svi_len)(sweep - burnin) * n_tok + a;
      for (svi_len i = 0; i < n; i++) out[i] = z[i];
    }
  }
  for (int i = 0; i < GIBBS_NSTAT; i++) stats[GIBBS_NSTAT * (svi_len)d + i] = part[i];
}

/* Draws of document d (see lda_gibbs_local): max(n - 1, 0) for the
 * shuffle, n for the initialisation and n per sweep. */
typedef struct {
  const svi_len *tok_off;
  int sweeps;
} gibbs_draw_ctx;

static uint64_t gibbs_doc_draws(int d, const void *ctx) {
  const gibbs_draw_ctx *c = (const gibbs_draw_ctx *)ctx;
  const svi_len n = c->tok_off[d + 1] - c->tok_off[d];
  return (uint64_t)((n > 0 ? n - 1 : 0) + n * (svi_len)c->sweeps);
}

/* lda_gibbs_local() as a job of the package's threads (pool.h: they sleep,
 * not spin, while R works between minibatches): the blocks' stream starts,
 * a barrier, then the documents one at a time. */
typedef struct {
  const svi_dtm *x;
  const gibbs_topics *tw;
  const gibbs_prep *pp;
  int burnin, samples;
  uint64_t seed, stream0;
  svi_len n_tok;
  const svi_len *tok_off;
  int *tok_word, *zcur, *tok_z, *iscr;
  double *dscr, *stats;
  svi_rng *doc_rng, *doc_end;
  const gibbs_draw_ctx *dc;
  int next_block, next_doc;
  svi_pool_barrier bar;
} gibbs_local_job;

static void gibbs_local_run(void *arg, int tid, int n) {
  gibbs_local_job *jb = (gibbs_local_job *)arg;
  const svi_dtm *x = jb->x;
  const int K = jb->tw->K;
  svi_doc_stream_starts(x->D, jb->seed, jb->stream0, gibbs_doc_draws, jb->dc, jb->doc_rng,
                        &jb->next_block);
  svi_pool_barrier_wait(&jb->bar, n);
  int d, d1;
  while (svi_pool_take(&jb->next_doc, 1, x->D, &d, &d1)) {
    svi_rng rng = jb->doc_rng[d];
    sample_document(x, jb->tw, jb->pp, d, jb->burnin, jb->samples, jb->n_tok, &rng,
                    jb->tok_off, jb->tok_word, jb->zcur, jb->tok_z,
                    jb->iscr + (svi_len)4 * K * tid, jb->dscr + (svi_len)K * tid, jb->stats);
    jb->doc_end[d] = rng;
  }
}

int lda_gibbs_local(const svi_dtm *x, const gibbs_topics *tw, const gibbs_prep *pp,
                     int burnin, int samples, uint64_t seed, uint64_t stream0,
                     int threads, const svi_len *tok_off, int *tok_word, int *zcur,
                     int *tok_z, int *iscr, double *dscr,
                     double *stats, svi_rng *doc_rng, svi_rng *doc_end) {
  svi_len n_tok = tok_off[x->D];
  const gibbs_draw_ctx dc = {tok_off, 1 + burnin + samples};
  /* A document of n tokens draws exactly max(n - 1, 0) uniforms for the
   * shuffle, n for the initialisation and n per sweep, one svi_rng_next
   * each, from its block's stream. Pass 1 (parallel over blocks, cheap)
   * records the state at which each document starts; pass 2 samples the
   * documents one at a time in parallel, which balances the threads over
   * documents of unequal length and batches of few blocks. The draws are
   * those of a block-by-block run for any thread count. */
  gibbs_local_job j = {x, tw, pp, burnin, samples, seed, stream0, n_tok, tok_off, tok_word,
                       zcur, tok_z, iscr, dscr, stats, doc_rng, doc_end, &dc, 0, 0, {0, 0}};
  svi_pool_run(threads, gibbs_local_run, &j);
  return svi_doc_streams_check(x->D, doc_rng, doc_end);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

svi_len lda_gibbs_summary(int K, int V, svi_len n_tok, int samples, const int *tok_word,
                          const int *tok_z, int *p, int *k, double *x, int *cnt,
                          int *touched, int *bucket) {
  /* bucket the saved topics by word (counting sort), then count per word */
  for (int v = 0; v <= V; v++) p[v] = 0;
  for (svi_len t = 0; t < n_tok; t++) p[tok_word[t] + 1] += samples;
  for (int v = 0; v < V; v++) p[v + 1] += p[v];
  /* p now holds the bucket starts; fill using a moving cursor in cnt-free way */
  for (svi_len t = 0; t < n_tok; t++) {
    int v = tok_word[t];
    for (int s = 0; s < samples; s++) bucket[p[v]++] = tok_z[(svi_len)s * n_tok + t];
  }
  /* after filling, p[v] is the end of bucket v, i.e. the start of v + 1 */
  for (int kk = 0; kk < K; kk++) cnt[kk] = 0;
  svi_len nnz = 0, start = 0;
  double inv = 1.0 / samples;
  for (int v = 0; v < V; v++) {
    svi_len end = p[v];
    int nt = 0;
    for (svi_len i = start; i < end; i++) {
      int kk = bucket[i];
      if (cnt[kk]++ == 0) touched[nt++] = kk;
    }
    qsort(touched, (size_t)nt, sizeof(int), cmp_int);
    p[v] = (int)nnz; /* column start in the output */
    for (int i = 0; i < nt; i++) {
      k[nnz] = touched[i];
      x[nnz] = cnt[touched[i]] * inv;
      cnt[touched[i]] = 0;
      nnz++;
    }
    start = end;
  }
  p[V] = (int)nnz;
  return nnz;
}

svi_len lda_gibbs_doc_topic(int K, int D, svi_len n_tok, int samples, const svi_len *tok_off,
                            const int *tok_z, int *p, int *k, double *x, int *cnt,
                            int *touched) {
  for (int kk = 0; kk < K; kk++) cnt[kk] = 0;
  svi_len nnz = 0;
  p[0] = 0;
  for (int d = 0; d < D; d++) {
    int nt = 0;
    for (int s = 0; s < samples; s++) {
      const int *zs = tok_z + (svi_len)s * n_tok;
      for (svi_len t = tok_off[d]; t < tok_off[d + 1]; t++) {
        int kk = zs[t];
        if (cnt[kk]++ == 0) touched[nt++] = kk;
      }
    }
    qsort(touched, (size_t)nt, sizeof(int), cmp_int);
    for (int i = 0; i < nt; i++) {
      k[nnz] = touched[i];
      /* the sum of the saved sweeps' counts over their number, as the
       * average N_dk was before it was kept sparsely */
      x[nnz] = (double)cnt[touched[i]] / samples;
      cnt[touched[i]] = 0;
      nnz++;
    }
    p[d + 1] = (int)nnz;
  }
  return nnz;
}

void lda_gibbs_draw_many(const gibbs_topics *tw, const gibbs_prep *pp, const int *ndk,
                         int w, svi_len n, double bg, svi_rng *rng, int *iscr, double *dscr,
                         double *counts) {
  int K = tw->K;
  doc_state s;
  double part[GIBBS_NSTAT] = {0};
  doc_state_init(&s, K, iscr, dscr);
  s.bg = bg;
  for (int k = 0; k < K; k++)
    for (int r = 0; r < ndk[k]; r++) doc_add(&s, pp, k);
  for (int k = 0; k < K; k++) counts[k] = 0.0;
  for (svi_len i = 0; i < n; i++) counts[draw_topic(tw, pp, &s, w, rng, part)] += 1.0;
}
