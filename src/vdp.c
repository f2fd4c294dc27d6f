/* Accelerated variational Dirichlet process Gaussian mixture (Fast-VDP;
 * Kurihara, Welling & Vlassis 2007), and VDP when no tree is given.
 *
 * Nested truncation: components 1..T are free, components beyond T stay at
 * their priors, and every item keeps mass on that infinite tail (eq. 6).
 * "Items" are the units that share one q(z): outer nodes of the kd-tree
 * (id >= 0) or single points (id < 0 encodes point -id - 1). VDP is the same
 * code with every point an item.
 *
 * Free energy. For responsibilities q and any global parameters,
 *   F = sum_k [KL_beta(k) + KL_nw(k) + H_k - N_k E ln pi_k - ELL_k]
 *       + H_tail - N_tail E ln pi_tail - ELL_tail
 * where, per component, N_k = sum_A |A| q_Ak, H_k = sum_A |A| q_Ak ln q_Ak,
 * ELL_k the expected log-likelihood of its weighted statistics, and
 * E ln pi_tail = sum_{j<=T} E ln(1 - v_j) + ln sum_{i>T} prior stick products
 * (eq. 6). At optimal q this is eq. 5 (eq. 19 on the tree). Because it needs
 * only per-component statistics, F is evaluated in O(T D^3) after any step,
 * and split candidates are scored by swapping one component's statistics.
 *
 * The algorithm (section 7): T = 1 with the tree expanded initial_depth
 * levels; then repeatedly (2) draw `candidates` components by size, split
 * each across its principal axis after expanding one level the nodes it
 * owns (through the mean, as in the paper; by default, when no such split
 * pays, also at the items' weighted two-means threshold: try_split), update
 * only the two children (items with negligible mass
 * on it keep a hard side), and keep the best split if it lowers F by more
 * than tol N nats (tested on the candidate's F; the full update can only
 * lower it further); (3) update everything to convergence (F dropping by no
 * more than update_tol N per cycle), reordering components by size when that
 * lowers F, refining the tree every third cycle and once more at the globals
 * where the updates settle (refine_tree). Departures from the paper, each
 * keeping F exact for the q in use: the tree splits on principal directions
 * and is built lazily below its buckets (child_of, build_children; the nodes
 * and statistics are those of the whole tree built at once); node expansion
 * adds a spread test (an estimate of the free energy a node's points would
 * gain from q of their own) to the paper's child test (expand_tree); when
 * no split pays, a pair of splits is tried before the search stops
 * (try_pair); after growth stops, small components are tried for deletion
 * (try_deletes).
 *
 * Tolerances are in nats per point (thresholds tol N and update_tol N), not
 * relative to |F|: differences of F between models do not depend on the
 * units of the data, while F itself shifts by N log|scale| with them (and
 * can be near zero), so a |F|-relative threshold made the number of
 * components depend on the units.
 *
 * Determinism: items are processed in blocks of SVI_BLOCK; blocks run in
 * waves of VDP_WAVE with one partial-sum buffer each, reduced in block order
 * after the parallel region, so results do not depend on the thread count.
 *
 * Batches and workers (VDP only): with n_batches > 1 the points fall in row
 * ranges whose sums are formed alone and added in batch order. With a
 * vdp_remote the ranges live on workers: the master keeps no q (it is
 * implicit, a function of the globals of the last full step, kept in lastG
 * with the later reordering in lastperm) and asks the workers for the full
 * local step, a candidate's sub list (rebuilt from lastG) and its partial
 * steps; they run the same local_full_range / local_pair_core code on their
 * rows, so a fit on workers equals the fit with the same batches here. A
 * failed remote step stops the fit with the last complete model. */
#include <math.h>
#include <stdlib.h> /* qsort */
#include <string.h>
#include <time.h>
#include <R.h> /* R_alloc (scratch owned by R), R_CheckUserInterrupt, REprintf */
#include "vdp.h"

#define VDP_WAVE 32
#define VDP_STREAM 0x5D9000ULL
/* items with less mass than this on a split component keep a hard side */
#define VDP_ACTIVE_MASS 1e-6
/* responsibility below which the full local step sets q to zero */
#define VDP_Q_FLOOR 1e-10
/* the two-means fallback is tried only where its threshold is further than
 * this many standard deviations of the projections from their mean */
#define VDP_CUT_NEAR 0.1
/* a split candidate is represented by about this many nodes at least */
#define VDP_SPLIT_NODES 64

/* exp(x), with the arguments below -746 (where exp underflows to exactly 0)
 * answered without calling exp: libm takes a slow path for them (errno,
 * the underflow exception), and at 10^6 points most scores of a node's
 * losing components are thousands of nats below the winner's. The same
 * values as exp, so the same fits. */
static inline double exp_u(double x) {
  return x < -746.0 ? 0.0 : exp(x);
}

typedef struct {
  int N, D, P, max_K, T, threads, SS, cycle, status;
  int interrupted; /* a user interrupt was seen: stop at the last complete model */
  const double *X;
  vdp_tree *tree; /* lazily built: buckets are split when first needed */
  const mix_prior *prior; /* the Normal-Wishart prior (NULL on workers) */
  const gauss_nw *prior_q; /* the prior as a gauss_nw: scores the infinite tail */
  const vdp_control *ctl;
  /* items and their q (row stride max_K) and tail mass */
  int n_items, cap;
  int *item;
  double *q, *qt;
  int cap2;
  int *item2;
  double *q2, *qt2;
  /* statistics, slots 0..max_K-1 components, max_K the tail;
   * each slot: N, H, s1 (D), s2 (P) */
  double *stats;
  gauss_nw *post; /* max_K + 2 (two candidate slots) */
  double *G;   /* KL_nw + H - ELL per component, tail in slot max_K */
  double *sa, *sb, *elnpi, elnpi_tail, F;
  double *work;
  double *tscr;
  int tscr_stride;
  double *wave;
  /* the items' raw scores (row stride T + 1, tail last) of the last full
   * local step, kept when the expansion test follows it (keep_scores;
   * sraw_ok once written; sraw_cap in doubles) */
  double *sraw;
  size_t sraw_cap;
  int keep_scores, sraw_ok;
  double t0, c0; /* wall and CPU clocks at the start */
  int remote_calls; /* calls of the remote steps so far */
  vdp_result *res;
  /* candidate scratch */
  int *sub_item, *best_item, sub_cap, best_cap;
  double *sub_m, *sub_qi, *best_m, *best_qi;
  double *cand_acc, *best_acc; /* 2 * SS each */
  double *sa2, *sb2, *el2, *N2;
  int work_cap, flag_cap;
  /* fresh[i] = 1: item i is a child made by the last expand_tree (the
   * spread test's later passes test only those); fresh_cap in ints */
  int *fresh, fresh_cap;
  int *act_pos, *act_item, *frz_item, *flag;
  /* the split threshold's projections, weights and sort scratch */
  double *cut_p, *cut_w, *pbuf; /* pbuf (remote): 2 N doubles */
  void *cut_ord;
  int cut_cap;
  double *act_m, *act_qi, *frz_m, *frz_qi, *frz_acc;
  /* batches: the points (VDP) fall in n_batches row ranges whose sums are
   * added in batch order, on this machine or on workers (remote) */
  int n_batches;
  const int *batch_bounds;
  double *seg_acc; /* (max_K + 1) * SS */
  const vdp_remote *remote;
  double *lastG;  /* remote: globals of the last full local step (G layout) */
  int *lastperm;  /* remote: current component k was lastperm[k] then */
  int *ident;     /* a label per component that follows it through reorders */
  double *rbuf;   /* remote: n_batches x (max_K + 1) x SS results */
  double *gpair;  /* remote: two packed candidate components */
  int remote_failed;
} vdp_state;

/* Packed globals (G) sent to workers: one column of g_rows(D, P) doubles
 * per component and one for the tail: E ln pi, cst, nu, mWm, Wm (D), Wp (P)
 * (everything gauss_nw_score reads). */
#define VDP_G_HEAD 4
static inline int g_rows(int D, int P) { return VDP_G_HEAD + D + P; }

static void pack_nw(const gauss_nw *g, double e, double *col) {
  col[0] = e;
  col[1] = g->cst;
  col[2] = g->nu;
  col[3] = g->mWm;
  memcpy(col + VDP_G_HEAD, g->Wm, sizeof(double) * g->D);
  memcpy(col + VDP_G_HEAD + g->D, g->Wp, sizeof(double) * g->P);
}

