/* The "vb" local step of LDA (notes/math.md §2; Hughes & Sudderth, App. D):
 * dense (L >= K) and L-sparse responsibilities over a document's distinct
 * words, the active-set restriction and selection schedule of the sparse
 * step, restart proposals, and the per-document objective terms.
 *
 * Responsibilities are formed in product form: r_dvk is proportional to
 * eb_vk * ep_dk with eb = exp(Elogb) (shifted per word) and
 * ep = exp(psi(alpha + N_dk)) (shifted per document), so the inner loops
 * need no exp or log. Scratch memory comes from R_alloc (owned by R, freed on
 * error or interrupt); no other R API is used, and none inside a parallel
 * region. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <R_ext/Memory.h>
#include <R_ext/Utils.h>
#include "lda.h"
#include "pool.h"

/* One document's solution. */
typedef struct {
  double *N;   /* K: N_dk = sum_v n_dv r_dvk */
  double *lep; /* K: psi(alpha + N_k) - max, the log prior weights behind r */
  double *ep;  /* K: exp(lep), 0 outside the candidate set */
  int *mark;   /* K: 1 for active topics (sparse only) */
  int *act;    /* active topics (sparse only) */
  int nact;
  int *drop; /* topics dropped from the active set at the last update */
  int ndrop;
  int *idx;   /* nw x L topics of each word (sparse only) */
  double *r;  /* nw x L responsibilities (sparse only) */
  double *es; /* nw x L: eb of each word's current topics, kept next to idx so
                 re-weighting reads no row of the weight table (sparse only) */
  int *nsel;  /* nw: number of topics of each word (sparse only) */
  double *Z;  /* nw: normaliser of each word's weights */
  int iters;
  double ld; /* document objective L_d, up to a constant */
} vb_sol;

typedef struct {
  vb_sol a, b;
  double *Nnew; /* K */
  double *p;    /* 2K: candidate weights for selection (and the buffer's eb) */
  int *sel;     /* K: selection scratch */
  int *tried;   /* K: restart candidates already tried */
  int *tried_list; /* K: the topics marked in tried */
  const int *wo;   /* Vb x L: each batch word's L topics of largest eb */
  const double *we; /* Vb x L: their eb, decreasing */
  int *inbuf;      /* K: zero outside select_word() */
} vb_work;

typedef struct {
  int nw;
  const int *w;      /* batch-local word of each distinct term */
  const double *c;   /* counts */
  double Nd;
  double bg; /* topic 1's extra prior weight, background x Nd */
} vb_doc;

static void sol_alloc(vb_sol *s, int K, int max_nw, int Ls) {
  s->N = (double *)R_alloc(K, sizeof(double));
  s->lep = (double *)R_alloc(K, sizeof(double));
  s->ep = (double *)R_alloc(K, sizeof(double));
  s->mark = (int *)R_alloc(K, sizeof(int));
  s->act = (int *)R_alloc(K, sizeof(int));
  s->drop = (int *)R_alloc(K, sizeof(int));
  s->Z = (double *)R_alloc(max_nw > 0 ? max_nw : 1, sizeof(double));
  if (Ls > 0) {
    size_t n = (size_t)(max_nw > 0 ? max_nw : 1) * (size_t)Ls;
    s->idx = (int *)R_alloc(n, sizeof(int));
    s->r = (double *)R_alloc(n, sizeof(double));
    s->es = (double *)R_alloc(n, sizeof(double));
    s->nsel = (int *)R_alloc(max_nw > 0 ? max_nw : 1, sizeof(int));
  } else {
    s->idx = NULL;
    s->r = NULL;
    s->es = NULL;
    s->nsel = NULL;
  }
  memset(s->mark, 0, sizeof(int) * (size_t)K);
}

static void sol_copy(vb_sol *dst, const vb_sol *src, int K, int nw, int L, int dense) {
  memcpy(dst->N, src->N, sizeof(double) * (size_t)K);
  memcpy(dst->lep, src->lep, sizeof(double) * (size_t)K);
  memcpy(dst->ep, src->ep, sizeof(double) * (size_t)K);
  memcpy(dst->Z, src->Z, sizeof(double) * (size_t)nw);
  if (!dense) {
    memcpy(dst->mark, src->mark, sizeof(int) * (size_t)K);
    memcpy(dst->act, src->act, sizeof(int) * (size_t)src->nact);
    memcpy(dst->drop, src->drop, sizeof(int) * (size_t)src->ndrop);
    memcpy(dst->idx, src->idx, sizeof(int) * (size_t)nw * (size_t)L);
    memcpy(dst->es, src->es, sizeof(double) * (size_t)nw * (size_t)L);
    memcpy(dst->r, src->r, sizeof(double) * (size_t)nw * (size_t)L);
    memcpy(dst->nsel, src->nsel, sizeof(int) * (size_t)nw);
  }
  dst->nact = src->nact;
  dst->ndrop = src->ndrop;
  dst->iters = src->iters;
  dst->ld = src->ld;
}

/* The document's Dirichlet parameter of topic k: alpha, and for topic 1
 * (k = 0) alpha + background x N_d. */
static inline double doc_alpha(const lda_vb_opts *o, const vb_doc *d, int k) {
  return k == 0 ? o->alpha + d->bg : o->alpha;
}

