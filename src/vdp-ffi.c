/* Glue of Fast-VDP: unpacks the R arguments, builds the kd-tree, runs the
 * kernel (vdp.c) and packs the fit. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ffi.h"
#include "vdp.h"

/* Nodes of at most this many points are buckets: with lazy_tree, the tree
 * below a bucket is built when the fit first asks for its children (most of
 * the tree is never asked for: at a million points the outer nodes hold
 * hundreds to thousands of points each). */
#define VDP_TREE_BUCKET 256

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process (all threads): steadier than wall time on a
 * shared machine. */
static double cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- remote per-point steps: the master's side of vdp_remote ---- */
typedef struct {
  SEXP hook; /* function(op, args): a list of one numeric vector per batch, or NULL */
  int nb, D, P, SS;
  const int *bounds; /* the batches' row ranges */
} vdp_rctx;

/* Calls hook(op, args) and copies its n_batches results of `each` doubles
 * (per_point > 0: per_point doubles for each point of the batch instead)
 * one after the other into out; 1 when the hook failed or returned
 * something else. */
static int remote_call(vdp_rctx *c, const char *op, SEXP args, double *out, size_t each,
                       int per_point) {
  int n_prot = 0, err = 0, bad = 0;
  SEXP sop = PROTECT(Rf_mkString(op));
  n_prot++;
  SEXP call = PROTECT(Rf_lang3(c->hook, sop, args));
  n_prot++;
  SEXP res = PROTECT(R_tryEval(call, R_GlobalEnv, &err));
  n_prot++;
  if (err || TYPEOF(res) != VECSXP || XLENGTH(res) != c->nb) bad = 1;
  size_t off = 0;
  for (int b = 0; b < c->nb && !bad; b++) {
    SEXP v = VECTOR_ELT(res, b);
    if (per_point > 0) each = (size_t)per_point * (c->bounds[b + 1] - c->bounds[b]);
    if (TYPEOF(v) != REALSXP || (size_t)XLENGTH(v) != each) bad = 1;
    else memcpy(out + off, REAL(v), sizeof(double) * each);
    off += each;
  }
  UNPROTECT(n_prot);
  return bad;
}

static SEXP real_matrix(const double *x, int nr, int nc) {
  SEXP m = Rf_allocMatrix(REALSXP, nr, nc);
  memcpy(REAL(m), x, sizeof(double) * (size_t)nr * nc);
  return m;
}

static int remote_full(void *ctx, int T, const double *G, double *out) {
  vdp_rctx *c = (vdp_rctx *)ctx;
  const char *nm[] = {"G"};
  SEXP args = PROTECT(svi_named_list(1, nm));
  SET_VECTOR_ELT(args, 0, real_matrix(G, 4 + c->D + c->P, T + 1));
  int r = remote_call(c, "full", args, out, (size_t)(T + 1) * c->SS, 0);
  UNPROTECT(1);
  return r;
}

static int remote_split_proj(void *ctx, int T, const double *lastG, int k, const double *mu,
                             const double *v, double *out) {
  vdp_rctx *c = (vdp_rctx *)ctx;
  const char *nm[] = {"G", "c", "mu", "v"};
  SEXP args = PROTECT(svi_named_list(4, nm));
  SET_VECTOR_ELT(args, 0, real_matrix(lastG, 4 + c->D + c->P, T + 1));
  SET_VECTOR_ELT(args, 1, Rf_ScalarInteger(k));
  SET_VECTOR_ELT(args, 2, real_matrix(mu, c->D, 1));
  SET_VECTOR_ELT(args, 3, real_matrix(v, c->D, 1));
  int r = remote_call(c, "split_proj", args, out, 0, 2);
  UNPROTECT(1);
  return r;
}

static int remote_split_begin(void *ctx, int T, const double *lastG, int k, const double *mu,
                              const double *v, double t, double *out) {
  vdp_rctx *c = (vdp_rctx *)ctx;
  const char *nm[] = {"G", "c", "mu", "v", "t"};
  SEXP args = PROTECT(svi_named_list(5, nm));
  SET_VECTOR_ELT(args, 0, real_matrix(lastG, 4 + c->D + c->P, T + 1));
  SET_VECTOR_ELT(args, 1, Rf_ScalarInteger(k));
  SET_VECTOR_ELT(args, 2, real_matrix(mu, c->D, 1));
  SET_VECTOR_ELT(args, 3, real_matrix(v, c->D, 1));
  SET_VECTOR_ELT(args, 4, Rf_ScalarReal(t));
  int r = remote_call(c, "split_begin", args, out, 3 + 2 * (size_t)c->SS, 0);
  UNPROTECT(1);
  return r;
}