static void unpack_nw(gauss_nw *g, const double *col) {
  g->cst = col[1];
  g->nu = col[2];
  g->mWm = col[3];
  memcpy(g->Wm, col + VDP_G_HEAD, sizeof(double) * g->D);
  memcpy(g->Wp, col + VDP_G_HEAD + g->D, sizeof(double) * g->P);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process, all threads (the common trace's cpu_seconds). */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------- items ---------- */

static inline void item_view(const vdp_state *s, int id, double *scratch, double *n,
                             const double **s1, const double **s2) {
  if (id >= 0) {
    *n = s->tree->count[id];
    *s1 = s->tree->s1 + (size_t)id * s->D;
    *s2 = s->tree->s2 + (size_t)id * s->P;
  } else {
    const double *x = s->X + (size_t)(-id - 1) * s->D;
    gauss_pack_outer(x, s->D, scratch);
    *n = 1.0;
    *s1 = x;
    *s2 = scratch;
  }
}

/* S_{item,k} = E ln pi_k + E ln p(item | component k) for k < T and, in S[T],
 * the same for the first tail component (prior parameters); returns the max. */
static inline double item_scores(const vdp_state *s, int T, double n, const double *s1,
                                 const double *s2, double *S) {
  double mx = -INFINITY;
  for (int k = 0; k < T; k++) {
    S[k] = s->elnpi[k] + gauss_nw_score(&s->post[k], n, s1, s2);
    if (S[k] > mx) mx = S[k];
  }
  S[T] = s->elnpi_tail + gauss_nw_score(s->prior_q, n, s1, s2);
  if (S[T] > mx) mx = S[T];
  return mx;
}

static inline int n_children(const vdp_state *s, int id) {
  if (id < 0) return 0;
  if (s->tree->left[id] >= 0 || s->tree->left[id] == VDP_UNBUILT) return 2;
  return s->tree->count[id] > 1 ? s->tree->count[id] : 0;
}

/* (builds an unbuilt bucket's children: outside parallel regions, or after
 * build_children) */
static inline int child_of(const vdp_state *s, int id, int j) {
  vdp_tree *t = s->tree;
  if (t->left[id] == VDP_UNBUILT) vdp_tree_expand(t, id);
  if (t->left[id] >= 0) return j == 0 ? t->left[id] : t->right[id];
  return -(t->start[id] + j + 1); /* the tree stores its points in its order */
}

static int argmax_row(const double *q, int T) {
  int b = 0;
  for (int k = 1; k < T; k++)
    if (q[k] > q[b]) b = k;
  return b;
}

/* Makes room for n items in the spare buffers. */
static void reserve_spare(vdp_state *s, int n) {
  if (n <= s->cap2) return;
  int cap = n + n / 2 + 64;
  s->item2 = (int *)R_alloc(cap, sizeof(int));
  s->q2 = (double *)R_alloc((size_t)cap * s->max_K, sizeof(double));
  s->qt2 = (double *)R_alloc(cap, sizeof(double));
  s->cap2 = cap;
}

static void swap_buffers(vdp_state *s, int n) {
  int *ti = s->item; s->item = s->item2; s->item2 = ti;
  double *tq = s->q; s->q = s->q2; s->q2 = tq;
  double *tt = s->qt; s->qt = s->qt2; s->qt2 = tt;
  int c = s->cap; s->cap = s->cap2; s->cap2 = c;
  s->n_items = n;
}

/* ---------- sticks ---------- */

static double kl_beta(double a, double b, double a0, double b0) {
  double psab = svi_digamma(a + b);
  return svi_lgamma(a + b) - svi_lgamma(a) - svi_lgamma(b) - svi_lgamma(a0 + b0) +
         svi_lgamma(a0) + svi_lgamma(b0) + (a - a0) * svi_digamma(a) +
         (b - b0) * svi_digamma(b) - (a + b - a0 - b0) * psab;
}

static void stick_update(int T, const double *Nk, double Nt, double a1, double a2,
                         double *sa, double *sb) {
  double after = Nt;
  for (int k = T - 1; k >= 0; k--) {
    sa[k] = a1 + Nk[k];
    sb[k] = a2 + after;
    after += Nk[k];
  }
}

/* E ln pi_k for k < T and of the tail sum; returns the sticks' part of F:
 * sum_k KL_beta(k) - sum_k N_k E ln pi_k - N_t E ln pi_tail. */
static double stick_terms(int T, const double *sa, const double *sb, const double *Nk,
                          double Nt, double a1, double a2, double *elnpi,
                          double *elnpi_tail) {
  double acc = 0.0, f = 0.0;
  for (int k = 0; k < T; k++) {
    double ps = svi_digamma(sa[k] + sb[k]);
    elnpi[k] = acc + svi_digamma(sa[k]) - ps;
    acc += svi_digamma(sb[k]) - ps;
    f += kl_beta(sa[k], sb[k], a1, a2) - Nk[k] * elnpi[k];
  }
  double ps0 = svi_digamma(a1 + a2);
  double elnv0 = svi_digamma(a1) - ps0, eln1v0 = svi_digamma(a2) - ps0;
  *elnpi_tail = acc + elnv0 - log1p(-exp(eln1v0));
  return f - Nt * *elnpi_tail;
}

static inline double *slot(const vdp_state *s, int k) {
  return s->stats + (size_t)k * s->SS;
}

static double component_G(const vdp_state *s, const gauss_nw *g, const double *st, int tail) {
  double kl = tail ? 0.0 : gauss_nw_kl(g, s->prior, s->prior_q);
  return kl + st[1] - gauss_nw_expected_loglik(g, st[0], st + 2, st + 2 + s->D);
}

/* F with the current posteriors and sticks and the current statistics. */
static double eval_F(vdp_state *s) {
  const int T = s->T;
  double f = 0.0;
  for (int k = 0; k < T; k++) {
    s->G[k] = component_G(s, &s->post[k], slot(s, k), 0);
    f += s->G[k];
  }
  s->G[s->max_K] = component_G(s, s->prior_q, slot(s, s->max_K), 1);
  f += s->G[s->max_K];
  for (int k = 0; k < T; k++) s->N2[k] = slot(s, k)[0];
  f += stick_terms(T, s->sa, s->sb, s->N2, slot(s, s->max_K)[0], s->ctl->a1, s->ctl->a2,
                   s->elnpi, &s->elnpi_tail);
  return f;
}

/* Global step: posteriors and sticks from the statistics; sets s->F. */
static void global_step(vdp_state *s) {
  const int T = s->T;
  for (int k = 0; k < T; k++) {
    const double *st = slot(s, k);
    if (gauss_nw_posterior(&s->post[k], s->prior, st[0], st + 2, st + 2 + s->D, s->work))
      s->status = 1;
  }
  for (int k = 0; k < T; k++) s->N2[k] = slot(s, k)[0];
  stick_update(T, s->N2, slot(s, s->max_K)[0], s->ctl->a1, s->ctl->a2, s->sa, s->sb);
  s->F = eval_F(s);
}

/* ---------- local steps ---------- */

/* Full local step over the items [lo, hi): q of each item and the sums of
 * the K1 = T + 1 statistics slots (tail last) into acc (K1 x SS), block
 * sums added in block order. */
static void local_full_range(vdp_state *s, svi_len lo, svi_len hi, double *acc) {
  const int T = s->T, K1 = T + 1, SS = s->SS, D = s->D, P = s->P, mK = s->max_K;
  memset(acc, 0, sizeof(double) * (size_t)K1 * SS);
  const svi_len nb = svi_n_blocks(hi - lo);
  for (svi_len w0 = 0; w0 < nb; w0 += VDP_WAVE) {
    int wn = (int)((nb - w0) < VDP_WAVE ? (nb - w0) : VDP_WAVE);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->threads)
#endif
    for (int bb = 0; bb < wn; bb++) {
      double *buf = s->wave + (size_t)bb * K1 * SS;
      memset(buf, 0, sizeof(double) * (size_t)K1 * SS);
      double *S = s->tscr + (size_t)svi_thread_id() * s->tscr_stride;
      double *outer = S + mK + 1, *E = outer + P + 4 * D + 8;
      svi_len i0 = lo + (w0 + bb) * SVI_BLOCK, i1 = i0 + SVI_BLOCK;
      if (i1 > hi) i1 = hi;
      for (svi_len i = i0; i < i1; i++) {
        double n;
        const double *s1, *s2;
        item_view(s, s->item[i], outer, &n, &s1, &s2);
        double mx = item_scores(s, T, n, s1, s2, S);
        if (s->sraw_ok) memcpy(s->sraw + (size_t)i * K1, S, sizeof(double) * K1);
        /* responsibilities below VDP_Q_FLOOR are set to zero and the rest
         * renormalised: the statistics skip them
         * (most of the work when T is large) and F stays exact for the q in
         * use */
        double z = 0.0;
        for (int k = 0; k < K1; k++) {
          S[k] -= mx;
          z += (E[k] = S[k] > -700.0 ? exp(S[k]) : 0.0);
        }
        const double cut = VDP_Q_FLOOR * z;
        double zk = 0.0;
        for (int k = 0; k < K1; k++) {
          if (E[k] < cut) E[k] = 0.0;
          zk += E[k];
        }
        const double lz = log(zk);
        double *qrow = s->q + (size_t)i * mK;
        for (int k = 0; k < K1; k++) {
          double qk = E[k] / zk, lq = S[k] - lz;
          if (k < T) qrow[k] = qk;
          else s->qt[i] = qk;
          if (qk <= 0.0) continue;
          double *b = buf + (size_t)k * SS, w = n * qk;
          b[0] += w;
          b[1] += w * lq;
          for (int d = 0; d < D; d++) b[2 + d] += qk * s1[d];
          double *b2 = b + 2 + D;
          for (int p = 0; p < P; p++) b2[p] += qk * s2[p];
        }
      }
    }
    for (int bb = 0; bb < wn; bb++) {
      const double *buf = s->wave + (size_t)bb * K1 * SS;
      for (size_t j = 0; j < (size_t)K1 * SS; j++) acc[j] += buf[j];
    }
  }
}

static void pack_globals(const vdp_state *s, double *G) {
  const int T = s->T, gr = g_rows(s->D, s->P);
  for (int k = 0; k < T; k++) pack_nw(&s->post[k], s->elnpi[k], G + (size_t)k * gr);
  pack_nw(s->prior_q, s->elnpi_tail, G + (size_t)T * gr);
}

/* Adds n_batches results of `len` doubles, in batch order, into acc. */
static void sum_batches(const double *r, int nb, size_t len, double *acc) {
  memset(acc, 0, sizeof(double) * len);
  for (int b = 0; b < nb; b++)
    for (size_t j = 0; j < len; j++) acc[j] += r[(size_t)b * len + j];
}

/* The full local step: every item's q and the statistics of all slots. With
 * batches, each batch's sums are formed alone and added in batch order,
 * here or on the workers (remote; q then stays implicit, recomputed from the
 * globals kept in lastG when a split needs it). Returns 1 when a remote
 * step failed (the statistics are left unchanged). */
static int local_full(vdp_state *s) {
  const int T = s->T, K1 = T + 1, SS = s->SS, mK = s->max_K;
  const size_t len = (size_t)K1 * SS;
  s->sraw_ok = 0;
  if (s->remote) {
    pack_globals(s, s->lastG);
    s->remote_calls++;
    if (s->remote->full(s->remote->ctx, T, s->lastG, s->rbuf)) {
      s->interrupted = s->remote_failed = 1;
      return 1;
    }
    sum_batches(s->rbuf, s->n_batches, len, s->seg_acc);
    for (int k = 0; k < T; k++) s->lastperm[k] = k;
  } else if (s->tree || s->n_batches <= 1) {
    /* (the raw scores are kept for the expansion test that follows) */
    if (s->tree && s->keep_scores) {
      size_t need = (size_t)s->n_items * K1;
      if (need > s->sraw_cap) {
        s->sraw_cap = need + need / 2 + 64;
        s->sraw = (double *)R_alloc(s->sraw_cap, sizeof(double));
      }
      s->sraw_ok = 1;
    }
    local_full_range(s, 0, s->n_items, s->seg_acc);
  } else {
    double *tmp = s->seg_acc + len;
    memset(s->seg_acc, 0, sizeof(double) * len);
    for (int b = 0; b < s->n_batches; b++) {
      local_full_range(s, s->batch_bounds[b], s->batch_bounds[b + 1], tmp);
      for (size_t j = 0; j < len; j++) s->seg_acc[j] += tmp[j];
    }
  }
  for (int k = 0; k < K1; k++)
    memcpy(slot(s, k < T ? k : mK), s->seg_acc + (size_t)k * SS, sizeof(double) * SS);
  return 0;
}

/* Partial step of a split candidate: the mass m of each sub item is shared
 * between the children i and j only. With update = 0 the current qi are
 * kept (the initial hard split); otherwise qi = m sigma(S_i - S_j).
 * Accumulates both children's statistics into acc (2 slots). */
static void local_pair_core(vdp_state *s, int n_sub, const int *sub_item,
                            const double *sub_m, double *sub_qi, int update,
                            const gauss_nw *gi, const gauss_nw *gj, double ei, double ej,
                            double *acc) {
  const int SS = s->SS, D = s->D, P = s->P;
  memset(acc, 0, sizeof(double) * 2 * SS);
  const svi_len nb = svi_n_blocks(n_sub);
  for (svi_len w0 = 0; w0 < nb; w0 += VDP_WAVE) {
    int wn = (int)((nb - w0) < VDP_WAVE ? (nb - w0) : VDP_WAVE);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->threads)
#endif
    for (int bb = 0; bb < wn; bb++) {
      double *buf = s->wave + (size_t)bb * 2 * SS;
      memset(buf, 0, sizeof(double) * 2 * SS);
      double *outer = s->tscr + (size_t)svi_thread_id() * s->tscr_stride + s->max_K + 1;
      svi_len i0 = (w0 + bb) * SVI_BLOCK, i1 = i0 + SVI_BLOCK;
      if (i1 > n_sub) i1 = n_sub;
      for (svi_len i = i0; i < i1; i++) {
        double n;
        const double *s1, *s2;
        item_view(s, sub_item[i], outer, &n, &s1, &s2);
        double m = sub_m[i], qv[2], lq[2];
        if (update) {
          double d = (ej + gauss_nw_score(gj, n, s1, s2)) - (ei + gauss_nw_score(gi, n, s1, s2));
          /* log sigma(-d) and log sigma(d), stably */
          double l1p = log1p(exp_u(-fabs(d)));
          double lri = (d > 0 ? -d : 0.0) - l1p, lrj = (d > 0 ? 0.0 : d) - l1p;
          qv[0] = m * exp_u(lri);
          qv[1] = m * exp_u(lrj);
          lq[0] = log(m) + lri;
          lq[1] = log(m) + lrj;
          sub_qi[i] = qv[0];
        } else {
          qv[0] = sub_qi[i];
          qv[1] = m - sub_qi[i];
          lq[0] = qv[0] > 0 ? log(qv[0]) : 0.0;
          lq[1] = qv[1] > 0 ? log(qv[1]) : 0.0;
        }
        for (int c = 0; c < 2; c++) {
          if (qv[c] <= 0.0) continue;
          double *b = buf + (size_t)c * SS, w = n * qv[c];
          b[0] += w;
          b[1] += w * lq[c];
          for (int d = 0; d < D; d++) b[2 + d] += qv[c] * s1[d];
          double *b2 = b + 2 + D;
          for (int p = 0; p < P; p++) b2[p] += qv[c] * s2[p];
        }
      }
    }
    for (int bb = 0; bb < wn; bb++) {
      const double *buf = s->wave + (size_t)bb * 2 * SS;
      for (int j = 0; j < 2 * SS; j++) acc[j] += buf[j];
    }
  }
}