/* Prior weights from the current N over the candidate set. first: uniform. */
static void prior_weights(vb_sol *s, const vb_doc *d, const lda_vb_opts *o, int dense, int ban,
                          int first) {
  int K = o->K;
  if (dense) {
    double m = -INFINITY;
    for (int k = 0; k < K; k++) {
      s->lep[k] = first ? 0.0 : svi_digamma(doc_alpha(o, d, k) + s->N[k]);
      if (k != ban && s->lep[k] > m) m = s->lep[k];
    }
    for (int k = 0; k < K; k++) s->lep[k] -= m;
    memcpy(s->ep, s->lep, sizeof(double) * (size_t)K);
    svi_exp_inplace(s->ep, K);
    if (ban >= 0) {
      s->ep[ban] = 0.0;
      s->lep[ban] = 0.0;
    }
  } else {
    double m = -INFINITY;
    for (int a = 0; a < s->nact; a++) {
      int k = s->act[a];
      s->lep[k] = first ? 0.0 : svi_digamma(doc_alpha(o, d, k) + s->N[k]);
      if (s->lep[k] > m) m = s->lep[k];
    }
    for (int a = 0; a < s->nact; a++) {
      int k = s->act[a];
      s->lep[k] -= m;
      s->ep[k] = svi_exp(s->lep[k]);
    }
  }
}

/* Order of the top-L selection: larger weight first, lower topic index first
 * among equal weights (the order svi_select_top() uses). */
static inline int better(double v, int k, double w, int j) { return v > w || (v == w && k < j); }

/* Inserts (v, k) into the sorted buffer (ix, val) of m <= L entries; when the
 * buffer is full its last entry is dropped (the caller checked v beats it). */
static inline void top_insert(double v, int k, double ek, int *m, int L, int *ix, double *val,
                              double *ev) {
  int j = *m;
  if (j == L)
    j--;
  else
    (*m)++;
  while (j > 0 && better(v, k, val[j - 1], ix[j - 1])) {
    val[j] = val[j - 1];
    ix[j] = ix[j - 1];
    ev[j] = ev[j - 1];
    j--;
  }
  val[j] = v;
  ix[j] = k;
  ev[j] = ek;
}

/* Offers topic k with weight v = ek * ep_k to the buffer (ix, val, ev: topic,
 * weight, eb of the topic): kept if the buffer has room or v beats its last
 * entry (which is then dropped); inbuf follows the buffer. The buffer carries
 * each topic's eb so that no row of the (large) weight table is read again. */
static inline void top_offer(double v, int k, double ek, int *m, int L, int *ix, double *val,
                             double *ev, int *inbuf) {
  if (*m == L) {
    if (!better(v, k, val[L - 1], ix[L - 1])) return;
    inbuf[ix[L - 1]] = 0;
  }
  top_insert(v, k, ek, m, L, ix, val, ev);
  inbuf[k] = 1;
}

/* Top-L of the weights e[k] * ep[k] over the active topics (nact > L), for
 * small L: one pass over the active set keeping a sorted buffer of the best L.
 * The buffer is first filled with the word's previous topics (seed), which
 * are usually still the best, so that later candidates rarely pass the cheap
 * test against its last entry. inbuf (K, zero on entry) marks the topics in
 * the buffer (the caller clears it). Measured against a scan of each word's
 * topics in decreasing order of e with an early stop (the former method):
 * on nips_f20 most topics stay active and the L-th best weight is small, so
 * the early stop rarely came and the plain pass is 1.5-2x faster at
 * K = 100-800 (inst/bench/results/lda-sparse.txt, part 1 of 2026-11-22). */
static inline int top_scan(const double *e, const double *ep, const int *act, int nact, int L,
                           int *ix, double *val, double *ev, const int *seed,
                           const double *seed_e, int nseed, int *inbuf) {
  int m = 0;
  for (int q = 0; q < nseed; q++) {
    int k = seed[q];
    top_offer(seed_e[q] * ep[k], k, seed_e[q], &m, L, ix, val, ev, inbuf);
  }
  /* thr: the L-th best weight so far (-1 while the buffer has room; every
   * weight is >= 0), kept in a register between offers */
  double thr = m == L ? val[L - 1] : -1.0;
  for (int a = 0; a < nact; a++) {
    int k = act[a];
    double v = e[k] * ep[k];
    /* the cheap test first: most candidates are below the L-th best (an
     * equal weight can still win on a lower topic index: better() decides) */
    if (v < thr) continue;
    if (inbuf[k]) continue;
    if (m == L && !better(v, k, val[L - 1], ix[L - 1])) continue;
    top_offer(v, k, e[k], &m, L, ix, val, ev, inbuf);
    thr = m == L ? val[L - 1] : -1.0;
  }
  return m;
}