static int remote_split_iter(void *ctx, int update, const double *gpair, double ei,
                             double ej, double *out) {
  vdp_rctx *c = (vdp_rctx *)ctx;
  const char *nm[] = {"update", "gpair", "ei", "ej"};
  SEXP args = PROTECT(svi_named_list(4, nm));
  SET_VECTOR_ELT(args, 0, Rf_ScalarLogical(update));
  SET_VECTOR_ELT(args, 1, real_matrix(gpair, 4 + c->D + c->P, 2));
  SET_VECTOR_ELT(args, 2, Rf_ScalarReal(ei));
  SET_VECTOR_ELT(args, 3, Rf_ScalarReal(ej));
  int r = remote_call(c, "split_iter", args, out, 2 * (size_t)c->SS, 0);
  UNPROTECT(1);
  return r;
}

/* The large scratch of a fit (the centred transpose, the kd-tree's arrays:
 * hundreds of MB at 10^6 points) comes from malloc, not R_alloc: R counts
 * R_alloc'd vectors towards its heap, and allocations that size set off
 * full garbage collections (0.05 s of a 0.45 s fit at 10^6 x 16). The
 * blocks are owned by an external pointer protected for the call: freed at
 * the end, or by its finalizer if an error or interrupt unwinds the call. */
#define VDP_MEM_BLOCKS 16
typedef struct {
  void *p[VDP_MEM_BLOCKS];
  int n;
} vdp_mem;

static void vdp_mem_free(SEXP holder) {
  vdp_mem *m = (vdp_mem *)R_ExternalPtrAddr(holder);
  if (!m) return;
  for (int i = 0; i < m->n; i++) free(m->p[i]);
  free(m);
  R_ClearExternalPtr(holder);
}