/* local_pair_core over a sub list in point order, batch by batch (VDP with
 * batches: each batch's part summed alone, the parts added in batch order,
 * as the workers do). */
static void local_pair(vdp_state *s, int n_sub, const int *sub_item, const double *sub_m,
                       double *sub_qi, int update, const gauss_nw *gi, const gauss_nw *gj,
                       double ei, double ej, double *acc) {
  if (s->tree || s->n_batches <= 1) {
    local_pair_core(s, n_sub, sub_item, sub_m, sub_qi, update, gi, gj, ei, ej, acc);
    return;
  }
  const int SS = s->SS;
  double *tmp = s->seg_acc; /* free outside local_full */
  memset(acc, 0, sizeof(double) * 2 * SS);
  int lo = 0;
  for (int b = 0; b < s->n_batches; b++) {
    int hi = lo;
    while (hi < n_sub && -sub_item[hi] - 1 < s->batch_bounds[b + 1]) hi++;
    local_pair_core(s, hi - lo, sub_item + lo, sub_m + lo, sub_qi + lo, update, gi, gj,
                    ei, ej, tmp);
    for (int j = 0; j < 2 * SS; j++) acc[j] += tmp[j];
    lo = hi;
  }
}

/* ---------- trace ---------- */

static void record(vdp_state *s, int phase, double F) {
  vdp_result *r = s->res;
  if (r->n_trace >= r->trace_cap) return;
  vdp_trace_row *row = r->trace + r->n_trace;
  row->step = r->n_trace + 1;
  row->T = s->T;
  row->n_items = s->n_items;
  row->phase = phase;
  row->seconds = now_seconds() - s->t0;
  row->cpu = cpu_seconds() - s->c0;
  row->rounds = s->remote_calls;
  row->F = F;
  r->n_trace++;
}

/* ---------- kd-tree expansion ---------- */


/* Builds the children of every outer node that is an unbuilt bucket, so
 * that the parallel loops below read a complete tree. */
static void build_children(vdp_state *s) {
  for (int i = 0; i < s->n_items; i++) {
    int id = s->item[i];
    if (id >= 0 && s->tree->left[id] == VDP_UNBUILT) vdp_tree_expand(s->tree, id);
  }
}

/* The spread test's estimate of the free energy, in nats per point, that a
 * node's points lose by sharing the node's q rather than each taking its own
 * (at the current globals), from one competitor k of the winner: the points'
 * score differences delta_k(x) taken as N(margin, sd^2). The loss is then
 * E[softplus(-delta)] - softplus(-margin) (the Jensen gap of the
 * log-sum-exp of the scores). With sigmoid(x) ~ Phi(x / k0), k0 = sqrt(8 /
 * pi), E[softplus(mu + sd Z)] ~ R(mu, sqrt(sd^2 + k0^2)) with R(mu, k) =
 * k (t Phi(t) + phi(t)), t = mu / k (the integral of Phi(u / k) up to mu),
 * so the gap is R(-m, sqrt(sd^2 + k0^2)) - R(-m, k0), m = |margin|: within
 * 10% of the exact gap for m <= 3. Beyond, where it falls short, the
 * second-order term sd^2 p (1 - p) / 2 (p = sigmoid(-m)) is taken when
 * larger; there the estimate is 0.27 to 1.01 times the exact gap
 * (ref_vdp_spread_loss() in tests/testthat/helper-reference-vdp.R, and its
 * test). */
static inline double probit_ramp(double mu, double k) {
  double t = mu / k;
  return k * (t * 0.5 * erfc(-t * M_SQRT1_2) + 0.3989422804014327 * exp(-0.5 * t * t));
}

double vdp_spread_loss(double margin, double sd) {
  if (!(sd > 0)) return 0.0;
  const double k0 = 1.5957691216057308, m = fabs(margin);
  double gap = probit_ramp(-m, sqrt(sd * sd + k0 * k0)) - probit_ramp(-m, k0);
  if (m <= 3) return gap;
  double p = 1.0 / (1.0 + exp(m < 700 ? m : 700)), quad = 0.5 * sd * sd * p * (1.0 - p);
  return gap > quad ? gap : quad;
}

/* Expands every outer node whose points may disagree with the node's shared
 * q(z) at the current globals, by two tests (a node failing either is
 * expanded):
 * 1. the paper's: the optimal q of a child (at the current globals) differs
 *    from the node's by more than thr in some component;
 * 2. the spread test, which catches nodes whose children both straddle a
 *    boundary (which test 1 misses): let k* win at the node and
 *    delta_k(x) = S_k*(x) - S_k(x). Linearised at the node mean c, delta_k
 *    has mean margin_k = S_A,k* - S_A,k over the node and standard deviation
 *    sd_k = sqrt(g_k' Cov_A g_k), Cov_A the node's covariance from its cached
 *    statistics (times expand_sd). The free energy the node's n points would
 *    gain from q of their own is n times the Jensen gap E[lse S(x)] -
 *    lse E[S(x)], estimated as the sum over k of vdp_spread_loss(margin_k,
 *    sd_k); the node fails when that exceeds expand_tol N nats. The
 *    threshold is per node: a per-point one (or the range of q over the
 *    node, which this test replaced) refines a tree to most of its points
 *    where components overlap everywhere (image patches: 218,000 outer
 *    nodes for 438,784 points, slower than VDP).
 * spread_only = 1 runs test 2 alone, on the items that the previous call
 * made (fresh), for refine_tree's repeated passes.
 * Returns the number of nodes expanded; the children's q are the parent's
 * until the next local step. */
static int expand_tree(vdp_state *s, int spread_only) {
  const int T = s->T, K1 = T + 1, mK = s->max_K, n = s->n_items, D = s->D;
  if (n > s->flag_cap) {
    s->flag_cap = n + n / 2 + 64;
    s->flag = (int *)R_alloc(s->flag_cap, sizeof(int));
  }
  int *flag = s->flag;
  const double thr = s->ctl->expand_threshold, etol = s->ctl->expand_tol * s->N;
  build_children(s);
  /* expand_sd = 0 (the paper's test alone): the spread test's range is
   * exactly 0 (lo = hi), so it never fails; skip its O(T D^2) per node */
  const int spread = s->ctl->expand_sd > 0;
  if (!spread) memset(flag, 0, sizeof(int) * (size_t)n);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64) num_threads(s->threads) if (spread)
#endif
  for (int i = 0; i < (spread ? n : 0); i++) {
    int id = s->item[i];
    flag[i] = 0;
    if ((spread_only && !s->fresh[i]) || n_children(s, id) == 0) continue;
    double *S = s->tscr + (size_t)svi_thread_id() * s->tscr_stride;
    double *c = S + mK + 1, *gs = c + D, *gk = gs + D;
    const vdp_tree *t = s->tree;
    double cn = t->count[id];
    const double *s1 = t->s1 + (size_t)id * D, *s2 = t->s2 + (size_t)id * s->P;
    for (int d = 0; d < D; d++) c[d] = s1[d] / cn;
    int best = 0;
    for (int k = 0; k < K1; k++) {
      const gauss_nw *g = k < T ? &s->post[k] : s->prior_q;
      S[k] = (k < T ? s->elnpi[k] : s->elnpi_tail) + gauss_nw_score(g, cn, s1, s2);
      if (S[k] > S[best]) best = k;
    }
    /* gradient of S_k at c: -nu_k W_k (c - m_k) = nu_k (W_k m_k - W_k c) */
    const gauss_nw *gb = best < T ? &s->post[best] : s->prior_q;
    for (int a = 0; a < D; a++) /* (W symmetric: row a = column a) */
      gs[a] = gb->nu * (gb->Wm[a] - svi_dot4(gb->W + (size_t)a * D, c, D));
    double loss = 0.0, z = s->ctl->expand_sd;
    for (int k = 0; k < K1; k++) {
      if (k == best) continue;
      double margin = S[best] - S[k];
      if (margin > 700) continue;
      const gauss_nw *g = k < T ? &s->post[k] : s->prior_q;
      for (int a = 0; a < D; a++)
        gk[a] = gs[a] - g->nu * (g->Wm[a] - svi_dot4(g->W + (size_t)a * D, c, D));
      /* g' Cov_A g with Cov_A = s2 / n - c c' (s2 packed upper):
       * g' s2 g = sum_b g_b (s2_bb g_b + 2 sum_{a<b} s2_ab g_a) */
      double v = 0.0, gc = 0.0;
      const double *col = s2;
      for (int b = 0; b < D; b++) {
        double o0 = 0.0, o1 = 0.0;
        int a = 0;
        for (; a + 2 <= b; a += 2) {
          o0 += col[a] * gk[a];
          o1 += col[a + 1] * gk[a + 1];
        }
        if (a < b) o0 += col[a] * gk[a];
        v += gk[b] * (2.0 * (o0 + o1) + col[b] * gk[b]);
        gc += gk[b] * c[b];
        col += b + 1;
      }
      v = v / cn - gc * gc;
      loss += vdp_spread_loss(margin, z * sqrt(v > 0 ? v : 0.0));
    }
    flag[i] = loss * cn > etol;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64) num_threads(s->threads)