#define TOP_SCAN_MAX_L 32
/* Choose the top-L active topics of word j. */
static inline void select_word(vb_sol *s, int j, const double *e, int L, vb_work *w) {
  int *ix = s->idx + (size_t)j * L;
  int n;
  if (s->nact <= L) {
    n = s->nact;
    for (int a = 0; a < n; a++) ix[a] = s->act[a];
  } else if (L <= TOP_SCAN_MAX_L) {
    /* the word's previous topics that are still active seed the buffer */
    int seed[TOP_SCAN_MAX_L], nseed = 0;
    double seed_e[TOP_SCAN_MAX_L];
    const double *es0 = s->es + (size_t)j * L;
    for (int l = 0; l < s->nsel[j]; l++)
      if (s->mark[ix[l]]) {
        seed_e[nseed] = es0[l];
        seed[nseed++] = ix[l];
      }
    double *ev = w->p + L;
    int m = top_scan(e, s->ep, s->act, s->nact, L, ix, w->p, ev, seed, seed_e, nseed, w->inbuf);
    double *es = s->es + (size_t)j * L;
    for (int l = 0; l < m; l++) {
      w->inbuf[ix[l]] = 0;
      es[l] = ev[l];
    }
    s->nsel[j] = m;
    return;
  } else {
    for (int a = 0; a < s->nact; a++) w->p[a] = e[s->act[a]] * s->ep[s->act[a]];
    svi_select_top(w->p, s->nact, L, w->sel);
    n = L;
    for (int l = 0; l < L; l++) ix[l] = s->act[w->sel[l]];
  }
  s->nsel[j] = n;
  double *es = s->es + (size_t)j * L;
  for (int l = 0; l < n; l++) es[l] = e[ix[l]];
}

/* axpy with four independent lanes, so the compiler can keep several
 * multiply-adds in flight (R builds with -O2); dot products: svi_dot4. */
static inline void axpy4(double f, const double *x, double *y, int n) {
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    y[k] += f * x[k];
    y[k + 1] += f * x[k + 1];
    y[k + 2] += f * x[k + 2];
    y[k + 3] += f * x[k + 3];
  }
  for (; k < n; k++) y[k] += f * x[k];
}

/* One sweep over the document's words: new responsibilities given the prior
 * weights in s, new counts in w->Nnew. Returns max |N_new - N| over the
 * candidate topics and updates N, the active set and the drop list. */
static double sweep(vb_sol *s, const vb_doc *d, const double *eb, const lda_vb_opts *o,
                    int dense, int select, vb_work *w) {
  int K = o->K, L = o->L;
  double *Nnew = w->Nnew;
  double delta = 0;
  if (dense) {
    memset(Nnew, 0, sizeof(double) * (size_t)K);
    const double *ep = s->ep;
    for (int j = 0; j < d->nw; j++) {
      const double *e = eb + (size_t)d->w[j] * K;
      double Z = svi_dot4(e, ep, K);
      if (!(Z > 0)) Z = INFINITY; /* every weight underflowed: drop the word */
      s->Z[j] = Z;
      axpy4(d->c[j] / Z, e, Nnew, K);
    }
    for (int k = 0; k < K; k++) {
      double v = Nnew[k] * ep[k];
      double dk = fabs(v - s->N[k]);
      if (dk > delta) delta = dk;
      s->N[k] = v;
    }
    return delta;
  }
  /* sparse: topics dropped at the last update now lose their last mass;
   * without drops since the last sweep every word's topics are still active */
  int compact = s->ndrop > 0;
  for (int a = 0; a < s->ndrop; a++) s->N[s->drop[a]] = 0.0;
  s->ndrop = 0;
  for (int a = 0; a < s->nact; a++) Nnew[s->act[a]] = 0.0;
  if (select == 2 && w->wo && s->nact == K) {
    /* first sweep, uniform prior: every word's top L is precomputed */
    for (int j = 0; j < d->nw; j++) {
      memcpy(s->idx + (size_t)j * L, w->wo + (size_t)d->w[j] * L, sizeof(int) * (size_t)L);
      memcpy(s->es + (size_t)j * L, w->we + (size_t)d->w[j] * L, sizeof(double) * (size_t)L);
      s->nsel[j] = L;
    }
    select = 0;
  }
  for (int j = 0; j < d->nw; j++) {
    const double *e = eb + (size_t)d->w[j] * K;
    /* a selecting sweep reads the next word's row of weights in index order
     * of its active topics: fetch it ahead (measured 5-8% of the step) */
    if (select && j + 1 < d->nw) SVI_PREFETCH_COLUMN(eb + (size_t)d->w[j + 1] * K, K, 0);
    int *ix = s->idx + (size_t)j * L;
    double *rr = s->r + (size_t)j * L;
    double *es = s->es + (size_t)j * L;
    if (select) {
      select_word(s, j, e, L, w);
    } else {
      /* re-weight the current topics, keeping only active ones */
      if (compact) {
        int n = 0;
        for (int l = 0; l < s->nsel[j]; l++)
          if (s->mark[ix[l]]) {
            es[n] = es[l];
            ix[n++] = ix[l];
          }
        s->nsel[j] = n;
        if (n == 0) select_word(s, j, e, L, w);
      }
    }
    int n = s->nsel[j];
    double Z = 0;
    for (int l = 0; l < n; l++) {
      rr[l] = es[l] * s->ep[ix[l]];
      Z += rr[l];
    }
    if (!(Z > 0)) Z = INFINITY;
    s->Z[j] = Z;
    double inv = 1.0 / Z, c = d->c[j];
    for (int l = 0; l < n; l++) {
      rr[l] *= inv;
      Nnew[ix[l]] += c * rr[l];
    }
  }
  int na = 0;
  for (int a = 0; a < s->nact; a++) {
    int k = s->act[a];
    double dk = fabs(Nnew[k] - s->N[k]);
    if (dk > delta) delta = dk;
    s->N[k] = Nnew[k];
    if (Nnew[k] > o->active_eps) {
      s->act[na++] = k;
    } else {
      s->mark[k] = 0;
      s->drop[s->ndrop++] = k;
    }
  }
  s->nact = na;
  return delta;
}