static SEXP vdp_mem_new(void) {
  vdp_mem *m = (vdp_mem *)calloc(1, sizeof(vdp_mem));
  if (!m) Rf_error("cannot allocate the Fast-VDP workspace");
  SEXP holder = PROTECT(R_MakeExternalPtr(m, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(holder, vdp_mem_free, TRUE);
  UNPROTECT(1);
  return holder;
}

static void *vdp_mem_alloc(SEXP holder, size_t n, size_t size) {
  vdp_mem *m = (vdp_mem *)R_ExternalPtrAddr(holder);
  if (m->n >= VDP_MEM_BLOCKS) Rf_error("internal error: too many Fast-VDP blocks");
  void *q = malloc(n * size > 0 ? n * size : 1);
  if (!q) Rf_error("cannot allocate %.0f MB for the Fast-VDP workspace",
                   (double)n * size / 1048576.0);
  m->p[m->n++] = q;
  return q;
}

/* ---- ffi_vdp_fit and its parts ---- */

/* The controls of a fit, read by name from the named list `control` (R
 * built and validated it; see fit_vdp): kdtree, candidates, initial_depth,
 * max_K, leaf_size, max_iter, partial_iter, progress, lazy_tree, deletes,
 * pair_splits, split_cut,
 * a1, a2, tol, update_tol, expand_threshold, expand_sd, expand_tol, seed,
 * threads and
 * batch_bounds (n_batches + 1 row offsets 0, ..., N). */
static void vdp_read_control(SEXP control, int N, vdp_control *ctl, int *leaf_size,
                             int *lazy) {
  memset(ctl, 0, sizeof(*ctl));
  ctl->kdtree = svi_opt_flag(control, "kdtree");
  ctl->candidates = svi_opt_int(control, "candidates", 1, INT_MAX);
  ctl->initial_depth = svi_opt_int(control, "initial_depth", 0, 30);
  ctl->max_K = svi_opt_int(control, "max_K", 1, 1000000);
  *leaf_size = svi_opt_int(control, "leaf_size", 1, INT_MAX);
  ctl->max_iter = svi_opt_int(control, "max_iter", 0, INT_MAX);
  ctl->partial_iter = svi_opt_int(control, "partial_iter", 0, INT_MAX);
  ctl->progress = svi_opt_flag(control, "progress");
  *lazy = svi_opt_flag(control, "lazy_tree");
  ctl->deletes = svi_opt_flag(control, "deletes");
  ctl->pair_splits = svi_opt_flag(control, "pair_splits");
  ctl->split_cut = svi_opt_int(control, "split_cut", 0, 2);
  ctl->a1 = svi_opt_real(control, "a1", DBL_MIN, DBL_MAX);
  ctl->a2 = svi_opt_real(control, "a2", DBL_MIN, DBL_MAX);
  ctl->tol = svi_opt_real(control, "tol", -DBL_MAX, DBL_MAX);
  ctl->update_tol = svi_opt_real(control, "update_tol", -DBL_MAX, DBL_MAX);
  ctl->expand_threshold = svi_opt_real(control, "expand_threshold", -DBL_MAX, DBL_MAX);
  ctl->expand_sd = svi_opt_real(control, "expand_sd", -DBL_MAX, DBL_MAX);
  ctl->expand_tol = svi_opt_real(control, "expand_tol", -DBL_MAX, DBL_MAX);
  ctl->seed = svi_seed_from_r(svi_opt(control, "seed"));
  ctl->threads = svi_threads_from_r(svi_opt(control, "threads"));
  SEXP bb = svi_opt(control, "batch_bounds");
  svi_need_int(bb, -1, "batch_bounds");
  ctl->n_batches = (int)XLENGTH(bb) - 1;
  ctl->batch_bounds = INTEGER(bb);
  if (ctl->n_batches < 1 || ctl->batch_bounds[0] != 0 ||
      ctl->batch_bounds[ctl->n_batches] != N)
    Rf_error("internal error: malformed batch_bounds");
  for (int b = 0; b < ctl->n_batches; b++)
    if (ctl->batch_bounds[b + 1] < ctl->batch_bounds[b])
      Rf_error("internal error: malformed batch_bounds");
}

/* The kd-tree's fields and arrays (from mem) over the centred transpose Xt,
 * not built yet. */
static void vdp_alloc_tree(SEXP mem, vdp_tree *t, double *Xt, int N, int D, int leaf_size) {
  int nn = vdp_tree_count_nodes(N, leaf_size);
  int P = svi_packed_size(D);
  t->N = N;
  t->D = D;
  t->P = P;
  t->leaf_size = leaf_size;
  t->max_nodes = nn;
  t->bucket = VDP_TREE_BUCKET > leaf_size ? VDP_TREE_BUCKET : leaf_size;
  t->X = Xt;
  t->perm = (int *)vdp_mem_alloc(mem, N, sizeof(int));
  t->start = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
  t->count = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
  t->left = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
  t->right = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
  t->depth = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
  t->s1 = (double *)vdp_mem_alloc(mem, (size_t)nn * D, sizeof(double));
  t->s2 = (double *)vdp_mem_alloc(mem, (size_t)nn * P, sizeof(double));
  t->key = (double *)vdp_mem_alloc(mem, 2 * (size_t)N, sizeof(double));
  t->scratch = (double *)R_alloc((size_t)D * D + 3 * D, sizeof(double));
  t->root_keyed = 0;
}

/* The one prior type (the mixtures' Normal-Wishart mix_prior, B0 = W0^-1
 * packed; W0 arrives full and symmetric) and the prior as a gauss_nw.
 * Returns 1 when W0 is not positive definite. */
static int vdp_make_prior(const double *W0, SEXP m0, double beta0, double nu0, int D,
                          mix_prior *prior, gauss_nw *prior_q) {
  const int P = svi_packed_size(D);
  double *B0 = (double *)R_alloc(P, sizeof(double));
  for (int i = 0, idx = 0; i < D; i++)
    for (int j = 0; j <= i; j++) B0[idx++] = W0[j + (size_t)i * D];
  memset(prior, 0, sizeof(*prior));
  prior->lik = MIX_GAUSS;
  prior->kappa0 = beta0;
  prior->nu0 = nu0;
  prior->m0 = REAL(m0);
  prior->B0 = B0;
  gauss_nw_bind(prior_q, D, (double *)R_alloc(gauss_nw_doubles(D), sizeof(double)));
  double *work = (double *)R_alloc(2 * (size_t)P, sizeof(double));
  if (gauss_nw_posterior(prior_q, prior, 0.0, NULL, NULL, work)) return 1;
  prior->logdet_B0 = -prior_q->logdet_W;
  return 0;
}

/* The caller-allocated arrays of a result with max_K slots. */
static void vdp_alloc_result(vdp_result *res, int mK, int D, int max_iter) {
  memset(res, 0, sizeof(*res));
  res->Nk = (double *)R_alloc(mK, sizeof(double));
  res->a = (double *)R_alloc(mK, sizeof(double));
  res->b = (double *)R_alloc(mK, sizeof(double));
  res->beta = (double *)R_alloc(mK, sizeof(double));
  res->nu = (double *)R_alloc(mK, sizeof(double));
  res->m = (double *)R_alloc((size_t)mK * D, sizeof(double));
  res->W = (double *)R_alloc((size_t)mK * D * D, sizeof(double));
  res->tail_stats = (double *)R_alloc(D + 1, sizeof(double));
  /* the kernel stops recording at trace_cap rows: cap it (in double, it
   * could overflow an int for max_K x max_iter near their limits) */
  double cap = (double)mK * (3.0 * max_iter + 2) + 16;
  res->trace_cap = cap > 1e7 ? 10000000 : (int)cap;
  res->trace = (vdp_trace_row *)R_alloc(res->trace_cap, sizeof(vdp_trace_row));
}

/* The trace as list(step, seconds, cpu_seconds, free_energy, T,
 * outer_nodes, phase, rounds); the clocks count from the start of the call
 * (the tree's wall and CPU seconds, tree[0] and tree[1], included). */
static SEXP vdp_trace_list(const vdp_result *res, const double *tree) {
  const char *tn[] = {"step", "seconds",     "cpu_seconds", "free_energy",
                      "T",    "outer_nodes", "phase",       "rounds"};
  SEXP tr = PROTECT(svi_named_list(8, tn));
  int nt = res->n_trace;
  SEXPTYPE types[] = {INTSXP, REALSXP, REALSXP, REALSXP, INTSXP, INTSXP, INTSXP, INTSXP};
  for (int j = 0; j < 8; j++) SET_VECTOR_ELT(tr, j, Rf_allocVector(types[j], nt));
  int *step = INTEGER(VECTOR_ELT(tr, 0)), *T = INTEGER(VECTOR_ELT(tr, 4)),
      *items = INTEGER(VECTOR_ELT(tr, 5)), *phase = INTEGER(VECTOR_ELT(tr, 6)),
      *rounds = INTEGER(VECTOR_ELT(tr, 7));
  double *sec = REAL(VECTOR_ELT(tr, 1)), *cpus = REAL(VECTOR_ELT(tr, 2)),
         *F = REAL(VECTOR_ELT(tr, 3));
  for (int i = 0; i < nt; i++) {
    step[i] = res->trace[i].step;
    sec[i] = res->trace[i].seconds + tree[0];
    cpus[i] = res->trace[i].cpu + tree[1];
    F[i] = res->trace[i].F;
    T[i] = res->trace[i].T;
    items[i] = res->trace[i].n_items;
    phase[i] = res->trace[i].phase;
    rounds[i] = res->trace[i].rounds;
  }
  UNPROTECT(1);
  return tr;
}

/* The fit for R: see the names below (fit_vdp reads them). */
static SEXP vdp_result_list(const vdp_result *res, const vdp_tree *tp, int D,
                            const double *seconds, const double *cov0) {
  const int T = res->T;
  const char *names[] = {"T", "free_energy", "N", "stick_a", "stick_b", "beta", "nu",
                         "m", "W", "tail", "trace", "n_items", "status", "seconds",
                         "splits_tried", "splits_accepted", "n_nodes", "deletes_accepted",
                         "interrupted", "worker_failed", "cov0", "capped"};
  SEXP out = PROTECT(svi_named_list(22, names));
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(T));
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal(res->F));
  double *srcs[] = {res->Nk, res->a, res->b, res->beta, res->nu};
  for (int j = 0; j < 5; j++) {
    SEXP v = Rf_allocVector(REALSXP, T);
    SET_VECTOR_ELT(out, 2 + j, v);
    memcpy(REAL(v), srcs[j], sizeof(double) * T);
  }
  SET_VECTOR_ELT(out, 7, real_matrix(res->m, D, T));
  SEXP W = Rf_alloc3DArray(REALSXP, D, D, T);
  SET_VECTOR_ELT(out, 8, W);
  memcpy(REAL(W), res->W, sizeof(double) * (size_t)D * D * T);
  SEXP tail = Rf_allocVector(REALSXP, D + 1);
  SET_VECTOR_ELT(out, 9, tail);
  memcpy(REAL(tail), res->tail_stats, sizeof(double) * (D + 1));
  double tree[2] = {seconds[0], seconds[2]};
  SET_VECTOR_ELT(out, 10, vdp_trace_list(res, tree));
  SET_VECTOR_ELT(out, 11, Rf_ScalarInteger(res->n_items));
  SET_VECTOR_ELT(out, 12, Rf_ScalarInteger(res->status));
  SEXP secs = Rf_allocVector(REALSXP, 4);
  SET_VECTOR_ELT(out, 13, secs);
  memcpy(REAL(secs), seconds, sizeof(double) * 4);
  SET_VECTOR_ELT(out, 14, Rf_ScalarInteger(res->n_splits_tried));
  SET_VECTOR_ELT(out, 15, Rf_ScalarInteger(res->n_splits_accepted));
  SET_VECTOR_ELT(out, 16, Rf_ScalarInteger(tp ? tp->n_nodes : 0));
  SET_VECTOR_ELT(out, 17, Rf_ScalarInteger(res->n_deletes));
  SET_VECTOR_ELT(out, 18, Rf_ScalarLogical(res->interrupted && !res->worker_failed));
  SET_VECTOR_ELT(out, 19, Rf_ScalarLogical(res->worker_failed));
  SET_VECTOR_ELT(out, 21, Rf_ScalarInteger(res->n_capped));
  if (cov0) SET_VECTOR_ELT(out, 20, real_matrix(cov0, D, D));
  UNPROTECT(1);
  return out;
}