#endif
  for (int i = 0; i < (spread_only ? 0 : n); i++) {
    int id = s->item[i], nc = n_children(s, id);
    if (nc == 0 || flag[i]) continue;
    double *S = s->tscr + (size_t)svi_thread_id() * s->tscr_stride;
    double *outer = S + mK + 1;
    const double *qrow = s->q + (size_t)i * mK;
    /* a node's two children: the second's scores from the node's (kept by
     * the full local step at the same globals) less the first's, each
     * score being linear in the statistics (the sums of x'Wx - 2 m'Wx).
     * They equal the direct scores to rounding, so a decision could only
     * change for a responsibility within rounding of the threshold (none
     * did in the benchmarks: inst/bench/results/vdp.txt) */
    const int pair = s->sraw_ok && nc == 2 && id >= 0 && s->tree->left[id] >= 0;
    double *S1 = outer + s->P + 4 * s->D + 8, n1 = 0.0;
    for (int j = 0; j < nc && !flag[i]; j++) {
      double cn, mx;
      const double *s1, *s2;
      if (pair && j == 1) {
        const double *Sp = s->sraw + (size_t)i * K1;
        const double np = s->tree->count[id];
        cn = np - n1;
        mx = -INFINITY;
        for (int k = 0; k < K1; k++) {
          const gauss_nw *g = k < T ? &s->post[k] : s->prior_q;
          const double el = k < T ? s->elnpi[k] : s->elnpi_tail, h = 0.5 * g->nu;
          double Ap = np * ((g->cst - (Sp[k] - el)) / h - g->mWm);
          double A1 = n1 * ((g->cst - (S1[k] - el)) / h - g->mWm);
          S[k] = el + (g->cst - h * ((Ap - A1) / cn + g->mWm));
          if (S[k] > mx) mx = S[k];
        }
      } else {
        item_view(s, child_of(s, id, j), outer, &cn, &s1, &s2);
        mx = item_scores(s, T, cn, s1, s2, S);
        if (pair) {
          memcpy(S1, S, sizeof(double) * K1);
          n1 = cn;
        }
      }
      double z = 0.0;
      for (int k = 0; k < K1; k++) z += (S[k] = exp_u(S[k] - mx));
      for (int k = 0; k < K1; k++) {
        double ref = k < T ? qrow[k] : s->qt[i];
        if (fabs(S[k] / z - ref) > thr) {
          flag[i] = 1;
          break;
        }
      }
    }
  }
  int total = 0, n_exp = 0;
  for (int i = 0; i < n; i++) {
    total += flag[i] ? n_children(s, s->item[i]) : 1;
    n_exp += flag[i];
  }
  if (n_exp == 0) return 0;
  reserve_spare(s, total);
  if (total > s->fresh_cap) {
    s->fresh_cap = total + total / 2 + 64;
    s->fresh = (int *)R_alloc(s->fresh_cap, sizeof(int));
  }
  int o = 0;
  for (int i = 0; i < n; i++) {
    int id = s->item[i], nc = flag[i] ? n_children(s, id) : 0;
    for (int j = 0; j < (nc ? nc : 1); j++, o++) {
      s->fresh[o] = nc > 0;
      s->item2[o] = nc ? child_of(s, id, j) : id;
      memcpy(s->q2 + (size_t)o * mK, s->q + (size_t)i * mK, sizeof(double) * T);
      s->qt2[o] = s->qt[i];
    }
  }
  swap_buffers(s, total);
  s->sraw_ok = 0; /* (the items changed) */
  return n_exp;
}

/* ---------- reordering ---------- */

/* Reorders components by decreasing size when that lowers F. */
static void maybe_reorder(vdp_state *s) {
  const int T = s->T, mK = s->max_K;
  if (T < 2) return;
  int *ord = (int *)R_alloc(T, sizeof(int));
  for (int k = 0; k < T; k++) ord[k] = k;
  for (int a = 1; a < T; a++) { /* stable insertion sort by N, decreasing */
    int v = ord[a], b = a;
    while (b > 0 && slot(s, ord[b - 1])[0] < slot(s, v)[0]) {
      ord[b] = ord[b - 1];
      b--;
    }
    ord[b] = v;
  }
  int same = 1;
  for (int k = 0; k < T; k++) same &= ord[k] == k;
  if (same) return;
  double gsum = s->G[mK];
  for (int k = 0; k < T; k++) {
    s->N2[k] = slot(s, ord[k])[0];
    gsum += s->G[k];
  }
  double Nt = slot(s, mK)[0];
  stick_update(T, s->N2, Nt, s->ctl->a1, s->ctl->a2, s->sa2, s->sb2);
  double et;
  double Fnew = gsum + stick_terms(T, s->sa2, s->sb2, s->N2, Nt, s->ctl->a1, s->ctl->a2,
                                   s->el2, &et);
  if (!(Fnew < s->F)) return;
  /* apply the permutation */
  if (s->remote) { /* q is implicit: remember where each component was */
    int *pm = (int *)R_alloc(T, sizeof(int));
    for (int k = 0; k < T; k++) pm[k] = s->lastperm[ord[k]];
    memcpy(s->lastperm, pm, sizeof(int) * T);
  } else {
    double *row = (double *)R_alloc(T, sizeof(double));
    for (int i = 0; i < s->n_items; i++) {
      double *qr = s->q + (size_t)i * mK;
      for (int k = 0; k < T; k++) row[k] = qr[ord[k]];
      memcpy(qr, row, sizeof(double) * T);
    }
  }
  double *tmp = (double *)R_alloc((size_t)T * s->SS, sizeof(double));
  gauss_nw *pt = (gauss_nw *)R_alloc(T, sizeof(gauss_nw));
  double *gt = (double *)R_alloc(T, sizeof(double));
  for (int k = 0; k < T; k++) {
    memcpy(tmp + (size_t)k * s->SS, slot(s, ord[k]), sizeof(double) * s->SS);
    pt[k] = s->post[ord[k]];
    gt[k] = s->G[ord[k]];
  }
  memcpy(s->stats, tmp, sizeof(double) * (size_t)T * s->SS);
  int *it = (int *)R_alloc(T, sizeof(int));
  for (int k = 0; k < T; k++) it[k] = s->ident[ord[k]];
  for (int k = 0; k < T; k++) {
    s->post[k] = pt[k];
    s->G[k] = gt[k];
    s->ident[k] = it[k];
  }
  memcpy(s->sa, s->sa2, sizeof(double) * T);
  memcpy(s->sb, s->sb2, sizeof(double) * T);
  memcpy(s->elnpi, s->el2, sizeof(double) * T);
  s->elnpi_tail = et;
  s->F = Fnew;
}

/* ---------- full update (step 3) ---------- */

/* Refines the tree at the current globals (expand_tree), and when nodes
 * were expanded, gives their items fresh q by a local step. With the spread
 * test, the children of expanded nodes are tested again by it at the same
 * globals until none fails: the nodes the test wants, in one refinement
 * rather than one level every third cycle (the paper's test still descends
 * one level a refinement). Returns the number of nodes expanded. */
static int refine_tree(vdp_state *s) {
  double Fpre = eval_F(s);
  int expanded = expand_tree(s, 0);
  if (s->ctl->expand_sd > 0)
    for (int e = expanded; e > 0; expanded += e) e = expand_tree(s, 1);
  if (expanded) {
    record(s, 2, Fpre);
    local_full(s);
    record(s, 3, eval_F(s));
  }
  return expanded;
}

static void update_all(vdp_state *s) {
  const vdp_control *ctl = s->ctl;
  double Fprev = s->F;
  int it;
  for (it = 0; it < ctl->max_iter; it++) {
    s->keep_scores = s->tree && (s->cycle + 1) % 3 == 0;
    int fail = local_full(s);
    s->keep_scores = 0;
    if (fail) break; /* a worker failed: keep the last globals */
    s->cycle++;
    /* the tree is refined every third cycle (as in the paper) */
    if (s->tree && s->cycle % 3 == 0) refine_tree(s);
    global_step(s);
    maybe_reorder(s);
    record(s, 0, s->F);
    if (svi_interrupt_pending()) {
      s->interrupted = 1;
      break;
    }
    int converged = Fprev - s->F <= ctl->update_tol * s->N;
    Fprev = s->F;
    if (!converged) continue;
    if (!s->tree) break;
    /* before the updates are declared converged the tree is refined once
     * more, at these globals with the last local step's q (its kept node
     * scores are of the globals before: not used); when nothing is
     * expanded they are, else the updates go on from the refined tree */
    s->sraw_ok = 0;
    if (!refine_tree(s)) break;
    global_step(s);
    maybe_reorder(s);
    record(s, 0, s->F);
    Fprev = s->F;
  }
  if (it == ctl->max_iter) s->res->n_capped++;
}

/* ---------- split candidates (step 2) ---------- */

static void reserve_sub(vdp_state *s, int n) {
  if (n <= s->sub_cap) return;
  int cap = n + n / 2 + 64;
  s->sub_item = (int *)R_alloc(cap, sizeof(int));
  s->sub_m = (double *)R_alloc(cap, sizeof(double));
  s->sub_qi = (double *)R_alloc(cap, sizeof(double));
  s->sub_cap = cap;
}

/* Candidate scratch that lives for the whole fit (R_alloc memory is only
 * released when the .Call returns, so per-candidate allocations would pile
 * up). */
static void reserve_work(vdp_state *s, int n) {
  if (n <= s->work_cap) return;
  int cap = n + n / 2 + 64;
  s->act_pos = (int *)R_alloc(cap, sizeof(int));
  s->act_item = (int *)R_alloc(cap, sizeof(int));
  s->frz_item = (int *)R_alloc(cap, sizeof(int));
  s->act_m = (double *)R_alloc(cap, sizeof(double));
  s->act_qi = (double *)R_alloc(cap, sizeof(double));
  s->frz_m = (double *)R_alloc(cap, sizeof(double));
  s->frz_qi = (double *)R_alloc(cap, sizeof(double));
  s->work_cap = cap;
}

static inline int expand_for_split(const vdp_state *s, int i, int c) {
  return s->tree && n_children(s, s->item[i]) > 0 &&
         argmax_row(s->q + (size_t)i * s->max_K, s->T) == c;
}