/* Iterations 1..n_iter of the coordinate ascent from the current state. */
static void run(vb_sol *s, const vb_doc *d, const double *eb, const lda_vb_opts *o, int dense,
                int ban, int n_iter, vb_work *w) {
  for (int it = 1; it <= n_iter; it++) {
    prior_weights(s, d, o, dense, ban, 0);
    /* select_every: 1 = every iteration; 2 = a restart proposal, which
     * selects on its first iteration (to replace the removed topic) and
     * then only re-weights, as it runs a few iterations */
    int select = o->select_every == 2 ? it == 1 : (o->select_every || it <= 5 || it % 10 == 0);
    double delta = sweep(s, d, eb, o, dense, select, w);
    s->iters = it;
    if (delta < o->tol) break;
  }
}

/* ln Gamma(a_k + N) - ln Gamma(a_k) (la: ln Gamma(alpha)). */
static inline double dirichlet_term(const lda_vb_opts *o, const vb_doc *d, int k, double N,
                                    double la) {
  if (k == 0 && d->bg > 0) return svi_lgamma(o->alpha + d->bg + N) - svi_lgamma(o->alpha + d->bg);
  return svi_lgamma(o->alpha + N) - la;
}

/* ln Gamma(sum a) - ln Gamma(sum a + N_d) + sum_k [ln Gamma(a_k + N_k) -
 * ln Gamma(a_k)] with a the document's Dirichlet parameters (topics with
 * N_k = 0 add nothing). */
static double dirichlet_part(const vb_sol *s, const lda_vb_opts *o, int dense, const vb_doc *d) {
  int K = o->K;
  double la = svi_lgamma(o->alpha), tot = K * o->alpha + d->bg;
  double out = svi_lgamma(tot) - svi_lgamma(tot + d->Nd);
  if (dense) {
    for (int k = 0; k < K; k++)
      if (s->N[k] > 0) out += dirichlet_term(o, d, k, s->N[k], la);
  } else {
    for (int a = 0; a < s->nact; a++) out += dirichlet_term(o, d, s->act[a], s->N[s->act[a]], la);
    for (int a = 0; a < s->ndrop; a++)
      if (s->N[s->drop[a]] > 0) out += dirichlet_term(o, d, s->drop[a], s->N[s->drop[a]], la);
  }
  return out;
}

/* L_d up to the per-word shifts of Elogb (constant across solutions):
 * sum_v n_dv sum_k r (Elogb - ln r) = sum_v n_dv (ln Z_v - sum_k r_k lep_k). */
static double doc_objective(const vb_sol *s, const vb_doc *d, const double *eb,
                            const lda_vb_opts *o, int dense) {
  int K = o->K, L = o->L;
  double out = dirichlet_part(s, o, dense, d);
  for (int j = 0; j < d->nw; j++) {
    if (!isfinite(s->Z[j])) continue;
    double t = 0;
    if (dense) {
      const double *e = eb + (size_t)d->w[j] * K;
      for (int k = 0; k < K; k++)
        if (s->ep[k] > 0) t += e[k] * s->ep[k] * s->lep[k];
      t /= s->Z[j];
    } else {
      const int *ix = s->idx + (size_t)j * L;
      const double *rr = s->r + (size_t)j * L;
      for (int l = 0; l < s->nsel[j]; l++) t += rr[l] * s->lep[ix[l]];
    }
    out += d->c[j] * (log(s->Z[j]) - t);
  }
  return out;
}

/* H_d: the document's ELBO terms other than sum n r Elogb (which the topic
 * terms hold through S): Dirichlet part minus sum_v n_dv sum_k r ln r. */
static double doc_entropy_part(const vb_sol *s, const vb_doc *d, const double *eb,
                               const double *le, const lda_vb_opts *o, int dense) {
  int K = o->K, L = o->L;
  double out = dirichlet_part(s, o, dense, d);
  for (int j = 0; j < d->nw; j++) {
    if (!isfinite(s->Z[j])) continue;
    double t = 0;
    if (dense) {
      const double *e = eb + (size_t)d->w[j] * K;
      const double *l = le + (size_t)d->w[j] * K;
      double lz = log(s->Z[j]);
      for (int k = 0; k < K; k++) {
        double rk = e[k] * s->ep[k] / s->Z[j];
        if (rk > 0) t += rk * (l[k] + s->lep[k] - lz);
      }
    } else {
      const double *rr = s->r + (size_t)j * L;
      for (int l = 0; l < s->nsel[j]; l++)
        if (rr[l] > 0) t += rr[l] * log(rr[l]);
    }
    out -= d->c[j] * t;
  }
  return out;
}