/* X: N x D data (points in rows), center: its column means (the kernels see
 * the centred transpose, built here as scratch that the tree reorders in
 * place). prior: list(m0 (centred), beta0, nu0, W0inv: the D x D inverse
 * Wishart scale, or NULL for the default cov0 = cov(X) / 10, formed in C);
 * control: the named controls (vdp_read_control); hook: NULL, or (VDP only)
 * the R function that runs the per-point steps on the workers. */
SEXP ffi_vdp_fit(SEXP X, SEXP center, SEXP prior_, SEXP control, SEXP hook) {
  int n_prot = 0;
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int N = Rf_nrows(X), D = Rf_ncols(X);
  if (D < 1 || D > 10000 || N < 1)
    Rf_error("internal error: X must be a non-empty N x D matrix");
  svi_need_real(center, D, "center");
  svi_need_size((double)N, (double)D, 1e12, "the centred data");
  SEXP m0 = svi_opt(prior_, "m0"), W0inv = svi_opt(prior_, "W0inv");
  svi_need_real(m0, D, "m0");
  const double beta0 = svi_opt_real(prior_, "beta0", DBL_MIN, DBL_MAX);
  const double nu0 = svi_opt_real(prior_, "nu0", (double)D, DBL_MAX);
  /* W0inv NULL: the default prior, cov0 = cov(X) / 10, the covariance formed
   * in the pass that builds the centred transpose */
  const int own_cov0 = Rf_isNull(W0inv);
  if (!own_cov0) svi_need_real(W0inv, (R_xlen_t)D * D, "W0inv");
  vdp_control ctl;
  int leaf_size, lazy;
  vdp_read_control(control, N, &ctl, &leaf_size, &lazy);
  svi_need_size((double)ctl.max_K * D, D, 1e12, "Fast-VDP component storage");
  vdp_rctx rctx;
  vdp_remote remote;
  if (!Rf_isNull(hook)) {
    if (!Rf_isFunction(hook)) Rf_error("internal error: hook must be a function");
    rctx.hook = hook;
    rctx.nb = ctl.n_batches;
    rctx.D = D;
    rctx.P = svi_packed_size(D);
    rctx.SS = 2 + D + rctx.P;
    rctx.bounds = ctl.batch_bounds;
    remote.ctx = &rctx;
    remote.full = remote_full;
    remote.split_proj = remote_split_proj;
    remote.split_begin = remote_split_begin;
    remote.split_iter = remote_split_iter;
    ctl.remote = &remote;
  }

  SEXP mem = PROTECT(vdp_mem_new());
  n_prot++;
  double *Xt = (double *)vdp_mem_alloc(mem, (size_t)N * D, sizeof(double));
  double *cov0 = NULL, *W0 = own_cov0 ? NULL : REAL(W0inv);
  /* with the kd-tree the default cov0 comes from the root's statistics
   * (count, sum and sum of outer products of the centred data, summed by
   * the build anyway), so the pass that builds the centred transpose does
   * not also form the covariance (136 products per point at D = 16) */
  const int cov_from_tree = own_cov0 && ctl.kdtree;
  if (own_cov0) {
    cov0 = (double *)R_alloc((size_t)D * D, sizeof(double));
    W0 = (double *)R_alloc((size_t)D * D, sizeof(double));
  }
  double seconds[4] = {0, 0, 0, 0}; /* tree wall, fit wall, tree CPU, fit CPU */
  vdp_tree tree, *tp = NULL;
  if (ctl.kdtree) vdp_alloc_tree(mem, &tree, Xt, N, D, leaf_size);
  /* with the tree, the pass that writes the centred transpose also writes
   * the root's keys where the build would find them by a pass of its own
   * over the points (vdp_tree_root_direction; the same tree) */
  double *root_v = (double *)R_alloc(D, sizeof(double));
  if (own_cov0 && !cov_from_tree) {
    double *cw = (double *)R_alloc(vdp_data_cov_work(D), sizeof(double));
    vdp_data_transpose_cov(REAL(X), N, D, REAL(center), Xt, cov0, cw);
  } else if (ctl.kdtree &&
             vdp_tree_root_direction(&tree, lazy, N, REAL(X), REAL(center), root_v)) {
    vdp_data_transpose_keys(REAL(X), N, D, REAL(center), Xt, root_v, tree.key);
    tree.root_keyed = 1;
  } else {
    vdp_data_transpose(REAL(X), N, D, REAL(center), Xt);
  }
  if (ctl.kdtree) {
    /* (the root's keys, written by the pass above, are outside these
     * seconds: timings$tree is the rest of the build) */
    double t0 = wall(), c0 = cpu();
    vdp_tree_build(&tree, lazy);
    seconds[0] = wall() - t0;
    seconds[2] = cpu() - c0;
    tp = &tree;
  }
  if (own_cov0) {
    if (cov_from_tree) vdp_tree_root_cov(&tree, cov0);
    const double df = nu0 - D - 1;
    for (size_t j = 0; j < (size_t)D * D; j++) {
      cov0[j] /= 10;
      W0[j] = cov0[j] * df;
    }
  }
  mix_prior prior;
  gauss_nw prior_q;
  if (vdp_make_prior(W0, m0, beta0, nu0, D, &prior, &prior_q)) {
    if (!own_cov0)
      Rf_error("internal error: prior scale matrix is not positive definite");
    /* the default cov0 is singular: fit_vdp says so */
    const char *nm[] = {"cov0_not_pd"};
    SEXP out = PROTECT(svi_named_list(1, nm));
    n_prot++;
    SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(1));
    vdp_mem_free(mem);
    UNPROTECT(n_prot);
    return out;
  }

  vdp_result res;
  vdp_alloc_result(&res, ctl.max_K, D, ctl.max_iter);
  double c_fit = cpu();
  vdp_fit(Xt, N, D, tp, &prior, &prior_q, &ctl, &res);
  seconds[3] = cpu() - c_fit;
  seconds[1] = res.seconds_total;
  res.seconds_tree = seconds[0];
  SEXP out = vdp_result_list(&res, tp, D, seconds, own_cov0 ? cov0 : NULL);
  vdp_mem_free(mem);
  UNPROTECT(n_prot);
  return out;
}