/* The items that replace outer node id when component c is split: its
 * children (the paper's one-level expansion), and further descendants while
 * a node holds more than `limit` points, so that a candidate is represented
 * by enough nodes to be split well even when the tree is coarse (high
 * dimensions). Writes the ids to out (when not NULL) and returns how many. */
static int split_descend(const vdp_state *s, int id, int force, double limit, int *out) {
  const vdp_tree *t = s->tree;
  int nc = n_children(s, id);
  int go = nc > 0 && (force || ((t->left[id] >= 0 || t->left[id] == VDP_UNBUILT) &&
                                t->count[id] > limit));
  if (!go) {
    if (out) out[0] = id;
    return 1;
  }
  int k = 0;
  for (int j = 0; j < nc; j++)
    k += split_descend(s, child_of(s, id, j), 0, limit, out ? out + k : NULL);
  return k;
}

static double split_limit(const vdp_state *s, int c) {
  double lim = slot(s, c)[0] / VDP_SPLIT_NODES;
  return lim > 2.0 * s->tree->leaf_size ? lim : 2.0 * s->tree->leaf_size;
}

/* ---------- the split threshold ---------- */

typedef struct {
  double p;
  int i;
} cut_pair;

static int cut_cmp(const void *a, const void *b) {
  const cut_pair *x = (const cut_pair *)a, *y = (const cut_pair *)b;
  if (x->p < y->p) return -1;
  if (x->p > y->p) return 1;
  return (x->i > y->i) - (x->i < y->i);
}

size_t vdp_split_cut_scratch(int n) { return (size_t)(n > 0 ? n : 1) * sizeof(cut_pair); }

/* Where a component is cut along its principal axis: the items' projections
 * p (relative to the component's mean) with weights w (points times their
 * responsibility) are sorted (ties by position, so the order and every sum
 * below are the same whatever the thread count or the batches), and the cut
 * between two consecutive distinct values that maximises the weighted
 * two-means criterion sl^2 / wl + sr^2 / wr (sl, wl: the weighted sum and
 * weight of the projections below the cut, sr, wr above; the same as the
 * least within-side sum of squares) is taken. Returns the smallest
 * projection above the cut (an item goes to the first child when its
 * projection is >= it); 0 (the mean: the paper's bisector) when all
 * projections are equal. The paper cuts at the mean, which for clusters
 * strung along the axis (three in a row: the middle one is cut in half) can
 * give a split with a lower likelihood than the component it splits, so a
 * real split is missed (issue 38, inst/bench/results/vdp.txt). scratch:
 * vdp_split_cut_scratch(n) bytes. The reference: ref_vdp_split_cut() in
 * tests/testthat/test-vdp-split.R. */
double vdp_split_cut(int n, const double *p, const double *w, void *scratch) {
  cut_pair *o = (cut_pair *)scratch;
  for (int i = 0; i < n; i++) {
    o[i].p = p[i];
    o[i].i = i;
  }
  qsort(o, (size_t)n, sizeof(cut_pair), cut_cmp);
  double W = 0.0, S = 0.0;
  for (int j = 0; j < n; j++) {
    W += w[o[j].i];
    S += w[o[j].i] * o[j].p;
  }
  double wl = 0.0, sl = 0.0, best = -INFINITY, t = 0.0;
  for (int j = 1; j < n; j++) {
    const double wj = w[o[j - 1].i];
    wl += wj;
    sl += wj * o[j - 1].p;
    if (!(o[j].p > o[j - 1].p)) continue;
    const double wr = W - wl, sr = S - sl;
    if (!(wl > 0) || !(wr > 0)) continue;
    const double b = sl * sl / wl + sr * sr / wr;
    if (b > best) {
      best = b;
      t = o[j].p;
    }
  }
  return t;
}

static void reserve_cut(vdp_state *s, int n) {
  if (n <= s->cut_cap) return;
  int cap = n + n / 2 + 64;
  s->cut_p = (double *)R_alloc(cap, sizeof(double));
  s->cut_w = (double *)R_alloc(cap, sizeof(double));
  s->cut_ord = (void *)R_alloc(vdp_split_cut_scratch(cap), 1);
  s->cut_cap = cap;
}

/* Principal axis of component c from its statistics (power iteration). */
static void principal_axis(vdp_state *s, int c, double *mu, double *v) {
  const int D = s->D;
  const double *st = slot(s, c);
  double Nc = st[0];
  double *C = s->work, *u = s->work + (size_t)D * D;
  for (int d = 0; d < D; d++) mu[d] = st[2 + d] / Nc;
  int idx = 0;
  for (int j = 0; j < D; j++)
    for (int i = 0; i <= j; i++, idx++) {
      double val = st[2 + D + idx] / Nc - mu[i] * mu[j];
      C[i + (size_t)j * D] = C[j + (size_t)i * D] = val;
    }
  for (int d = 0; d < D; d++) v[d] = 1.0 + 0.1 * d;
  svi_power_iteration(C, D, v, 100, u); /* C v == 0: v stays where it got */
}

/* Free energy of the split of component c into gi (keeping column c) and gj
 * (new column T) given the children's statistics acc (two slots of SS):
 * their posteriors, the sticks with T + 1 components, and the children's
 * E[log pi] written to *ei, *ej. INFINITY when a child is empty or its
 * posterior fails. */
static double split_free_energy(vdp_state *s, int c, const double *acc, gauss_nw *gi, gauss_nw *gj,
                                double Gothers, double Nt, double *ei, double *ej) {
  const int T = s->T, D = s->D, SS = s->SS;
  const vdp_control *ctl = s->ctl;
  const double *ai = acc, *aj = acc + SS;
  if (!(ai[0] > 0) || !(aj[0] > 0) ||
      gauss_nw_posterior(gi, s->prior, ai[0], ai + 2, ai + 2 + D, s->work) ||
      gauss_nw_posterior(gj, s->prior, aj[0], aj + 2, aj + 2 + D, s->work))
    return INFINITY;
  for (int k = 0; k < T; k++) s->N2[k] = slot(s, k)[0];
  s->N2[c] = ai[0];
  s->N2[T] = aj[0];
  stick_update(T + 1, s->N2, Nt, ctl->a1, ctl->a2, s->sa2, s->sb2);
  double et;
  const double F = Gothers + component_G(s, gi, ai, 0) + component_G(s, gj, aj, 0) +
                   stick_terms(T + 1, s->sa2, s->sb2, s->N2, Nt, ctl->a1, ctl->a2, s->el2, &et);
  *ei = s->el2[c];
  *ej = s->el2[T];
  return F;
}

/* The hard split of the candidate at threshold t (projection >= t: the first
 * child): on this machine the sides of the sub list (s->sub_qi), its active
 * and frozen parts (s->act_*, s->frz_*) and the frozen items' sums
 * (s->frz_acc); with workers, their sub lists (split_begin). Returns 0, 1
 * when a child would be empty, 2 when a worker failed. */
static int split_sides(vdp_state *s, int c, const double *mu, const double *v, double t,
                       int n_sub, int *n_act_out) {
  const int SS = s->SS;
  const vdp_remote *rm = s->remote;
  double *frz_acc = s->frz_acc;
  *n_act_out = 0;
  if (rm) {
    const size_t blen = 3 + 2 * (size_t)SS;
    s->remote_calls++;
    if (rm->split_begin(rm->ctx, s->T, s->lastG, s->lastperm[c], mu, v, t, s->rbuf)) {
      s->interrupted = s->remote_failed = 1;
      return 2;
    }
    double ns = 0, n_i = 0;
    memset(frz_acc, 0, sizeof(double) * 2 * SS);
    for (int b = 0; b < s->n_batches; b++) {
      const double *r = s->rbuf + (size_t)b * blen;
      ns += r[0];
      n_i += r[1];
      for (int j = 0; j < 2 * SS; j++) frz_acc[j] += r[3 + j];
    }
    return n_i == 0 || n_i == ns;
  }
  int n_i = 0;
  for (int k = 0; k < n_sub; k++) {
    int side_i = s->cut_p[k] >= t;
    s->sub_qi[k] = side_i ? s->sub_m[k] : 0.0;
    n_i += side_i;
  }
  if (n_i == 0 || n_i == n_sub) return 1;
  /* Items whose mass on c is negligible keep their hard side (their
   * statistics are added once), so a candidate costs in proportion to its
   * own items, not to N; F accounts for the q actually used, so it stays
   * exact. */
  reserve_work(s, n_sub);
  int a = 0, f = 0;
  for (int k = 0; k < n_sub; k++) {
    if (s->sub_m[k] >= VDP_ACTIVE_MASS) {
      s->act_pos[a] = k;
      s->act_item[a] = s->sub_item[k];
      s->act_m[a] = s->sub_m[k];
      s->act_qi[a++] = s->sub_qi[k];
    } else {
      s->frz_item[f] = s->sub_item[k];
      s->frz_m[f] = s->sub_m[k];
      s->frz_qi[f++] = s->sub_qi[k];
    }
  }
  local_pair(s, f, s->frz_item, s->frz_m, s->frz_qi, 0, NULL, NULL, 0.0, 0.0, frz_acc);
  *n_act_out = a;
  return 0;
}

/* The children's statistics (acc, 2 SS) of the candidate's partial step
 * (update = 0: its hard sides): the active items' sums, then the frozen
 * ones' added. Returns 1 when a worker failed. */
static int split_step(vdp_state *s, int n_act, int update, const gauss_nw *gi,
                      const gauss_nw *gj, double ei, double ej, double *acc) {
  const int SS = s->SS, gr = g_rows(s->D, s->P);
  const vdp_remote *rm = s->remote;
  if (rm) {
    if (update) {
      pack_nw(gi, ei, s->gpair);
      pack_nw(gj, ej, s->gpair + gr);
    }
    s->remote_calls++;
    if (rm->split_iter(rm->ctx, update, s->gpair, ei, ej, s->rbuf)) {
      s->interrupted = s->remote_failed = 1;
      return 1;
    }
    sum_batches(s->rbuf, s->n_batches, 2 * (size_t)SS, acc);
  } else {
    local_pair(s, n_act, s->act_item, s->act_m, s->act_qi, update, gi, gj, ei, ej, acc);
  }
  for (int j = 0; j < 2 * SS; j++) acc[j] += s->frz_acc[j];
  return 0;
}

/* Tries splitting component c; returns the candidate's F (INFINITY when the
 * split leaves a child empty). The sub list, q_i and statistics are left in
 * s->sub_* and s->cand_acc. cut: where the candidate is cut across its
 * principal axis: 0 through the mean (the paper's bisector), 1 at the
 * weighted two-means threshold of the projections (vdp_split_cut). With
 * the points on workers (s->remote) each worker rebuilds its part of the
 * sub list from the globals of the last full step (lastG, the column where c
 * was then), sends the projections when the threshold needs them, and runs
 * the partial steps on it; the master adds the batches' sums in batch order,
 * so the arithmetic is that of the local path with batches (*n_sub_out is
 * then 0). */
