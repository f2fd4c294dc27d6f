/* Fast-VDP (Kurihara, Welling & Vlassis): the greedy accelerated variational
 * DP mixture (vdp.c) over the kd-tree of kdtree.h, its data preparation
 * (vdp-data.c) and prediction (vdp-predict.c). Plain C, no SEXP. */
#ifndef SPARSEVI_VDP_H
#define SPARSEVI_VDP_H

#include "svi.h"
#include "obs-gauss.h"
#include "kdtree.h"

/* The spread test's estimate of the free energy per point that a node's
 * points lose by sharing one q, from one competitor whose score difference
 * over the points has mean `margin` and standard deviation `sd` (vdp.c) */
double vdp_spread_loss(double margin, double sd);

/* The split threshold along a component's principal axis: the weighted
 * two-means cut of the n projections p with weights w (vdp.c); scratch of
 * vdp_split_cut_scratch(n) bytes. */
size_t vdp_split_cut_scratch(int n);
double vdp_split_cut(int n, const double *p, const double *w, void *scratch);

/* ---- data preparation (vdp-data.c); X is N x D column-major ---- */
/* Column means; nonfinite = 1 when any value is NA/NaN/Inf; constant[j] = 1
 * when column j takes one value (N > 1). */
void vdp_data_scan(const double *X, svi_len N, int D, double *center, int *nonfinite,
                   int *constant);
/* Sample covariance (D x D, divisor N - 1) about `center`; work holds
 * vdp_data_cov_work(D) doubles. */
size_t vdp_data_cov_work(int D);
void vdp_data_cov(const double *X, svi_len N, int D, const double *center, double *cov,
                  double *work);
/* Xt (D x N) = t(X) - center and, in the same pass, cov (D x D) as
 * vdp_data_cov computes it (bit for bit); work: vdp_data_cov_work(D). */
void vdp_data_transpose_cov(const double *X, svi_len N, int D, const double *center,
                            double *Xt, double *cov, double *work);
/* Xt (D x N) = t(X) - center. */
void vdp_data_transpose(const double *X, svi_len N, int D, const double *center,
                        double *Xt);
void vdp_data_transpose_keys(const double *X, svi_len N, int D, const double *center,
                             double *Xt, const double *v, double *key);

/* ---- prediction (vdp-predict.c) ---- */
typedef struct {
  svi_len N;
  int D, K1, type, threads; /* type: 0 best column, 1 responsibilities, 2 log predictive density,
                             3 log sum_k exp(S_k) */
  const double *X;   /* N x D, points in rows */
  const double *M;   /* D x K1 means */
  const double *U;   /* D x D x K1 upper Cholesky factors of the W_k */
  const double *par; /* K1 x 5: a, s, c, e, r (see vdp-predict.c) */
  double *scratch;   /* threads x (2 D + 2 K1) doubles */
  int *out_int;      /* type 0: N (0-based column) */
  double *out;       /* type 1: N x K1; types 2, 3: N */
} vdp_predict_args;
void vdp_predict(const vdp_predict_args *a);

/* ---- the algorithm (vdp.c) ---- */

/* VDP (no tree) with the points on workers: the master runs the algorithm
 * and calls these for the per-point steps; each fills one result per batch
 * (in batch order) and returns 0, or nonzero when a worker failed (the fit
 * then stops with its last complete model). Globals travel packed as G:
 * one column of 4 + D + P doubles per component, the tail last (vdp.c).
 *   full: out[b] = the K1 x SS sums of batch b's full local step at G;
 *   split_proj: the projection on the axis (mu, v) and the responsibility
 *     for the column c of lastG (the globals of the last full step) of every
 *     point of batch b: out holds 2 doubles a point, batch after batch;
 *   split_begin: rebuild the sub list of the column c of lastG, hard sides
 *     by the axis (mu, v) at the threshold t (projection >= t: the first
 *     child); out[b] = (n_sub, n_i, n_active, frozen sums 2 SS) (the
 *     workers keep the list);
 *   split_iter: partial step of the kept lists; gpair: the two packed
 *     children (unused when update = 0); out[b] = their 2 SS sums. */