/* X: N x D data. Returns list(center, nonfinite, constant, cov): the column
 * means, whether any value is not finite, which columns are constant, and
 * (when want_cov and all is finite) the sample covariance, else NULL. */
SEXP ffi_vdp_prepare(SEXP X, SEXP want_cov) {
  int n_prot = 0;
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const R_xlen_t N = Rf_nrows(X);
  const int D = Rf_ncols(X);
  const int wc = svi_flag_arg(want_cov, "want_cov");
  const char *names[] = {"center", "nonfinite", "constant", "cov"};
  SEXP out = PROTECT(svi_named_list(4, names));
  n_prot++;
  SEXP center = Rf_allocVector(REALSXP, D);
  SET_VECTOR_ELT(out, 0, center);
  SEXP constant = Rf_allocVector(LGLSXP, D);
  SET_VECTOR_ELT(out, 2, constant);
  int nonfinite = 0;
  if (N > 0 && D > 0) vdp_data_scan(REAL(X), N, D, REAL(center), &nonfinite, LOGICAL(constant));
  SET_VECTOR_ELT(out, 1, Rf_ScalarLogical(nonfinite));
  if (wc && !nonfinite && N > 0 && D > 0) {
    SEXP cov = Rf_allocMatrix(REALSXP, D, D);
    SET_VECTOR_ELT(out, 3, cov);
    double *work = (double *)R_alloc(vdp_data_cov_work(D), sizeof(double));
    vdp_data_cov(REAL(X), N, D, REAL(center), REAL(cov), work);
  }
  UNPROTECT(n_prot);
  return out;
}