static double try_split(vdp_state *s, int c, int cut, int *n_sub_out) {
  const int T = s->T, mK = s->max_K, D = s->D;
  const vdp_control *ctl = s->ctl;
  const vdp_remote *rm = s->remote;
  double *mu = s->el2 + mK, *v = mu + D; /* scratch beyond the T+1 entries used */
  int n_sub = 0, n_act = 0;
  principal_axis(s, c, mu, v);
  if (rm) {
    *n_sub_out = 0;
    if (cut) {
      /* the threshold needs every projection: the workers send theirs (and
       * the responsibilities), in batch order, i.e. in point order as the
       * local path lists them */
      if (!s->pbuf) s->pbuf = (double *)R_alloc(2 * (size_t)s->N, sizeof(double));
      s->remote_calls++;
      if (rm->split_proj(rm->ctx, T, s->lastG, s->lastperm[c], mu, v, s->pbuf)) {
        s->interrupted = s->remote_failed = 1;
        return INFINITY;
      }
      for (int i = 0; i < s->N; i++) n_sub += s->pbuf[2 * (size_t)i + 1] > 0;
      reserve_cut(s, n_sub);
      int m = 0;
      for (int i = 0; i < s->N; i++) {
        if (!(s->pbuf[2 * (size_t)i + 1] > 0)) continue;
        s->cut_p[m] = s->pbuf[2 * (size_t)i];
        s->cut_w[m++] = s->pbuf[2 * (size_t)i + 1];
      }
    }
  } else {
    /* (a) the sub list: items with mass on c, expanded one level where c wins */
    const double lim = s->tree ? split_limit(s, c) : 0.0;
    for (int i = 0; i < s->n_items; i++) {
      double m = s->q[(size_t)i * mK + c];
      if (m > 0)
        n_sub += expand_for_split(s, i, c) ? split_descend(s, s->item[i], 1, lim, NULL) : 1;
    }
    reserve_sub(s, n_sub);
    int o = 0;
    for (int i = 0; i < s->n_items; i++) {
      double m = s->q[(size_t)i * mK + c];
      if (!(m > 0)) continue;
      int id = s->item[i];
      int k = expand_for_split(s, i, c) ? split_descend(s, id, 1, lim, s->sub_item + o) : 1;
      if (k == 1) s->sub_item[o] = expand_for_split(s, i, c) ? s->sub_item[o] : id;
      for (int j = 0; j < k; j++) s->sub_m[o + j] = m;
      o += k;
    }
    *n_sub_out = n_sub;
    /* (b) the items' projections on the principal axis */
    reserve_cut(s, n_sub);
    for (int k = 0; k < n_sub; k++) {
      double n;
      const double *s1, *s2;
      item_view(s, s->sub_item[k], s->tscr + mK + 1, &n, &s1, &s2);
      double proj = 0.0;
      for (int d = 0; d < D; d++) proj += (s1[d] / n - mu[d]) * v[d];
      s->cut_p[k] = proj;
      s->cut_w[k] = n * s->sub_m[k];
    }
  }
  gauss_nw *gi = &s->post[mK], *gj = &s->post[mK + 1];
  double *acc = s->cand_acc, ei = 0.0, ej = 0.0, F = INFINITY, Fprev = INFINITY;
  double Gothers = s->G[mK];
  for (int k = 0; k < T; k++)
    if (k != c) Gothers += s->G[k];
  const double Nt = slot(s, mK)[0];
  /* (c) the threshold: the mean (0) or the two-means cut */
  const double t = cut ? vdp_split_cut(n_sub, s->cut_p, s->cut_w, s->cut_ord) : 0.0;
  if (cut && ctl->split_cut == 2) {
    /* the fallback after the cut through the mean failed: a threshold
     * within VDP_CUT_NEAR standard deviations of the projections' mean
     * gives nearly the same candidate (a single Gaussian's two-means
     * threshold is at its mean), so it is not tried */
    double W = 0.0, S1 = 0.0, S2 = 0.0;
    for (int k = 0; k < n_sub; k++) {
      W += s->cut_w[k];
      S1 += s->cut_w[k] * s->cut_p[k];
      S2 += s->cut_w[k] * s->cut_p[k] * s->cut_p[k];
    }
    const double pm = S1 / W, var = S2 / W - pm * pm;
    if (!(fabs(t - pm) > VDP_CUT_NEAR * sqrt(var > 0 ? var : 0.0))) return INFINITY;
  }
  if (split_sides(s, c, mu, v, t, n_sub, &n_act)) return INFINITY;
  /* (d) update only the two children */
  for (int it = 0; it <= ctl->partial_iter; it++) {
    if (split_step(s, n_act, it > 0, gi, gj, ei, ej, acc)) return INFINITY;
    F = split_free_energy(s, c, acc, gi, gj, Gothers, Nt, &ei, &ej);
    if (F == INFINITY) return INFINITY;
    if (it > 0 && Fprev - F <= ctl->update_tol * s->N) break;
    Fprev = F;
  }
  if (!rm)
    for (int k = 0; k < n_act; k++) s->sub_qi[s->act_pos[k]] = s->act_qi[k];
  return F;
}

/* Accepts the split of c held in the best_* buffers: expands as the
 * candidate did, gives j the slot T, and runs the global step. */
static void apply_split(vdp_state *s, int c, int n_sub) {
  const int T = s->T, mK = s->max_K, n = s->n_items;
  if (s->remote) { /* q is implicit; the next full step recomputes it */
    memcpy(slot(s, c), s->best_acc, sizeof(double) * s->SS);
    memcpy(slot(s, T), s->best_acc + s->SS, sizeof(double) * s->SS);
    s->T = T + 1;
    global_step(s);
    return;
  }
  const double lim = s->tree ? split_limit(s, c) : 0.0;
  int total = 0;
  for (int i = 0; i < n; i++)
    total += (s->q[(size_t)i * mK + c] > 0 && expand_for_split(s, i, c))
                 ? split_descend(s, s->item[i], 1, lim, NULL) : 1;
  reserve_spare(s, total);
  int o = 0, k = 0;
  for (int i = 0; i < n; i++) {
    int id = s->item[i];
    double m = s->q[(size_t)i * mK + c];
    int nc = 1;
    if (m > 0 && expand_for_split(s, i, c)) nc = split_descend(s, id, 1, lim, s->item2 + o);
    else s->item2[o] = id;
    for (int j = 0; j < nc; j++, o++) {
      double *dst = s->q2 + (size_t)o * mK;
      memcpy(dst, s->q + (size_t)i * mK, sizeof(double) * T);
      s->qt2[o] = s->qt[i];
      dst[T] = 0.0;
      if (m > 0) {
        if (k >= n_sub || s->best_item[k] != s->item2[o]) s->status = 3;
        dst[c] = s->best_qi[k];
        dst[T] = s->best_m[k] - s->best_qi[k];
        k++;
      }
    }
  }
  swap_buffers(s, total);
  memcpy(slot(s, c), s->best_acc, sizeof(double) * s->SS);
  memcpy(slot(s, T), s->best_acc + s->SS, sizeof(double) * s->SS);
  s->T = T + 1;
  global_step(s);
}

/* Draws up to `want` distinct components with probability proportional to
 * their sizes. */
static int draw_candidates(vdp_state *s, svi_rng *r, int want, int *out) {
  const int T = s->T;
  double *w = s->N2;
  int n = 0;
  for (int k = 0; k < T; k++) w[k] = slot(s, k)[0] >= 2.0 ? slot(s, k)[0] : 0.0;
  while (n < want) {
    double tot = 0.0;
    for (int k = 0; k < T; k++) tot += w[k];
    if (!(tot > 0)) break;
    double u = svi_rng_unif(r) * tot, acc = 0.0;
    int pick = -1;
    for (int k = 0; k < T; k++) {
      if (w[k] <= 0) continue;
      acc += w[k];
      pick = k;
      if (u < acc) break;
    }
    out[n++] = pick;
    w[pick] = 0.0;
  }
  return n;
}

/* ---------- delete moves ---------- */

/* Removes component k (its mass is reassigned by the next local step). */
static void drop_component(vdp_state *s, int k) {
  const int T = s->T, mK = s->max_K;
  for (int i = 0; i < s->n_items && !s->remote; i++) {
    double *qr = s->q + (size_t)i * mK;
    memmove(qr + k, qr + k + 1, sizeof(double) * (T - k - 1));
  }
  memmove(slot(s, k), slot(s, k + 1), sizeof(double) * (size_t)(T - k - 1) * s->SS);
  gauss_nw gk = s->post[k];
  memmove(s->post + k, s->post + k + 1, sizeof(gauss_nw) * (T - k - 1));
  s->post[T - 1] = gk; /* keep the storage */
  s->T = T - 1;
  for (int j = 0; j < s->T; j++) s->N2[j] = slot(s, j)[0];
  stick_update(s->T, s->N2, slot(s, mK)[0], s->ctl->a1, s->ctl->a2, s->sa, s->sb);
  double et;
  stick_terms(s->T, s->sa, s->sb, s->N2, slot(s, mK)[0], s->ctl->a1, s->ctl->a2,
              s->elnpi, &et);
  s->elnpi_tail = et;
}

/* ---------- snapshots: a move tried and undone ---------- */

/* What a tried move may change and an undo restores: the outer nodes and
 * their q, the components' statistics (the posteriors and sticks follow from
 * them by a global step), T, the update-cycle count and the trace length.
 * Buffers are allocated on first use and only grow. */
typedef struct {
  int cap, n, T, cycle, n_trace;
  double F;
  int *item, *lastperm;
  double *q, *qt, *stats, *lastG;
} vdp_snap;

static void snap_take(vdp_state *s, vdp_snap *p) {
  const int mK = s->max_K, n = s->n_items;
  if (!p->stats) {
    p->stats = (double *)R_alloc((size_t)(mK + 1) * s->SS, sizeof(double));
    if (s->remote) {
      p->lastG = (double *)R_alloc((size_t)(mK + 1) * g_rows(s->D, s->P), sizeof(double));
      p->lastperm = (int *)R_alloc(mK + 1, sizeof(int));
    }
  }
  if (n > p->cap && !s->remote) {
    p->cap = n + n / 4;
    p->item = (int *)R_alloc(p->cap, sizeof(int));
    p->q = (double *)R_alloc((size_t)p->cap * mK, sizeof(double));
    p->qt = (double *)R_alloc(p->cap, sizeof(double));
  }
  p->n = n;
  p->T = s->T;
  p->cycle = s->cycle;
  p->n_trace = s->res->n_trace;
  p->F = s->F;
  if (s->remote) {
    memcpy(p->lastG, s->lastG, sizeof(double) * (size_t)(mK + 1) * g_rows(s->D, s->P));
    memcpy(p->lastperm, s->lastperm, sizeof(int) * (mK + 1));
  } else {
    memcpy(p->item, s->item, sizeof(int) * n);
    memcpy(p->q, s->q, sizeof(double) * (size_t)n * mK);
    memcpy(p->qt, s->qt, sizeof(double) * n);
  }
  memcpy(p->stats, s->stats, sizeof(double) * (size_t)(mK + 1) * s->SS);
}