/* Every topic a candidate of the document (sparse step), nothing dropped. */
static void all_candidates(vb_sol *s, const vb_doc *d, int K, int dense) {
  s->ndrop = 0;
  if (dense) return;
  for (int k = 0; k < K; k++) {
    s->act[k] = k;
    s->mark[k] = 1;
  }
  s->nact = K;
  memset(s->nsel, 0, sizeof(int) * (size_t)d->nw);
}

/* Fresh start: r from Elogb alone, then iterate to convergence. */
static void doc_fresh(vb_sol *s, const vb_doc *d, const double *eb, const lda_vb_opts *o,
                      int dense, vb_work *w) {
  int K = o->K;
  memset(s->N, 0, sizeof(double) * (size_t)K);
  all_candidates(s, d, K, dense);
  prior_weights(s, d, o, dense, -1, 1);
  sweep(s, d, eb, o, dense, 2, w);
  s->iters = 0;
  run(s, d, eb, o, dense, -1, o->max_iter, w);
}

/* Warm start (issue 20): N from the document's previous state N0, every
 * topic a candidate, then iterate to convergence; the first iteration
 * selects each word's topics under the prior weights of N0. */
static void doc_warm(vb_sol *s, const vb_doc *d, const double *eb, const lda_vb_opts *o,
                     int dense, vb_work *w, const double *N0) {
  int K = o->K;
  memcpy(s->N, N0, sizeof(double) * (size_t)K);
  all_candidates(s, d, K, dense);
  s->iters = 0;
  run(s, d, eb, o, dense, -1, o->max_iter, w);
}

/* Number of restart candidates: topics with N_k > tol. */
static int next_candidate(const vb_sol *s, const lda_vb_opts *o, int dense, const int *tried,
                          int *n_big) {
  int K = o->K, best = -1, nb = 0;
  double bv = INFINITY;
  if (dense) {
    for (int k = 0; k < K; k++) {
      if (s->N[k] <= o->tol) continue;
      nb++;
      if (!tried[k] && s->N[k] < bv) {
        bv = s->N[k];
        best = k;
      }
    }
  } else {
    for (int a = 0; a < s->nact; a++) {
      int k = s->act[a];
      if (s->N[k] <= o->tol) continue;
      nb++;
      if (!tried[k] && (s->N[k] < bv || (s->N[k] == bv && k < best))) {
        bv = s->N[k];
        best = k;
      }
    }
  }
  *n_big = nb;
  return best;
}

/* Restart proposal on topic kb: copy cur into prop, remove kb, iterate. */
static void propose(vb_sol *prop, const vb_sol *cur, int kb, const vb_doc *d, const double *eb,
                    const lda_vb_opts *o, int dense, vb_work *w) {
  sol_copy(prop, cur, o->K, d->nw, o->L, dense);
  if (!dense) {
    int na = 0;
    for (int a = 0; a < prop->nact; a++)
      if (prop->act[a] != kb) prop->act[na++] = prop->act[a];
    prop->nact = na;
    prop->mark[kb] = 0;
    prop->drop[prop->ndrop++] = kb;
    /* every word re-selects among the remaining topics on the first sweep */
  }
  lda_vb_opts po = *o;
  if (!o->select_every) po.select_every = 2;
  run(prop, d, eb, &po, dense, kb, o->restart_iter, w);
}

typedef struct {
  int *idx;
  double *r;
  int *nsel;
  double *Z;
  double *ep;
} chunk_buf;