/* X: N x D points; M: D x K1 means; U: D x D x K1 upper Cholesky factors of
 * the Wishart scales; par: K1 x 5 per-component constants (vdp-predict.c);
 * type: 0 cluster (1-based column index), 1 responsibilities, 2 log density. */
SEXP ffi_vdp_predict(SEXP X, SEXP M, SEXP U, SEXP par, SEXP type, SEXP threads) {
  int n_prot = 0;
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int N = Rf_nrows(X), D = Rf_ncols(X);
  svi_need_matrix(M, REALSXP, D, -1, "M");
  const int K1 = Rf_ncols(M);
  if (K1 < 1) Rf_error("internal error: no components to predict with");
  svi_need_real(U, (R_xlen_t)D * D * K1, "U");
  svi_need_matrix(par, REALSXP, K1, 5, "par");
  vdp_predict_args a;
  a.N = N;
  a.D = D;
  a.K1 = K1;
  a.type = svi_int_arg(type, 0, 3, "type");
  a.threads = svi_threads_from_r(threads);
  a.X = REAL(X);
  a.M = REAL(M);
  a.U = REAL(U);
  a.par = REAL(par);
  a.scratch = (double *)R_alloc((size_t)(a.threads > 0 ? a.threads : 1) * (2 * D + 2 * K1),
                                sizeof(double));
  a.out_int = NULL;
  a.out = NULL;
  SEXP out;
  if (a.type == 0) {
    out = PROTECT(Rf_allocVector(INTSXP, N));
    n_prot++;
    a.out_int = INTEGER(out);
  } else {
    if (a.type == 1) out = PROTECT(Rf_allocMatrix(REALSXP, N, K1));
    else out = PROTECT(Rf_allocVector(REALSXP, N));
    n_prot++;
    a.out = REAL(out);
  }
  vdp_predict(&a);
  if (a.type == 0)
    for (int i = 0; i < N; i++) INTEGER(out)[i] += 1;
  UNPROTECT(n_prot);
  return out;
}