/* Back to the snapshot; the trace loses the rows written since. */
static void snap_restore(vdp_state *s, const vdp_snap *p) {
  const int mK = s->max_K, n = p->n;
  /* buffers only grow, so the current ones hold n items */
  s->n_items = n;
  if (s->remote) {
    memcpy(s->lastG, p->lastG, sizeof(double) * (size_t)(mK + 1) * g_rows(s->D, s->P));
    memcpy(s->lastperm, p->lastperm, sizeof(int) * (mK + 1));
  } else {
    memcpy(s->item, p->item, sizeof(int) * n);
    memcpy(s->q, p->q, sizeof(double) * (size_t)n * mK);
    memcpy(s->qt, p->qt, sizeof(double) * n);
  }
  memcpy(s->stats, p->stats, sizeof(double) * (size_t)(mK + 1) * s->SS);
  s->T = p->T;
  s->cycle = p->cycle;
  s->res->n_trace = p->n_trace;
  s->sraw_ok = 0;
  global_step(s);
}

/* Tries deleting each small component (weight below half the average),
 * smallest first, at most `candidates` of them (snap: the fit's one
 * snapshot buffer, shared with the pair trials): the component is dropped,
 * everything is updated to convergence, and the result is kept only when the
 * free energy is lower. Greedy splitting can leave slivers of one cluster
 * as separate components; this removes those that do not pay for
 * themselves. */
static void try_deletes(vdp_state *s, vdp_snap *snap) {
  int tries = 0;
  while (s->T > 1 && tries < s->ctl->candidates) {
    /* smallest component not yet tried at this T */
    double total = 0.0;
    for (int k = 0; k < s->T; k++) total += slot(s, k)[0];
    int k = -1;
    for (int j = 0; j < s->T; j++)
      if (slot(s, j)[0] < 0.5 * total / s->T && (k < 0 || slot(s, j)[0] < slot(s, k)[0]))
        k = j;
    if (k < 0) return;
    snap_take(s, snap);
    drop_component(s, k);
    s->F = INFINITY; /* the update loop starts afresh */
    update_all(s);
    tries++;
    s->res->n_trace = snap->n_trace;
    if (s->F < snap->F) {
      record(s, 5, s->F);
      s->res->n_deletes++;
      continue;
    }
    snap_restore(s, snap);
    return; /* the smallest could not go: larger ones are less likely to */
  }
}

/* ---------- the split search ---------- */

/* The candidates of round `step` of the split search (its own random
 * stream): up to `candidates` components drawn by size. Returns how many. */
static int draw_round(vdp_state *s, int step, int *cand) {
  svi_rng r;
  svi_rng_init(&r, s->ctl->seed, VDP_STREAM + (uint64_t)step);
  return draw_candidates(s, &r, s->ctl->candidates, cand);
}

/* Tries the nc candidates cand as splits; the best one's F, component and
 * sub-list length are returned in *bestF, *best_c (-1: none), *best_n, and
 * its sub list and statistics are left in the best_* buffers. split_cut 2:
 * the candidates are cut through the mean (as in the paper); when none of
 * those splits pays, the same candidates are cut at the two-means threshold
 * (issue 38, inst/bench/results/vdp.txt). */
static void search_split(vdp_state *s, const int *cand, int nc, double *bestF, int *best_c,
                         int *best_n) {
  const vdp_control *ctl = s->ctl;
  *bestF = INFINITY;
  *best_c = -1;
  *best_n = 0;
  const int passes = ctl->split_cut == 2 ? 2 : 1;
  for (int jj = 0; jj < passes * nc; jj++) {
    const int j = jj % nc, cut = passes == 2 ? jj / nc : ctl->split_cut;
    if (passes == 2 && j == 0 && cut == 1 && *best_c >= 0 &&
        *bestF < s->F - ctl->tol * s->N)
      break; /* a split through the mean pays */
    int n_sub = 0;
    double F = try_split(s, cand[j], cut, &n_sub);
    s->res->n_splits_tried++;
    if (F < *bestF) {
      *bestF = F;
      *best_c = cand[j];
      *best_n = n_sub;
      int *ti = s->best_item; s->best_item = s->sub_item; s->sub_item = ti;
      double *tm = s->best_m; s->best_m = s->sub_m; s->sub_m = tm;
      double *tq = s->best_qi; s->best_qi = s->sub_qi; s->sub_qi = tq;
      double *ta = s->best_acc; s->best_acc = s->cand_acc; s->cand_acc = ta;
      int tc = s->best_cap; s->best_cap = s->sub_cap; s->sub_cap = tc;
    }
    if (s->interrupted || svi_interrupt_pending()) {
      s->interrupted = 1;
      break;
    }
  }
}

/* The progress line of an accepted split (step: rounds of the search so
 * far). The ETA is an upper bound: the mean time per round so far times the
 * splits left before T reaches max_K (the search usually stops sooner). */
static void progress_line(const vdp_state *s, int step) {
  const double el = now_seconds() - s->t0;
  REprintf("split %d  T = %d/%d  %.1fs  free energy %.8g  outer nodes %d  ETA <= %.0fs\n",
           step, s->T, s->max_K, el, s->F, s->n_items,
           el / (double)step * (double)(s->max_K - s->T));
}

/* Makes the split held in the best_* buffers and updates to convergence. */
static void accept_split(vdp_state *s, int c, int n_sub, int step) {
  apply_split(s, c, n_sub);
  s->res->n_splits_accepted++;
  record(s, 1, s->F);
  update_all(s);
  if (s->ctl->progress) progress_line(s, step);
}

/* When no split pays: the best candidate (component c, in the best_*
 * buffers) is split anyway and everything is updated; then its two
 * children are tried as splits, and when the better of those pays from
 * there it is made too and everything updated again. When the two splits
 * together bring F below where it was before the first (by tol N), both
 * are kept (returns 1); otherwise the model goes back to the snapshot
 * (returns 0). Clusters strung along a line need this: with three in a
 * row, two components (one cluster and a merged pair) can have a higher F
 * than one, while three have a lower F than either, so one split at a time
 * stops at one component (issue 38, inst/bench/results/vdp-prior.txt). Not
 * in the paper. step: the rounds of the search so far (progress line). */
static int try_pair(vdp_state *s, int c, int n_sub, int step, vdp_snap *snap) {
  const vdp_control *ctl = s->ctl;
  const int T = s->T, capped = s->res->n_capped;
  /* each of the components the pair makes must hold at least as many
   * points as a full-covariance Gaussian has parameters, D (D + 3) / 2: on
   * small samples the free energy can favour many components the data do
   * not determine, which one split at a time seldom reaches. The
   * candidate's children are checked before anything is done, and again
   * after the updates */
  const double min_n = 0.5 * s->D * (s->D + 3.0);
  if (!(s->best_acc[0] >= min_n) || !(s->best_acc[s->SS] >= min_n)) return 0;
  snap_take(s, snap);
  apply_split(s, c, n_sub);
  record(s, 1, s->F);
  for (int k = 0; k <= T; k++) s->ident[k] = k;
  update_all(s); /* (a loop of it that reaches max_iter counts only if kept) */
  /* the children, wherever the updates' reorders put them */
  int kids[2], nk = 0, small = 0;
  for (int k = 0; k < s->T; k++)
    if (s->ident[k] == c || s->ident[k] == T) {
      kids[nk++] = k;
      small |= !(slot(s, k)[0] >= min_n);
    }
  double bestF = INFINITY;
  int best_c = -1, best_n = 0;
  if (!s->interrupted && !small) /* (the caller leaves room for both splits) */
    search_split(s, kids, nk, &bestF, &best_c, &best_n);
  if (!s->interrupted && best_c >= 0 && bestF < s->F - ctl->tol * s->N &&
      s->best_acc[0] >= min_n && s->best_acc[s->SS] >= min_n) {
    apply_split(s, best_c, best_n);
    record(s, 1, s->F);
    update_all(s);
    if (!s->interrupted && s->F < snap->F - ctl->tol * s->N) {
      s->res->n_splits_accepted += 2;
      if (ctl->progress) progress_line(s, step);
      return 1;
    }
  }
  snap_restore(s, snap);
  s->res->n_capped = capped;
  return 0;
}

/* ---------- driver ---------- */

static void collect_depth(vdp_tree *t, int id, int depth, int *out, int *n) {
  if (t->depth[id] < depth) vdp_tree_expand(t, id); /* an unbuilt bucket */
  if (t->left[id] < 0 || t->depth[id] >= depth) {
    if (out) out[*n] = id;
    (*n)++;
    return;
  }
  collect_depth(t, t->left[id], depth, out, n);
  collect_depth(t, t->right[id], depth, out, n);
}