static void doc_step(const svi_dtm *x, const int *loc, int dd, int d0, const double *eb,
                     const double *le, const lda_vb_opts *o, int dense, vb_work *w,
                     lda_vb_out *out, chunk_buf *cb, int e0) {
  int K = o->K, L = o->L;
  int start = x->doc_ptr[dd], end = x->doc_ptr[dd + 1];
  vb_doc d;
  d.nw = end - start;
  d.w = loc + start;
  d.c = x->count + start;
  d.Nd = 0;
  for (int j = 0; j < d.nw; j++) d.Nd += d.c[j];
  d.bg = o->background * d.Nd;
  vb_sol *cur = &w->a, *prop = &w->b;
  int tries = 0, accepts = 0;
  if (d.nw == 0) {
    memset(cur->N, 0, sizeof(double) * (size_t)K);
    cur->nact = 0;
    cur->ndrop = 0;
    cur->iters = 0;
    if (!dense) memset(cur->mark, 0, sizeof(int) * (size_t)K);
    for (int k = 0; k < K; k++) cur->ep[k] = 0;
  } else {
    const double *N0 = o->warm ? o->warm + (size_t)dd * K : NULL;
    int warm = 0;
    if (N0)
      for (int k = 0; k < K && !warm; k++) warm = N0[k] > 0;
    if (warm)
      doc_warm(cur, &d, eb, o, dense, w, N0);
    else
      doc_fresh(cur, &d, eb, o, dense, w);
    if (o->restart_max > 0) {
      cur->ld = doc_objective(cur, &d, eb, o, dense);
      int n_tried = 0;
      int *tried_list = w->tried_list;
      for (int t = 0; t < o->restart_max; t++) {
        int n_big;
        int kb = next_candidate(cur, o, dense, w->tried, &n_big);
        if (kb < 0 || n_big < 2) break;
        w->tried[kb] = 1;
        tried_list[n_tried++] = kb;
        propose(prop, cur, kb, &d, eb, o, dense, w);
        prop->ld = doc_objective(prop, &d, eb, o, dense);
        tries++;
        if (prop->ld > cur->ld) {
          vb_sol *tmp = cur;
          cur = prop;
          prop = tmp;
          accepts++;
        }
      }
      for (int t = 0; t < n_tried; t++) w->tried[tried_list[t]] = 0;
    }
  }
  if (out->doc_topic) {
    double *nd = out->doc_topic + (size_t)dd * K;
    if (dense) {
      memcpy(nd, cur->N, sizeof(double) * (size_t)K);
    } else {
      memset(nd, 0, sizeof(double) * (size_t)K);
      for (int a = 0; a < cur->nact; a++) nd[cur->act[a]] = cur->N[cur->act[a]];
      for (int a = 0; a < cur->ndrop; a++) nd[cur->drop[a]] = cur->N[cur->drop[a]];
    }
  }
  if (out->doc_obj)
    out->doc_obj[dd] = d.nw ? doc_entropy_part(cur, &d, eb, le, o, dense) : 0.0;
  if (out->iters) out->iters[dd] = cur->iters;
  if (out->tries) out->tries[dd] = tries;
  if (out->accepts) out->accepts[dd] = accepts;
  if (out->acc) {
    size_t off = (size_t)(start - e0);
    if (dense) {
      memcpy(cb->Z + off, cur->Z, sizeof(double) * (size_t)d.nw);
      memcpy(cb->ep + (size_t)(dd - d0) * K, cur->ep, sizeof(double) * (size_t)K);
    } else {
      memcpy(cb->nsel + off, cur->nsel, sizeof(int) * (size_t)d.nw);
      memcpy(cb->idx + off * L, cur->idx, sizeof(int) * (size_t)d.nw * L);
      memcpy(cb->r + off * L, cur->r, sizeof(double) * (size_t)d.nw * L);
    }
  } else if (out->ws) {
    /* the entry's slots in word order: disjoint between entries, so the
     * threads write them without a reduction */
    lda_vb_wordsum *ws = out->ws;
    for (int j = 0; j < d.nw; j++) {
      size_t sl = (size_t)ws->slot[start + j];
      int ns = cur->nsel[j];
      const int *ix = cur->idx + (size_t)j * L;
      const double *rr = cur->r + (size_t)j * L;
      double c = d.c[j];
      ws->nsel[sl] = ns;
      for (int l = 0; l < ns; l++) {
        ws->idx[sl * L + l] = ix[l];
        ws->val[sl * L + l] = c * rr[l];
      }
    }
  }
  /* keep the swapped pointers' structs in place for the next document */
  if (cur != &w->a) {
    vb_sol tmp = w->a;
    w->a = w->b;
    w->b = tmp;
  }
}
/* The end (exclusive) of the chunk of documents starting at d0: as many
 * documents as fit the memory budget of the per-entry buffers, at least one.
 * Writes the chunk's number of (document, word) entries to *ent. */
static int chunk_end(const svi_dtm *x, int d0, int dense, size_t per_entry, int K,
                     size_t budget, size_t *ent) {
  int d1 = d0;
  size_t e = 0;
  while (d1 < x->D) {
    size_t nw = (size_t)(x->doc_ptr[d1 + 1] - x->doc_ptr[d1]);
    size_t cost = (e + nw) * per_entry + (dense ? (size_t)(d1 - d0 + 1) * K : 0);
    if (d1 > d0 && cost > budget) break;
    e += nw;
    d1++;
  }
  *ent = e;
  return d1;
}


