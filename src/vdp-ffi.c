/* Glue of Fast-VDP: unpacks the R arguments, builds the kd-tree, runs the
 * kernel (vdp.c) and packs the fit. */
#include <float.h>
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

/* X: N x D data (points in rows), center: its column means (the kernels see
 * the centred transpose, built here as scratch that the tree reorders in
 * place). ctl_int: kdtree, candidates,
 * initial_depth, max_K, leaf_size, max_iter, partial_iter, progress,
 * lazy_tree, deletes.
 * ctl_dbl: a1, a2, tol, update_tol, expand_threshold, expand_sd. */
/* ---- remote per-point steps: the master's side of vdp_remote ---- */
typedef struct {
  SEXP hook; /* function(op, args): a list of one numeric vector per batch, or NULL */
  int nb, D, P, SS;
} vdp_rctx;

/* Calls hook(op, args) and copies its n_batches results of `each` doubles
 * into out; 1 when the hook failed or returned something else. */
static int remote_call(vdp_rctx *c, const char *op, SEXP args, double *out, size_t each) {
  int n_prot = 0, err = 0, bad = 0;
  SEXP sop = PROTECT(Rf_mkString(op));
  n_prot++;
  SEXP call = PROTECT(Rf_lang3(c->hook, sop, args));
  n_prot++;
  SEXP res = PROTECT(R_tryEval(call, R_GlobalEnv, &err));
  n_prot++;
  if (err || TYPEOF(res) != VECSXP || XLENGTH(res) != c->nb) bad = 1;
  for (int b = 0; b < c->nb && !bad; b++) {
    SEXP v = VECTOR_ELT(res, b);
    if (TYPEOF(v) != REALSXP || (size_t)XLENGTH(v) != each) bad = 1;
    else memcpy(out + (size_t)b * each, REAL(v), sizeof(double) * each);
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
  int r = remote_call(c, "full", args, out, (size_t)(T + 1) * c->SS);
  UNPROTECT(1);
  return r;
}

static int remote_split_begin(void *ctx, int T, const double *lastG, int k, const double *mu,
                              const double *v, double *out) {
  vdp_rctx *c = (vdp_rctx *)ctx;
  const char *nm[] = {"G", "c", "mu", "v"};
  SEXP args = PROTECT(svi_named_list(4, nm));
  SET_VECTOR_ELT(args, 0, real_matrix(lastG, 4 + c->D + c->P, T + 1));
  SET_VECTOR_ELT(args, 1, Rf_ScalarInteger(k));
  SET_VECTOR_ELT(args, 2, real_matrix(mu, c->D, 1));
  SET_VECTOR_ELT(args, 3, real_matrix(v, c->D, 1));
  int r = remote_call(c, "split_begin", args, out, 3 + 2 * (size_t)c->SS);
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
  int r = remote_call(c, "split_iter", args, out, 2 * (size_t)c->SS);
  UNPROTECT(1);
  return r;
}

/* hook: NULL, or (VDP only) the R function that runs the per-point steps on
 * the workers; batch_bounds: n_batches + 1 row offsets (0, ..., N). */
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

SEXP ffi_vdp_fit(SEXP X, SEXP center, SEXP m0, SEXP beta0, SEXP nu0, SEXP W0inv, SEXP ctl_int,
                 SEXP ctl_dbl, SEXP seed, SEXP threads, SEXP batch_bounds, SEXP hook) {
  int n_prot = 0;
  if (TYPEOF(X) != REALSXP || TYPEOF(ctl_int) != INTSXP || XLENGTH(ctl_int) != 10 ||
      TYPEOF(ctl_dbl) != REALSXP || XLENGTH(ctl_dbl) != 6)
    Rf_error("internal error: malformed arguments to ffi_vdp_fit");
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int N = Rf_nrows(X), D = Rf_ncols(X);
  const int *ci = INTEGER(ctl_int);
  const double *cd = REAL(ctl_dbl);
  if (D < 1 || D > 10000 || N < 1) Rf_error("internal error: X must be a non-empty N x D matrix");
  svi_need_real(center, D, "center");
  svi_need_size((double)N, (double)D, 1e12, "the centred data");
  svi_need_real(m0, D, "m0");
  svi_real_arg(beta0, DBL_MIN, DBL_MAX, "beta0");
  svi_real_arg(nu0, (double)D, DBL_MAX, "nu0");
  /* W0inv NULL: the default prior, cov0 = cov(X) / 10, the covariance formed
   * in the pass that builds the centred transpose */
  const int own_cov0 = Rf_isNull(W0inv);
  if (!own_cov0) svi_need_real(W0inv, (R_xlen_t)D * D, "W0inv");
  SEXP mem = PROTECT(vdp_mem_new());
  n_prot++;
  double *Xt = (double *)vdp_mem_alloc(mem, (size_t)N * D, sizeof(double));
  double *cov0 = NULL, *W0 = own_cov0 ? NULL : REAL(W0inv);
  /* with the kd-tree the default cov0 comes from the root's statistics
   * (count, sum and sum of outer products of the centred data, summed by
   * the build anyway), so the pass that builds the centred transpose does
   * not also form the covariance (136 products per point at D = 16) */
  const int cov_from_tree = own_cov0 && ci[0] == 1;
  if (own_cov0) {
    cov0 = (double *)R_alloc((size_t)D * D, sizeof(double));
    W0 = (double *)R_alloc((size_t)D * D, sizeof(double));
  }
  if (own_cov0 && !cov_from_tree) {
    double *cw = (double *)R_alloc(vdp_data_cov_work(D), sizeof(double));
    vdp_data_transpose_cov(REAL(X), N, D, REAL(center), Xt, cov0, cw);
  } else {
    vdp_data_transpose(REAL(X), N, D, REAL(center), Xt);
  }
  if (ci[0] < 0 || ci[0] > 1 || ci[1] < 1 || ci[2] < 0 || ci[2] > 30 || ci[3] < 1 ||
      ci[3] > 1000000 || ci[4] < 1 || ci[5] < 0 || ci[6] < 0 || ci[8] < 0 || ci[8] > 1 || ci[9] < 0 || ci[9] > 1)
    Rf_error("internal error: Fast-VDP integer controls out of range");
  for (int j = 0; j < 6; j++)
    if (!isfinite(cd[j])) Rf_error("internal error: Fast-VDP controls must be finite");
  svi_need_size((double)ci[3] * D, D, 1e12, "Fast-VDP component storage");
  vdp_control ctl;
  ctl.kdtree = ci[0];
  ctl.candidates = ci[1];
  ctl.initial_depth = ci[2];
  ctl.max_K = ci[3];
  int leaf_size = ci[4];
  ctl.max_iter = ci[5];
  ctl.partial_iter = ci[6];
  ctl.progress = ci[7];
  ctl.deletes = ci[9];
  ctl.a1 = cd[0];
  ctl.a2 = cd[1];
  ctl.tol = cd[2];
  ctl.update_tol = cd[3];
  ctl.expand_threshold = cd[4];
  ctl.expand_sd = cd[5];
  ctl.seed = svi_seed_from_r(seed);
  ctl.threads = svi_threads_from_r(threads);
  svi_need_int(batch_bounds, -1, "batch_bounds");
  ctl.n_batches = (int)XLENGTH(batch_bounds) - 1;
  ctl.batch_bounds = INTEGER(batch_bounds);
  if (ctl.n_batches < 1 || ctl.batch_bounds[0] != 0 || ctl.batch_bounds[ctl.n_batches] != N)
    Rf_error("internal error: malformed batch_bounds");
  for (int b = 0; b < ctl.n_batches; b++)
    if (ctl.batch_bounds[b + 1] < ctl.batch_bounds[b])
      Rf_error("internal error: malformed batch_bounds");
  vdp_rctx rctx;
  vdp_remote remote;
  ctl.remote = NULL;
  if (!Rf_isNull(hook)) {
    if (!Rf_isFunction(hook)) Rf_error("internal error: hook must be a function");
    rctx.hook = hook;
    rctx.nb = ctl.n_batches;
    rctx.D = D;
    rctx.P = svi_packed_size(D);
    rctx.SS = 2 + D + rctx.P;
    remote.ctx = &rctx;
    remote.full = remote_full;
    remote.split_begin = remote_split_begin;
    remote.split_iter = remote_split_iter;
    ctl.remote = &remote;
  }

  double t_tree = 0.0, c_tree = 0.0;
  vdp_tree tree, *tp = NULL;
  if (ctl.kdtree) {
    double t0 = wall(), c0 = cpu();
    int nn = vdp_tree_count_nodes(N, leaf_size);
    int P = svi_packed_size(D);
    tree.N = N;
    tree.D = D;
    tree.P = P;
    tree.leaf_size = leaf_size;
    tree.max_nodes = nn;
    tree.bucket = VDP_TREE_BUCKET > leaf_size ? VDP_TREE_BUCKET : leaf_size;
    tree.X = Xt;
    tree.perm = (int *)vdp_mem_alloc(mem, N, sizeof(int));
    tree.start = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
    tree.count = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
    tree.left = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
    tree.right = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
    tree.depth = (int *)vdp_mem_alloc(mem, nn, sizeof(int));
    tree.s1 = (double *)vdp_mem_alloc(mem, (size_t)nn * D, sizeof(double));
    tree.s2 = (double *)vdp_mem_alloc(mem, (size_t)nn * P, sizeof(double));
    tree.key = (double *)vdp_mem_alloc(mem, 2 * (size_t)N, sizeof(double));
    tree.scratch = (double *)R_alloc((size_t)D * D + 3 * D, sizeof(double));
    vdp_tree_build(&tree, ci[8]);
    tp = &tree;
    t_tree = wall() - t0;
    c_tree = cpu() - c0;
  }

  if (own_cov0) {
    if (cov_from_tree) vdp_tree_root_cov(&tree, cov0);
    const double df = Rf_asReal(nu0) - D - 1;
    for (size_t j = 0; j < (size_t)D * D; j++) {
      cov0[j] /= 10;
      W0[j] = cov0[j] * df;
    }
  }
  /* the one prior type: the mixtures' Normal-Wishart mix_prior, B0 = W0^-1
   * packed (W0 arrives full and symmetric) */
  const int Pd = svi_packed_size(D);
  double *B0 = (double *)R_alloc(Pd, sizeof(double));
  for (int i = 0, idx = 0; i < D; i++)
    for (int j = 0; j <= i; j++) B0[idx++] = W0[j + (size_t)i * D];
  mix_prior prior;
  memset(&prior, 0, sizeof(prior));
  prior.lik = MIX_GAUSS;
  prior.kappa0 = Rf_asReal(beta0);
  prior.nu0 = Rf_asReal(nu0);
  prior.m0 = REAL(m0);
  prior.B0 = B0;
  gauss_nw prior_q;
  gauss_nw_bind(&prior_q, D, (double *)R_alloc(gauss_nw_doubles(D), sizeof(double)));
  double *work = (double *)R_alloc(2 * (size_t)Pd, sizeof(double));
  if (gauss_nw_posterior(&prior_q, &prior, 0.0, NULL, NULL, work)) {
    if (!own_cov0) Rf_error("internal error: prior scale matrix is not positive definite");
    /* the default cov0 is singular: fit_vdp says so */
    const char *nm[] = {"cov0_not_pd"};
    SEXP out = PROTECT(svi_named_list(1, nm));
    n_prot++;
    SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(1));
    vdp_mem_free(mem);
    UNPROTECT(n_prot);
    return out;
  }

  const int mK = ctl.max_K;
  vdp_result res;
  memset(&res, 0, sizeof(res));
  res.Nk = (double *)R_alloc(mK, sizeof(double));
  res.a = (double *)R_alloc(mK, sizeof(double));
  res.b = (double *)R_alloc(mK, sizeof(double));
  res.beta = (double *)R_alloc(mK, sizeof(double));
  res.nu = (double *)R_alloc(mK, sizeof(double));
  res.m = (double *)R_alloc((size_t)mK * D, sizeof(double));
  res.W = (double *)R_alloc((size_t)mK * D * D, sizeof(double));
  res.tail_stats = (double *)R_alloc(D + 1, sizeof(double));
  /* the kernel stops recording at trace_cap rows: cap it (in double, it
   * could overflow an int for max_K x max_iter near their limits) */
  double cap = (double)mK * (3.0 * ctl.max_iter + 2) + 16;
  res.trace_cap = cap > 1e7 ? 10000000 : (int)cap;
  res.trace = (vdp_trace_row *)R_alloc(res.trace_cap, sizeof(vdp_trace_row));
  double c_fit = cpu();
  prior.logdet_B0 = -prior_q.logdet_W;
  vdp_fit(Xt, N, D, tp, &prior, &prior_q, &ctl, &res);
  c_fit = cpu() - c_fit;
  res.seconds_tree = t_tree;

  const int T = res.T;
  const char *names[] = {"T", "free_energy", "N", "stick_a", "stick_b", "beta", "nu",
                         "m", "W", "tail", "trace", "n_items", "status", "seconds",
                         "splits_tried", "splits_accepted", "n_nodes", "deletes_accepted",
                         "interrupted", "worker_failed", "cov0", "capped"};
  SEXP out = PROTECT(svi_named_list(22, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(T));
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal(res.F));
  double *srcs[] = {res.Nk, res.a, res.b, res.beta, res.nu};
  for (int j = 0; j < 5; j++) {
    SEXP v = Rf_allocVector(REALSXP, T);
    SET_VECTOR_ELT(out, 2 + j, v);
    memcpy(REAL(v), srcs[j], sizeof(double) * T);
  }
  SEXP m = Rf_allocMatrix(REALSXP, D, T);
  SET_VECTOR_ELT(out, 7, m);
  memcpy(REAL(m), res.m, sizeof(double) * (size_t)D * T);
  SEXP W = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)D * D * T));
  n_prot++;
  memcpy(REAL(W), res.W, sizeof(double) * (size_t)D * D * T);
  SEXP dim = PROTECT(Rf_allocVector(INTSXP, 3));
  n_prot++;
  INTEGER(dim)[0] = D;
  INTEGER(dim)[1] = D;
  INTEGER(dim)[2] = T;
  Rf_setAttrib(W, R_DimSymbol, dim);
  SET_VECTOR_ELT(out, 8, W);
  SEXP tail = Rf_allocVector(REALSXP, D + 1);
  SET_VECTOR_ELT(out, 9, tail);
  memcpy(REAL(tail), res.tail_stats, sizeof(double) * (D + 1));
  const char *tn[] = {"step", "seconds", "free_energy", "T", "outer_nodes", "phase"};
  SEXP tr = PROTECT(svi_named_list(6, tn));
  n_prot++;
  int nt = res.n_trace;
  SEXP c0 = Rf_allocVector(INTSXP, nt);
  SET_VECTOR_ELT(tr, 0, c0);
  SEXP c1 = Rf_allocVector(REALSXP, nt);
  SET_VECTOR_ELT(tr, 1, c1);
  SEXP c2 = Rf_allocVector(REALSXP, nt);
  SET_VECTOR_ELT(tr, 2, c2);
  SEXP c3 = Rf_allocVector(INTSXP, nt);
  SET_VECTOR_ELT(tr, 3, c3);
  SEXP c4 = Rf_allocVector(INTSXP, nt);
  SET_VECTOR_ELT(tr, 4, c4);
  SEXP c5 = Rf_allocVector(INTSXP, nt);
  SET_VECTOR_ELT(tr, 5, c5);
  for (int i = 0; i < nt; i++) {
    INTEGER(c0)[i] = res.trace[i].step;
    REAL(c1)[i] = res.trace[i].seconds + t_tree;
    REAL(c2)[i] = res.trace[i].F;
    INTEGER(c3)[i] = res.trace[i].T;
    INTEGER(c4)[i] = res.trace[i].n_items;
    INTEGER(c5)[i] = res.trace[i].phase;
  }
  SET_VECTOR_ELT(out, 10, tr);
  SET_VECTOR_ELT(out, 11, Rf_ScalarInteger(res.n_items));
  SET_VECTOR_ELT(out, 12, Rf_ScalarInteger(res.status));
  SEXP secs = Rf_allocVector(REALSXP, 4);
  SET_VECTOR_ELT(out, 13, secs);
  REAL(secs)[0] = t_tree;
  REAL(secs)[1] = res.seconds_total;
  REAL(secs)[2] = c_tree;
  REAL(secs)[3] = c_fit;
  SET_VECTOR_ELT(out, 14, Rf_ScalarInteger(res.n_splits_tried));
  SET_VECTOR_ELT(out, 15, Rf_ScalarInteger(res.n_splits_accepted));
  SET_VECTOR_ELT(out, 16, Rf_ScalarInteger(tp ? tp->n_nodes : 0));
  SET_VECTOR_ELT(out, 17, Rf_ScalarInteger(res.n_deletes));
  SET_VECTOR_ELT(out, 18, Rf_ScalarLogical(res.interrupted && !res.worker_failed));
  SET_VECTOR_ELT(out, 19, Rf_ScalarLogical(res.worker_failed));
  SET_VECTOR_ELT(out, 21, Rf_ScalarInteger(res.n_capped));
  if (own_cov0) SET_VECTOR_ELT(out, 20, real_matrix(cov0, D, D));
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