int vdp_fit(const double *X, int N, int D, vdp_tree *tree, const mix_prior *prior,
            const gauss_nw *prior_q, const vdp_control *ctl, vdp_result *res) {
  vdp_state S0, *s = &S0;
  memset(s, 0, sizeof(S0));
  s->t0 = now_seconds();
  s->c0 = cpu_seconds();
  s->N = N;
  s->D = D;
  s->P = svi_packed_size(D);
  s->X = X;
  s->tree = tree;
  s->prior = prior;
  s->prior_q = prior_q;
  s->ctl = ctl;
  s->res = res;
  s->threads = ctl->threads;
  const int mK = s->max_K = ctl->max_K;
  s->SS = 2 + D + s->P;
  /* items */
  int n0 = 0;
  if (tree) collect_depth(tree, 0, ctl->initial_depth, NULL, &n0);
  else n0 = N;
  s->cap = tree ? n0 * 4 + 64 : N;
  s->remote = tree ? NULL : ctl->remote;
  s->n_batches = ctl->n_batches > 0 ? ctl->n_batches : 1;
  s->batch_bounds = ctl->batch_bounds;
  s->item = (int *)R_alloc(s->cap, sizeof(int));
  if (!s->remote) { /* remote: q lives implicitly on the workers */
    s->q = (double *)R_alloc((size_t)s->cap * mK, sizeof(double));
    s->qt = (double *)R_alloc(s->cap, sizeof(double));
  }
  if (tree) {
    n0 = 0;
    collect_depth(tree, 0, ctl->initial_depth, s->item, &n0);
  } else {
    for (int i = 0; i < N; i++) s->item[i] = -(i + 1);
  }
  s->n_items = n0;
  /* statistics and posteriors */
  s->stats = (double *)R_alloc((size_t)(mK + 1) * s->SS, sizeof(double));
  s->post = (gauss_nw *)R_alloc(mK + 2, sizeof(gauss_nw));
  size_t nwd = gauss_nw_doubles(D);
  double *pm = (double *)R_alloc((size_t)(mK + 2) * nwd, sizeof(double));
  for (int k = 0; k < mK + 2; k++) gauss_nw_bind(&s->post[k], D, pm + (size_t)k * nwd);
  s->G = (double *)R_alloc(mK + 1, sizeof(double));
  s->ident = (int *)R_alloc(mK + 1, sizeof(int));
  s->sa = (double *)R_alloc(mK + 1, sizeof(double));
  s->sb = (double *)R_alloc(mK + 1, sizeof(double));
  s->elnpi = (double *)R_alloc(mK + 1, sizeof(double));
  s->sa2 = (double *)R_alloc(mK + 1, sizeof(double));
  s->sb2 = (double *)R_alloc(mK + 1, sizeof(double));
  s->el2 = (double *)R_alloc(mK + 1 + 2 * D, sizeof(double));
  s->N2 = (double *)R_alloc(mK + 1, sizeof(double));
  s->work = (double *)R_alloc(3 * (size_t)D * D + 2 * D, sizeof(double));
  s->tscr_stride = 2 * (mK + 1) + s->P + 4 * D + 8;
  int nthr = s->threads > 0 ? s->threads : 1;
  s->tscr = (double *)R_alloc((size_t)nthr * s->tscr_stride, sizeof(double));
  s->wave = (double *)R_alloc((size_t)VDP_WAVE * (mK + 1) * s->SS, sizeof(double));
  s->cand_acc = (double *)R_alloc(2 * (size_t)s->SS, sizeof(double));
  s->best_acc = (double *)R_alloc(2 * (size_t)s->SS, sizeof(double));
  s->frz_acc = (double *)R_alloc(2 * (size_t)s->SS, sizeof(double));
  s->seg_acc = (double *)R_alloc(2 * (size_t)(mK + 1) * s->SS, sizeof(double));
  if (s->remote) {
    const int gr = g_rows(D, s->P);
    size_t each = (size_t)(mK + 1) * s->SS;
    if (each < 3 + 2 * (size_t)s->SS) each = 3 + 2 * (size_t)s->SS;
    s->lastG = (double *)R_alloc((size_t)(mK + 1) * gr, sizeof(double));
    s->lastperm = (int *)R_alloc(mK + 1, sizeof(int));
    s->rbuf = (double *)R_alloc((size_t)s->n_batches * each, sizeof(double));
    s->gpair = (double *)R_alloc(2 * (size_t)gr, sizeof(double));
    memset(s->gpair, 0, sizeof(double) * 2 * gr);
  }
  /* T = 1, everything on component 1 (the master holds the data) */
  s->T = 1;
  memset(s->stats, 0, sizeof(double) * (size_t)(mK + 1) * s->SS);
  double *st = slot(s, 0), *outer = s->tscr + mK + 1;
  for (int i = 0; i < s->n_items; i++) {
    double n;
    const double *s1, *s2;
    item_view(s, s->item[i], outer, &n, &s1, &s2);
    st[0] += n;
    for (int d = 0; d < D; d++) st[2 + d] += s1[d];
    for (int p = 0; p < s->P; p++) st[2 + D + p] += s2[p];
    if (s->remote) continue;
    s->q[(size_t)i * mK] = 1.0;
    s->qt[i] = 0.0;
  }
  res->seconds_tree = 0.0;
  global_step(s);
  record(s, 4, s->F);
  update_all(s);
  /* greedy splitting */
  int *cand = (int *)R_alloc(ctl->candidates > 0 ? ctl->candidates : 1, sizeof(int));
  int split_step = 0;
  vdp_snap snap;
  memset(&snap, 0, sizeof(snap));
  while (s->T < mK && !s->interrupted) {
    double bestF;
    int best_c, best_n;
    search_split(s, cand, draw_round(s, split_step++, cand), &bestF, &best_c, &best_n);
    /* an interrupt keeps the model of the last accepted split */
    if (s->interrupted || best_c < 0) break;
    if (bestF < s->F - ctl->tol * s->N) {
      accept_split(s, best_c, best_n, split_step);
      continue;
    }
    if (!ctl->pair_splits || s->T + 2 > mK ||
        !try_pair(s, best_c, best_n, split_step, &snap))
      break;
  }
  if (!s->interrupted && s->ctl->deletes) try_deletes(s, &snap);
  res->interrupted = s->interrupted;
  res->worker_failed = s->remote_failed;
  /* results */
  res->T = s->T;
  res->n_items = s->n_items;
  res->F = s->F;
  res->status = s->status;
  for (int k = 0; k < s->T; k++) {
    res->Nk[k] = slot(s, k)[0];
    res->a[k] = s->sa[k];
    res->b[k] = s->sb[k];
    res->beta[k] = s->post[k].beta;
    res->nu[k] = s->post[k].nu;
    memcpy(res->m + (size_t)k * D, s->post[k].m, sizeof(double) * D);
    memcpy(res->W + (size_t)k * D * D, s->post[k].W, sizeof(double) * (size_t)D * D);
  }
  res->tail_stats[0] = slot(s, mK)[0];
  memcpy(res->tail_stats + 1, slot(s, mK) + 2, sizeof(double) * D);
  res->seconds_total = now_seconds() - s->t0;
  return s->status;
}

/* ---------- worker side (points of one batch; see vdp_remote) ---------- */

/* A state over the n points X (D x n) of one batch with the globals G (T
 * components and the tail) of the master; scratch from R_alloc. */
static void worker_state(vdp_state *s, gauss_nw *prq, const double *X, int n, int D, int T,
                         const double *G, int threads) {
  memset(s, 0, sizeof(*s));
  s->N = n;
  s->D = D;
  s->P = svi_packed_size(D);
  s->X = X;
  s->threads = threads;
  s->T = T;
  const int mK = s->max_K = T + 1;
  s->SS = 2 + D + s->P;
  s->n_batches = 1;
  s->n_items = s->cap = n;
  s->item = (int *)R_alloc(n > 0 ? n : 1, sizeof(int));
  for (int i = 0; i < n; i++) s->item[i] = -(i + 1);
  s->q = (double *)R_alloc((size_t)(n > 0 ? n : 1) * mK, sizeof(double));
  s->qt = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  size_t nwd = gauss_nw_doubles(D);
  s->post = (gauss_nw *)R_alloc(mK + 2, sizeof(gauss_nw));
  double *pm = (double *)R_alloc((size_t)(mK + 3) * nwd, sizeof(double));
  for (int k = 0; k < mK + 2; k++) gauss_nw_bind(&s->post[k], D, pm + (size_t)k * nwd);
  gauss_nw_bind(prq, D, pm + (size_t)(mK + 2) * nwd);
  s->prior_q = prq; /* workers only score: the prior itself is not needed */
  s->elnpi = (double *)R_alloc(mK + 1, sizeof(double));
  const int gr = g_rows(D, s->P);
  if (G) {
    for (int k = 0; k < T; k++) {
      unpack_nw(&s->post[k], G + (size_t)k * gr);
      s->elnpi[k] = G[(size_t)k * gr];
    }
    unpack_nw(prq, G + (size_t)T * gr);
    s->elnpi_tail = G[(size_t)T * gr];
  }
  s->tscr_stride = 2 * (mK + 1) + s->P + 4 * D + 8;
  s->tscr = (double *)R_alloc((size_t)(threads > 0 ? threads : 1) * s->tscr_stride,
                              sizeof(double));
  s->wave = (double *)R_alloc((size_t)VDP_WAVE * (mK + 1) * s->SS, sizeof(double));
}

void vdp_worker_full(const double *X, int n, int D, int T, const double *G, int threads,
                     double *out) {
  vdp_state S0;
  gauss_nw prq;
  worker_state(&S0, &prq, X, n, D, T, G, threads);
  local_full_range(&S0, 0, n, out);
}

void vdp_worker_split_proj(const double *X, int n, int D, int T, const double *G, int c,
                           const double *mu, const double *v, int threads, double *out) {
  vdp_state S0, *s = &S0;
  gauss_nw prq;
  worker_state(s, &prq, X, n, D, T, G, threads);
  const int mK = s->max_K;
  double *acc = (double *)R_alloc((size_t)(mK + 1) * s->SS, sizeof(double));
  local_full_range(s, 0, n, acc); /* q as the master had it after that step */
  for (int i = 0; i < n; i++) {
    const double *x = X + (size_t)i * D;
    double proj = 0.0;
    for (int d = 0; d < D; d++) proj += (x[d] / 1.0 - mu[d]) * v[d];
    out[2 * (size_t)i] = proj;
    out[2 * (size_t)i + 1] = s->q[(size_t)i * mK + c];
  }
}

int vdp_worker_split_begin(const double *X, int n, int D, int T, const double *G, int c,
                           const double *mu, const double *v, double t, int threads,
                           double *out, int *act_item, double *act_m, double *act_qi) {
  vdp_state S0, *s = &S0;
  gauss_nw prq;
  worker_state(s, &prq, X, n, D, T, G, threads);
  const int mK = s->max_K, SS = s->SS;
  double *acc = (double *)R_alloc((size_t)(mK + 1) * SS, sizeof(double));
  local_full_range(s, 0, n, acc); /* q as the master had it after that step */
  int *frz_item = (int *)R_alloc(n > 0 ? n : 1, sizeof(int));
  double *frz_m = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  double *frz_qi = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  int n_sub = 0, n_i = 0, a = 0, f = 0;
  for (int i = 0; i < n; i++) {
    double m = s->q[(size_t)i * mK + c];
    if (!(m > 0)) continue;
    n_sub++;
    const double *x = X + (size_t)i * D;
    double proj = 0.0;
    for (int d = 0; d < D; d++) proj += (x[d] / 1.0 - mu[d]) * v[d];
    int side_i = proj >= t;
    double qi = side_i ? m : 0.0;
    n_i += side_i;
    if (m >= VDP_ACTIVE_MASS) {
      act_item[a] = -(i + 1);
      act_m[a] = m;
      act_qi[a++] = qi;
    } else {
      frz_item[f] = -(i + 1);
      frz_m[f] = m;
      frz_qi[f++] = qi;
    }
  }
  out[0] = n_sub;
  out[1] = n_i;
  out[2] = a;
  local_pair_core(s, f, frz_item, frz_m, frz_qi, 0, NULL, NULL, 0.0, 0.0, out + 3);
  return a;
}

void vdp_worker_split_iter(const double *X, int n, int D, int n_act, const int *act_item,
                           const double *act_m, double *act_qi, int update,
                           const double *gpair, double ei, double ej, int threads,
                           double *out) {
  vdp_state S0, *s = &S0;
  gauss_nw prq;
  worker_state(s, &prq, X, n, D, 1, NULL, threads);
  const int gr = g_rows(D, s->P), mK = s->max_K;
  unpack_nw(&s->post[mK], gpair);
  unpack_nw(&s->post[mK + 1], gpair + gr);
  local_pair_core(s, n_act, act_item, act_m, act_qi, update, &s->post[mK],
                  &s->post[mK + 1], ei, ej, out);
}