typedef struct {
  void *ctx;
  int (*full)(void *ctx, int T, const double *G, double *out);
  int (*split_proj)(void *ctx, int T, const double *lastG, int c, const double *mu,
                    const double *v, double *out);
  int (*split_begin)(void *ctx, int T, const double *lastG, int c, const double *mu,
                     const double *v, double t, double *out);
  int (*split_iter)(void *ctx, int update, const double *gpair, double ei, double ej,
                    double *out);
} vdp_remote;

typedef struct {
  int kdtree, candidates, initial_depth, max_K, max_iter, partial_iter, progress;
  int deletes; /* 1: try the delete moves after splitting (not in the paper) */
  /* 1: when no split pays, the best one is made anyway and kept if a second
   * split then lowers F below where it was (not in the paper) */
  int pair_splits;
  /* where a split candidate is cut across its principal axis: 0 through the
   * mean (the paper), 1 at the two-means threshold (vdp_split_cut), 2
   * through the mean, and when no such split pays, at the threshold */
  int split_cut;
  int threads;
  double a1, a2, tol, update_tol, expand_threshold, expand_sd;
  /* the spread test expands a node whose points would lower F by more than
   * expand_tol N nats in all, by its estimate, with q of their own
   * (expand_tree); expand_sd scales the node's spread in it (0: no test) */
  double expand_tol;
  uint64_t seed;
  /* VDP only: the points fall in n_batches row ranges [bounds[b], bounds[b+1])
   * whose sums are added in batch order; with remote, on workers */
  int n_batches;
  const int *batch_bounds;
  const vdp_remote *remote;
} vdp_control;

/* Worker side of vdp_remote over the n points X (D x n) of one batch. */
void vdp_worker_full(const double *X, int n, int D, int T, const double *G, int threads,
                     double *out);
/* out: 2 n doubles, the projection and the responsibility of each point. */
void vdp_worker_split_proj(const double *X, int n, int D, int T, const double *G, int c,
                           const double *mu, const double *v, int threads, double *out);
/* Returns the number of active items written to act_* (capacity n). */
int vdp_worker_split_begin(const double *X, int n, int D, int T, const double *G, int c,
                           const double *mu, const double *v, double t, int threads,
                           double *out, int *act_item, double *act_m, double *act_qi);
void vdp_worker_split_iter(const double *X, int n, int D, int n_act, const int *act_item,
                           const double *act_m, double *act_qi, int update,
                           const double *gpair, double ei, double ej, int threads,
                           double *out);

/* One row of the trace. phase: 0 update, 1 split, 2 before expansion,
 * 3 after expansion, 4 start, 5 accepted delete move. */
typedef struct {
  int step, T, n_items, phase;
  int rounds; /* calls of the remote steps so far (0 without remote) */
  double seconds, cpu, F; /* wall and process CPU seconds since the start */
} vdp_trace_row;

typedef struct {
  int T, n_items, status, n_trace, n_splits_tried, n_splits_accepted, n_deletes;
  int n_capped; /* update loops that hit max_iter before converging */
  int interrupted; /* 1: stopped by a user interrupt (the model is complete) */
  int worker_failed; /* 1: stopped because a worker failed (the model is complete) */
  double F, seconds_total, seconds_tree;
  /* caller-allocated, max_K slots */
  double *Nk, *a, *b, *beta, *nu, *m /* D x max_K */, *W /* D x D x max_K */;
  double *tail_stats; /* N, then s1 (D) */
  vdp_trace_row *trace;
  int trace_cap;
} vdp_result;

/* Runs Fast-VDP (tree != NULL) or VDP (tree == NULL) on the D x N data X.
 * prior: the Normal-Wishart prior (lik MIX_GAUSS), prior_q: the prior as
 * gauss_nw_posterior(., prior, 0, NULL, NULL, .) gives it.
 * The caller allocates res's arrays. Returns res->status (0 ok, 1 a scale
 * matrix lost positive definiteness, 2 interrupted-free trace overflow). */
int vdp_fit(const double *X, int N, int D, vdp_tree *tree, const mix_prior *prior,
            const gauss_nw *prior_q, const vdp_control *ctl, vdp_result *res);

#endif