SEXP ffi_vdp_worker_split_begin(SEXP Xt, SEXP G, SEXP c, SEXP mu, SEXP v, SEXP threads) {
  int n_prot = 0;
  svi_need_matrix(Xt, REALSXP, -1, -1, "Xt");
  const int D = Rf_nrows(Xt), n = Rf_ncols(Xt), P = svi_packed_size(D);
  svi_need_matrix(G, REALSXP, 4 + D + P, -1, "G");
  const int T = Rf_ncols(G) - 1;
  if (T < 1) Rf_error("internal error: G needs a column per component and the tail");
  const int k = svi_int_arg(c, 0, T - 1, "c");
  svi_need_real(mu, D, "mu");
  svi_need_real(v, D, "v");
  int *ai = (int *)R_alloc(n > 0 ? n : 1, sizeof(int));
  double *am = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  double *aq = (double *)R_alloc(n > 0 ? n : 1, sizeof(double));
  SEXP sum = PROTECT(Rf_allocVector(REALSXP, 3 + 2 * (R_xlen_t)(2 + D + P)));
  n_prot++;
  int na = vdp_worker_split_begin(REAL(Xt), n, D, T, REAL(G), k, REAL(mu), REAL(v),
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

SEXP ffi_vdp_worker_split_iter(SEXP Xt, SEXP act_item, SEXP act_m, SEXP act_qi, SEXP update,
                               SEXP gpair, SEXP ei, SEXP ej, SEXP threads) {
  int n_prot = 0;
  svi_need_matrix(Xt, REALSXP, -1, -1, "Xt");
  const int D = Rf_nrows(Xt), n = Rf_ncols(Xt), P = svi_packed_size(D);
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
                        svi_flag_arg(update, "update"), REAL(gpair), Rf_asReal(ei),
                        Rf_asReal(ej), svi_threads_from_r(threads), REAL(sum));
  UNPROTECT(n_prot);
  return out;
}