void lda_vb_wordsum_slots(const svi_dtm *x, const int *loc, int Vb, lda_vb_wordsum *ws) {
  svi_len nnz = x->doc_ptr[x->D];
  int *p = ws->word_ptr;
  memset(p, 0, sizeof(int) * ((size_t)Vb + 1));
  for (svi_len e = 0; e < nnz; e++) p[loc[e] + 1]++;
  for (int w = 0; w < Vb; w++) p[w + 1] += p[w];
  /* entries in document order take the next rank of their word */
  int *next = (int *)R_alloc(Vb > 0 ? Vb : 1, sizeof(int));
  memcpy(next, p, sizeof(int) * (size_t)Vb);
  for (svi_len e = 0; e < nnz; e++) ws->slot[e] = next[loc[e]]++;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int lda_vb_word_sums(const lda_vb_wordsum *ws, int L, int w, double *row, int *touched,
                     int *mark) {
  int n = 0;
  for (int sl = ws->word_ptr[w]; sl < ws->word_ptr[w + 1]; sl++) {
    const int *ix = ws->idx + (size_t)sl * L;
    const double *v = ws->val + (size_t)sl * L;
    for (int l = 0; l < ws->nsel[sl]; l++) {
      int k = ix[l];
      if (!mark[k]) {
        mark[k] = 1;
        touched[n++] = k;
      }
      row[k] += v[l];
    }
  }
  qsort(touched, (size_t)n, sizeof(int), cmp_int);
  for (int t = 0; t < n; t++) mark[touched[t]] = 0;
  return n;
}

/* The parts of a minibatch's local step that the threads share, each as a
 * job of the package's threads (pool.h: they sleep, not spin, while R works
 * between minibatches). Every word's top topics and every document are
 * computed by one thread from inputs no other writes, so the results do
 * not depend on the threads. */
typedef struct {
  const double *eb;
  int K, T, Vb;
  int *wo;
  double *we;
  int next;
} vb_top_job;

/* Each batch word's T topics of largest weight, in decreasing order: one
 * pass over the word's K weights with a sorted buffer of the best T (the
 * order of better(): the top T of a quickselect followed by a sort, in a
 * third of the time at K = 400, T = 8). */
static void vb_top_run(void *arg, int tid, int n) {
  vb_top_job *j = (vb_top_job *)arg;
  const int K = j->K, T = j->T;
  int lo, hi;
  (void)tid;
  (void)n;
  while (svi_pool_take(&j->next, 64, j->Vb, &lo, &hi)) {
    for (int v = lo; v < hi; v++) {
      const double *e = j->eb + (size_t)v * K;
      int *ix = j->wo + (size_t)v * T;
      double *val = j->we + (size_t)v * T;
      double ev[TOP_SCAN_MAX_L];
      int m = 0;
      double thr = -1.0;
      for (int k = 0; k < K; k++) {
        double x = e[k];
        if (x < thr) continue;
        if (m == T && !better(x, k, val[T - 1], ix[T - 1])) continue;
        top_insert(x, k, x, &m, T, ix, val, ev);
        thr = m == T ? val[T - 1] : -1.0;
      }
    }
  }
}

typedef struct {
  const svi_dtm *x;
  const int *loc;
  int d0, d1, nb;
  const double *eb, *le;
  const lda_vb_opts *o;
  int dense;
  vb_work *W;
  lda_vb_out *out;
  chunk_buf *cb;
  int e0;
  int next;
} vb_doc_job;

/* The documents of a chunk, a block of SVI_BLOCK at a time, thread tid
 * with its own work space W[tid]. */
static void vb_doc_run(void *arg, int tid, int n) {
  vb_doc_job *j = (vb_doc_job *)arg;
  vb_work *w = &j->W[tid];
  int b, b1;
  (void)n;
  while (svi_pool_take(&j->next, 1, j->nb, &b, &b1)) {
    int lo = j->d0 + b * SVI_BLOCK, hi = lo + SVI_BLOCK;
    if (hi > j->d1) hi = j->d1;
    for (int dd = lo; dd < hi; dd++)
      doc_step(j->x, j->loc, dd, j->d0, j->eb, j->le, j->o, j->dense, w, j->out, j->cb, j->e0);
  }
}

int lda_vb_batch(const svi_dtm *x, const int *loc, int Vb, const double *eb, const double *le,
                 const lda_vb_opts *o_in, int threads, lda_vb_out *out) {
  lda_vb_opts o = *o_in;
  int K = o.K;
  int dense = o.L >= K;
  if (dense) o.L = K;
  int L = o.L, Ls = dense ? 0 : L;
  int D = x->D;
  int max_nw = 0;
  for (int d = 0; d < D; d++) {
    int nw = x->doc_ptr[d + 1] - x->doc_ptr[d];
    if (nw > max_nw) max_nw = nw;
  }
  if (threads < 1) threads = 1;
  vb_work *W = (vb_work *)R_alloc(threads, sizeof(vb_work));
  for (int t = 0; t < threads; t++) {
    sol_alloc(&W[t].a, K, max_nw, Ls);
    sol_alloc(&W[t].b, K, max_nw, Ls);
    W[t].Nnew = (double *)R_alloc(K, sizeof(double));
    W[t].p = (double *)R_alloc((size_t)2 * K, sizeof(double));
    W[t].sel = (int *)R_alloc(K, sizeof(int));
    W[t].tried = (int *)R_alloc(K, sizeof(int));
    W[t].tried_list = (int *)R_alloc(K, sizeof(int));
    W[t].inbuf = (int *)R_alloc(K, sizeof(int));
    memset(W[t].inbuf, 0, sizeof(int) * (size_t)K);
    memset(W[t].tried, 0, sizeof(int) * (size_t)K);
  }
  if (!dense && L <= TOP_SCAN_MAX_L && Vb > 0) {
    /* each batch word's L topics of largest weight, in decreasing order:
     * the selection of the first sweep, whose prior weights are uniform */
    int T = L;
    int *wo = (int *)R_alloc((size_t)Vb * T, sizeof(int));
    double *we = (double *)R_alloc((size_t)Vb * T, sizeof(double));
    vb_top_job tj = {eb, K, T, Vb, wo, we, 0};
    svi_pool_run(threads, vb_top_run, &tj);
    for (int t = 0; t < threads; t++) {
      W[t].wo = wo;
      W[t].we = we;
    }
  } else {
    for (int t = 0; t < threads; t++) {
      W[t].wo = NULL;
      W[t].we = NULL;
    }
  }
  /* Chunks of documents bound the memory of the per-entry buffers; results
   * do not depend on the chunking since the summary is reduced serially in
   * document order. */
  const size_t budget = (size_t)1 << 22;
  size_t per_entry = dense ? 1 : (size_t)L;
  size_t max_entries = 0, max_docs = 0;
  {
    int d0 = 0;
    while (d0 < D) {
      size_t ent = 0;
      int d1 = chunk_end(x, d0, dense, per_entry, K, budget, &ent);
      if (ent > max_entries) max_entries = ent;
      if ((size_t)(d1 - d0) > max_docs) max_docs = (size_t)(d1 - d0);
      d0 = d1;
    }
  }
  chunk_buf cb = {NULL, NULL, NULL, NULL, NULL};
  if (out->acc) {
    size_t me = max_entries > 0 ? max_entries : 1;
    if (dense) {
      cb.Z = (double *)R_alloc(me, sizeof(double));
      cb.ep = (double *)R_alloc(max_docs * (size_t)K + 1, sizeof(double));
    } else {
      cb.nsel = (int *)R_alloc(me, sizeof(int));
      cb.idx = (int *)R_alloc(me * (size_t)L, sizeof(int));
      cb.r = (double *)R_alloc(me * (size_t)L, sizeof(double));
    }
  }
  int d0 = 0;
  while (d0 < D) {
    size_t ent = 0;
    int d1 = chunk_end(x, d0, dense, per_entry, K, budget, &ent);
    int e0 = x->doc_ptr[d0];
    int nd = d1 - d0;
    int nb = (int)svi_n_blocks(nd);
    vb_doc_job dj = {x, loc, d0, d1, nb, eb, le, &o, dense, W, out, &cb, e0, 0};
    svi_pool_run(threads, vb_doc_run, &dj);
    /* summary of the chunk, in document order */
    if (out->acc) {
      for (int dd = d0; dd < d1; dd++) {
        int s = x->doc_ptr[dd], e = x->doc_ptr[dd + 1];
        if (dense) {
          const double *ep = cb.ep + (size_t)(dd - d0) * K;
          for (int j = s; j < e; j++) {
            double f = x->count[j] / cb.Z[j - e0];
            double *row = out->acc + (size_t)loc[j] * K;
            for (int k = 0; k < K; k++) row[k] += f * ep[k];
          }
        } else {
          for (int j = s; j < e; j++) {
            size_t off = (size_t)(j - e0);
            const int *ix = cb.idx + off * L;
            const double *rr = cb.r + off * L;
            double c = x->count[j];
            double *row = out->acc + (size_t)loc[j] * K;
            for (int l = 0; l < cb.nsel[off]; l++) row[ix[l]] += c * rr[l];
          }
        }
      }
    }
    R_CheckUserInterrupt();
    d0 = d1;
  }
  return 0;
}

/* A word's K log-weights l (their maximum m) shifted so the largest is 0 and
 * floored, and their exponentials in e. */
static void word_weights_finish(double *l, double m, double *e, int K) {
  for (int k = 0; k < K; k++) {
    l[k] -= m;
    if (l[k] < -700) l[k] = -700; /* keeps exp() normal; weight ~1e-304 */
  }
  memcpy(e, l, sizeof(double) * (size_t)K);
  svi_exp_inplace(e, K);
}

/* The batch words' log-weights and weights (lda_topic_weights()) as a job
 * of the package's threads: each word's by one thread. */
typedef struct {
  const double *X;
  int K;
  const int *words;
  int Vb, mode;
  double eta, scale;
  const double *psirs;
  double *le, *eb, *scratch;
  int next;
} vb_weights_job;

static void vb_weights_run(void *arg, int tid, int n) {
  vb_weights_job *j = (vb_weights_job *)arg;
  const int K = j->K;
  int lo, hi;
  (void)n;
  while (svi_pool_take(&j->next, 16, j->Vb, &lo, &hi)) {
    for (int w = lo; w < hi; w++) {
      const double *row = j->X + (svi_len)j->words[w] * K;
      double *l = j->le ? j->le + (svi_len)w * K : j->scratch + (size_t)tid * K;
      double m = -INFINITY;
      for (int k = 0; k < K; k++) {
        double v = j->mode == 0 ? svi_digamma(j->eta + j->scale * row[k]) - j->psirs[k]
                                : log(row[k] > 1e-300 ? row[k] : 1e-300);
        l[k] = v;
        if (v > m) m = v;
      }
      word_weights_finish(l, m, j->eb + (svi_len)w * K, K);
    }
  }
}

void lda_topic_weights(const double *X, int K, int V, const int *words, int Vb, int mode,
                       double eta, double scale, const double *xtot, int threads,
                       double *le, double *eb) {
  double *psirs = NULL;
  if (mode == 0) {
    /* Dirichlet parameters lambda = eta + scale X (lambda itself: eta 0,
     * scale 1, the same arithmetic), row sums V eta + scale xtot */
    if (xtot == NULL) {
      double *rs = (double *)R_alloc(K, sizeof(double));
      lda_topic_totals(X, K, V, rs);
      xtot = rs;
    }
    psirs = (double *)R_alloc(K, sizeof(double));
    for (int k = 0; k < K; k++) psirs[k] = svi_digamma(V * eta + scale * xtot[k]);
  }
  double *scratch = le ? NULL : (double *)R_alloc((size_t)(threads > 0 ? threads : 1) * K, sizeof(double));
  vb_weights_job j = {X, K, words, Vb, mode, eta, scale, psirs, le, eb, scratch, 0};
  svi_pool_run(threads, vb_weights_run, &j);
}