/* ---- worker side: one batch's points Xt (D x n, centred like the master's) ---- */

SEXP ffi_vdp_worker_full(SEXP Xt, SEXP G, SEXP threads) {
  int n_prot = 0;
  svi_need_matrix(Xt, REALSXP, -1, -1, "Xt");
  const int D = Rf_nrows(Xt), n = Rf_ncols(Xt), P = svi_packed_size(D);
  svi_need_matrix(G, REALSXP, 4 + D + P, -1, "G");
  const int T = Rf_ncols(G) - 1;
  if (T < 1) Rf_error("internal error: G needs a column per component and the tail");
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)(T + 1) * (2 + D + P)));
  n_prot++;
  vdp_worker_full(REAL(Xt), n, D, T, REAL(G), svi_threads_from_r(threads), REAL(out));
  UNPROTECT(n_prot);
  return out;
}

/* A split candidate's hook arguments on a worker, read and checked once:
 * the worker's points Xt (D x n) and the step's G, c (the component), mu
 * and v (its mean and principal axis). */
typedef struct {
  int D, n, P, T, k;
  const double *X, *G, *mu, *v;
} split_step_args;

static split_step_args split_step_from_r(SEXP Xt, SEXP step) {
  split_step_args a;
  svi_need_matrix(Xt, REALSXP, -1, -1, "Xt");
  a.D = Rf_nrows(Xt);
  a.n = Rf_ncols(Xt);
  a.P = svi_packed_size(a.D);
  SEXP G = svi_opt(step, "G"), mu = svi_opt(step, "mu"), v = svi_opt(step, "v");
  svi_need_matrix(G, REALSXP, 4 + a.D + a.P, -1, "G");
  a.T = Rf_ncols(G) - 1;
  if (a.T < 1) Rf_error("internal error: G needs a column per component and the tail");
  a.k = svi_opt_int(step, "c", 0, a.T - 1);
  svi_need_real(mu, a.D, "mu");
  svi_need_real(v, a.D, "v");
  a.X = REAL(Xt);
  a.G = REAL(G);
  a.mu = REAL(mu);
  a.v = REAL(v);
  return a;
}

/* step: list(G, c, mu, v), the master's hook arguments of split_proj:
 * returns the projection and the responsibility of each point (2 x n). */
SEXP ffi_vdp_worker_split_proj(SEXP Xt, SEXP step, SEXP threads) {
  const split_step_args a = split_step_from_r(Xt, step);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 2 * (R_xlen_t)a.n));
  vdp_worker_split_proj(a.X, a.n, a.D, a.T, a.G, a.k, a.mu, a.v,
                        svi_threads_from_r(threads), REAL(out));
  UNPROTECT(1);
  return out;
}

/* step: list(G, c, mu, v, t), the master's hook arguments of split_begin. */
SEXP ffi_vdp_worker_split_begin(SEXP Xt, SEXP step, SEXP threads) {
  int n_prot = 0;
  const split_step_args a = split_step_from_r(Xt, step);
  const int D = a.D, n = a.n, P = a.P;
  int *ai = (int *)R_alloc(n > 0 ? n : 1, sizeof(int));
  double *am = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  double *aq = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  SEXP sum = PROTECT(Rf_allocVector(REALSXP, 3 + 2 * (R_xlen_t)(2 + D + P)));
  n_prot++;
  const double t = svi_opt_real(step, "t", -INFINITY, INFINITY);
  int na = vdp_worker_split_begin(a.X, n, D, a.T, a.G, a.k, a.mu, a.v, t,
                                  svi_threads_from_r(threads), REAL(sum), ai, am, aq);
  const char *nm[] = {"summary", "act_item", "act_m", "act_qi"};
  SEXP out = PROTECT(svi_named_list(4, nm));
  n_prot++;
  SET_VECTOR_ELT(out, 0, sum);
  SEXP vi = Rf_allocVector(INTSXP, na);
  SET_VECTOR_ELT(out, 1, vi);
  memcpy(INTEGER(vi), ai, sizeof(int) * na);
  SEXP vm = Rf_allocVector(REALSXP, na);
  SET_VECTOR_ELT(out, 2, vm);
  memcpy(REAL(vm), am, sizeof(double) * na);
  SEXP vq = Rf_allocVector(REALSXP, na);
  SET_VECTOR_ELT(out, 3, vq);
  memcpy(REAL(vq), aq, sizeof(double) * na);
  UNPROTECT(n_prot);
  return out;
}

/* active: list(act_item, act_m, act_qi), the batch's active items as
 * ffi_vdp_worker_split_begin returned them; step: list(update, gpair, ei,
 * ej), the master's hook arguments of split_iter. */
SEXP ffi_vdp_worker_split_iter(SEXP Xt, SEXP active, SEXP step, SEXP threads) {
  int n_prot = 0;
  svi_need_matrix(Xt, REALSXP, -1, -1, "Xt");
  const int D = Rf_nrows(Xt), n = Rf_ncols(Xt), P = svi_packed_size(D);
  SEXP act_item = svi_opt(active, "act_item"), act_m = svi_opt(active, "act_m"),
       act_qi = svi_opt(active, "act_qi"), gpair = svi_opt(step, "gpair");
  svi_need_int(act_item, -1, "act_item");
  const int na = (int)XLENGTH(act_item);
  svi_need_real(act_m, na, "act_m");
  svi_need_real(act_qi, na, "act_qi");
  for (int i = 0; i < na; i++)
    if (INTEGER(act_item)[i] >= 0 || INTEGER(act_item)[i] < -n)
      Rf_error("internal error: act_item out of range");
  svi_need_matrix(gpair, REALSXP, 4 + D + P, 2, "gpair");
  const char *nm[] = {"summary", "act_qi"};
  SEXP out = PROTECT(svi_named_list(2, nm));
  n_prot++;
  SEXP sum = Rf_allocVector(REALSXP, 2 * (R_xlen_t)(2 + D + P));
  SET_VECTOR_ELT(out, 0, sum);
  SEXP qi = Rf_duplicate(act_qi);
  SET_VECTOR_ELT(out, 1, qi);
  vdp_worker_split_iter(REAL(Xt), n, D, na, INTEGER(act_item), REAL(act_m), REAL(qi),
                        svi_opt_flag(step, "update"), REAL(gpair),
                        svi_opt_real(step, "ei", -INFINITY, INFINITY),
                        svi_opt_real(step, "ej", -INFINITY, INFINITY),
                        svi_threads_from_r(threads), REAL(sum));
  UNPROTECT(n_prot);
  return out;
}

/* vdp_split_cut over the projections p and weights w (two double vectors of
 * one length), for the test holding it to its R reference */
SEXP ffi_vdp_split_cut(SEXP p, SEXP w) {
  if (!Rf_isReal(p) || !Rf_isReal(w) || XLENGTH(p) != XLENGTH(w) || XLENGTH(p) > INT_MAX)
    Rf_error("internal error: p and w must be double vectors of one length");
  const int n = (int)XLENGTH(p);
  void *scr = R_alloc(vdp_split_cut_scratch(n), 1);
  return Rf_ScalarReal(vdp_split_cut(n, REAL(p), REAL(w), scr));
}

/* vdp_spread_loss over two numeric vectors of the same length (for the test
 * holding it to its R reference, ref_vdp_spread_loss) */
SEXP ffi_vdp_spread_loss(SEXP margin, SEXP sd) {
  if (!Rf_isReal(margin) || !Rf_isReal(sd) || XLENGTH(margin) != XLENGTH(sd))
    Rf_error("internal error: margin and sd must be double vectors of one length");
  R_xlen_t n = XLENGTH(margin);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  for (R_xlen_t i = 0; i < n; i++) REAL(out)[i] = vdp_spread_loss(REAL(margin)[i], REAL(sd)[i]);
  UNPROTECT(1);
  return out;
}
