/* Glue of the mixture engine: unpacks SEXPs into the views of mix.h,
 * allocates outputs and scratch, calls the kernels of mix-local.c,
 * mix-global.c, mix-init.c and obs-*.c. The order of batches and laps and
 * the memoized caches live in R/mixture-train.R; every per-point, per-component
 * and per-summary computation is here. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "ffi.h"
#include "mix.h"
#include "obs-gauss.h"
#include "mix-simd.h"

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* NULL, or a double vector of length n (an internal error otherwise). */
static const double *real_or_null(SEXP x, R_xlen_t n, const char *what) {
  if (Rf_isNull(x)) return NULL;
  svi_need_real(x, n, what);
  return REAL(x);
}

/* prior: the named list(lik, prior, conc, kappa0, nu0, eta, m0, B0, b0,
 * logdet_B0, D) of mix_hyper() in R, read by name (src/ffi.h). */
static mix_prior unpack_prior(SEXP p, int *D) {
  mix_prior pr;
  memset(&pr, 0, sizeof(pr));
  pr.lik = svi_opt_int(p, "lik", MIX_GAUSS, MIX_LIK_MAX);
  pr.obs = mix_obs_of(pr.lik); /* the observation model, chosen once */
  pr.prior = svi_opt_int(p, "prior", MIX_DIRICHLET, MIX_DP);
  pr.conc = Rf_asReal(svi_opt(p, "conc"));
  pr.kappa0 = Rf_asReal(svi_opt(p, "kappa0"));
  pr.nu0 = Rf_asReal(svi_opt(p, "nu0"));
  pr.eta = Rf_asReal(svi_opt(p, "eta"));
  *D = svi_opt_int(p, "D", 1, 1000000);
  R_xlen_t tri = (R_xlen_t)*D * (*D + 1) / 2;
  pr.m0 = real_or_null(svi_opt(p, "m0"), *D, "m0");
  pr.B0 = real_or_null(svi_opt(p, "B0"), tri, "B0");
  pr.b0 = real_or_null(svi_opt(p, "b0"), *D, "b0");
  pr.logdet_B0 = Rf_asReal(svi_opt(p, "logdet_B0"));
  if ((pr.obs->needs_m0 && !pr.m0) || (pr.obs->needs_B0 && !pr.B0) ||
      (pr.obs->needs_b0 && !pr.b0))
    Rf_error("internal error: the prior lacks a parameter of its likelihood");
  return pr;
}

/* data: a numeric N x D matrix, or list(doc_ptr, term, count) for a model
 * of documents. */
static mix_data unpack_data(SEXP data, const mix_obs *obs, int D) {
  mix_data x;
  memset(&x, 0, sizeof(x));
  x.obs = obs;
  x.D = D;
  if (obs->documents) {
    svi_need_list(data, -1, "data");
    if (XLENGTH(data) < 3)
      Rf_error("internal error: data must be list(doc_ptr, term, count)");
    SEXP V = PROTECT(Rf_ScalarInteger(D));
    x.dtm =
        svi_dtm_view(VECTOR_ELT(data, 0), VECTOR_ELT(data, 1), VECTOR_ELT(data, 2), V);
    UNPROTECT(1);
    x.N = x.dtm.D;
  } else {
    svi_need_matrix(data, REALSXP, -1, D, "data");
    if (Rf_ncols(data) != D)
      Rf_error("internal error: data must be a double matrix with %d columns", D);
    x.N = Rf_nrows(data);
    x.X = REAL(data);
  }
  return x;
}

static void check_state(SEXP Nk, SEXP S, const mix_obs *obs, int D, int *K) {
  *K = (int)XLENGTH(Nk);
  if (TYPEOF(Nk) != REALSXP || TYPEOF(S) != REALSXP || *K < 1 || XLENGTH(Nk) > INT_MAX ||
      XLENGTH(S) != obs->stat_size(D) * (R_xlen_t)*K)
    Rf_error("internal error: summaries have the wrong size");
}

static void eval_alloc(mix_eval *ev, const mix_obs *obs, int K, int D) {
  svi_len sz[5];
  double **arr[5] = {&ev->mean, &ev->fac, &ev->inv_diag, &ev->shift, &ev->logb};
  memset(ev, 0, sizeof(*ev));
  ev->c = (double *)R_alloc(K, sizeof(double));
  obs->eval_sizes(D, sz);
  for (int i = 0; i < 5; i++)
    if (sz[i]) *arr[i] = (double *)R_alloc((size_t)K * sz[i], sizeof(double));
}

/* The shared posterior of a model whose components share a parameter (the
 * tied model), from the summaries, before any component is used; 0, or
 * nonzero when it is not positive definite. Nothing for the other models. */
static int prepare_shared(mix_prior *pr, int K, int D, SEXP Nk, SEXP S) {
  if (!pr->obs->prepare) return 0;
  double *buf = (double *)R_alloc((size_t)pr->obs->shared_size(D), sizeof(double));
  return pr->obs->prepare(pr, K, D, REAL(Nk), REAL(S), buf);
}

static int build(mix_eval *ev, mix_prior *pr, int K, int D, SEXP Nk, SEXP S, int point,
                 int threads) {
  eval_alloc(ev, pr->obs, K, D);
  if (prepare_shared(pr, K, D, Nk, S)) return 1;
  double *aw = (double *)R_alloc(2 * (size_t)K, sizeof(double));
  return mix_eval_build(ev, pr, K, D, REAL(Nk), REAL(S), point, threads, aw);
}

/* Working memory of one local step: from `work` (a raw vector the caller
 * keeps for a whole fit, so the laps do not churn R's heap) when it is
 * large enough, otherwise from R_alloc. The caller never reads `work`. */
typedef struct {
  unsigned char *p;
  size_t left;
} mix_arena;

static void *arena_take(mix_arena *a, size_t n, size_t size) {
  size_t bytes = (n * size + 15) / 16 * 16;
  if (a->p && bytes <= a->left) {
    void *out = a->p;
    a->p += bytes;
    a->left -= bytes;
    return out;
  }
  return R_alloc(n, size);
}

/* One local step + summary over points [range[0], range[1]) (0-based),
 * with working memory from `work` (NULL or a raw vector, see mix_arena).
 * Returns list(N, S, entropy, time_local, time_summary, status). */
SEXP ffi_mix_local(SEXP data, SEXP prior, SEXP Nk, SEXP S, SEXP range, SEXP L_,
                   SEXP threads_, SEXP work) {
  int n_prot = 0, D, K;
  mix_prior pr = unpack_prior(prior, &D);
  check_state(Nk, S, pr.obs, D, &K);
  mix_data x = unpack_data(data, pr.obs, D);
  int L = svi_int_arg(L_, 1, K, "L"), threads = svi_threads_from_r(threads_);
  svi_need_real(range, 2, "range");
  if (!(REAL(range)[0] >= 0 && REAL(range)[1] <= (double)x.N))
    Rf_error("internal error: bad L or range");
  svi_len n0 = (svi_len)REAL(range)[0], n1 = (svi_len)REAL(range)[1];
  if (L < 1 || L > K || n0 < 0 || n1 > x.N || n1 < n0)
    Rf_error("internal error: bad L or range");
  svi_len n = n1 - n0, P = pr.obs->stat_size(D);

  double t0 = wall_seconds();
  mix_eval ev;
  int status = build(&ev, &pr, K, D, Nk, S, 0, threads);
  const char *names[] = {"N", "S", "entropy", "time_local", "time_summary", "status"};
  SEXP out = PROTECT(svi_named_list(6, names));
  n_prot++;
  SEXP oN = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  SEXP oS = PROTECT(Rf_allocMatrix(REALSXP, (int)P, K));
  n_prot++;
  SET_VECTOR_ELT(out, 0, oN);
  SET_VECTOR_ELT(out, 1, oS);
  SET_VECTOR_ELT(out, 5, Rf_ScalarInteger(status));
  if (status) {
    memset(REAL(oN), 0, sizeof(double) * K);
    memset(REAL(oS), 0, sizeof(double) * (size_t)(P * K));
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(NA_REAL));
    UNPROTECT(n_prot);
    return out;
  }
  mix_arena ar = {NULL, 0};
  if (TYPEOF(work) == RAWSXP) {
    /* 16-byte aligned start */
    uintptr_t p0 = (uintptr_t)RAW(work), p1 = (p0 + 15) / 16 * 16;
    if ((size_t)XLENGTH(work) > (size_t)(p1 - p0)) {
      ar.p = (unsigned char *)p1;
      ar.left = (size_t)XLENGTH(work) - (size_t)(p1 - p0);
    }
  }
  /* one thread, dense full-covariance: the summary is made block by block
   * during the local step (same result, the data and the responsibilities
   * read once) */
  int fuse = threads == 1 && L == K && pr.obs->dense_local != NULL;
  double *rr =
      fuse ? NULL : (double *)arena_take(&ar, (size_t)(n * L) + 1, sizeof(double));
  double *ent = (double *)arena_take(&ar, (size_t)n + 1, sizeof(double));
  int *ridx = L < K ? (int *)arena_take(&ar, (size_t)(n * L) + 1, sizeof(int)) : NULL;
  svi_len per = mix_local_scratch(pr.obs, D, K);
  double *dsc = (double *)R_alloc((size_t)(per * threads), sizeof(double));
  int *isc = (int *)R_alloc((size_t)K * threads, sizeof(int));
  double *xb = (double *)R_alloc((size_t)(mix_summary_scratch(pr.obs, D, K) * threads),
                                 sizeof(double));
  svi_len *pb = (svi_len *)R_alloc((size_t)SVI_BLOCK * threads, sizeof(svi_len));
  double t_sum = 0;
  if (fuse) {
    mix_local(&ev, &x, n0, n1, L, threads, ridx, rr, ent, dsc, isc, REAL(oN), REAL(oS),
              xb, (int *)pb, &t_sum);
  } else {
    mix_local(&ev, &x, n0, n1, L, threads, ridx, rr, ent, dsc, isc, NULL, NULL, NULL,
              NULL, NULL);
  }
  double h = 0;
  for (svi_len i = 0; i < n; i++) h += ent[i];
  double t1 = wall_seconds();

  if (!fuse) {
    svi_len *start = NULL, *ln = NULL, *cnt = NULL;
    double *lr = NULL;
    if (L < K) {
      start = (svi_len *)R_alloc((size_t)K + 1, sizeof(svi_len));
      ln = (svi_len *)arena_take(&ar, (size_t)(n * L) + 1, sizeof(svi_len));
      lr = (double *)arena_take(&ar, (size_t)(n * L) + 1, sizeof(double));
      cnt = (svi_len *)R_alloc((size_t)K * MIX_BUCKET_CHUNKS, sizeof(svi_len));
    }
    mix_summary(&x, n0, n1, K, L, ridx, rr, threads, REAL(oN), REAL(oS), start, cnt, ln,
                lr, xb, pb);
  }
  double t2 = wall_seconds();
  /* the fused summary's share moves from the local time to the summary */
  t1 -= t_sum;
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal(h));
  SET_VECTOR_ELT(out, 3, Rf_ScalarReal(t1 - t0));
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(t2 - t1));
  UNPROTECT(n_prot);
  return out;
}

/* Log-weights of every point: point = 0, E_q[ln pi_k p(x | phi_k)] (the
 * local step's weights); point = 1, ln pi_hat_k p(x | phi_hat_k). reduce = 1
 * returns the per-point log-sum-exp (length N) instead of the K x N matrix.
 * A non-positive-definite component gives an error status attribute. */
SEXP ffi_mix_weights(SEXP data, SEXP prior, SEXP Nk, SEXP S, SEXP point, SEXP reduce,
                     SEXP threads_) {
  int n_prot = 0, D, K;
  mix_prior pr = unpack_prior(prior, &D);
  check_state(Nk, S, pr.obs, D, &K);
  mix_data x = unpack_data(data, pr.obs, D);
  int threads = svi_threads_from_r(threads_), red = svi_flag_arg(reduce, "reduce");
  int pt = svi_flag_arg(point, "point");
  if (!red) svi_need_size((double)K, (double)x.N, (double)R_XLEN_T_MAX, "weights matrix");
  if (x.N > INT_MAX) Rf_error("internal error: too many points");
  mix_eval ev;
  int status = build(&ev, &pr, K, D, Nk, S, pt, threads);
  if (status) Rf_error("internal error: component %d is not positive definite", status);
  svi_len N = x.N, nblocks = svi_n_blocks(N);
  SEXP out =
      PROTECT(red ? Rf_allocVector(REALSXP, N) : Rf_allocMatrix(REALSXP, K, (int)N));
  n_prot++;
  double *po = REAL(out);
  svi_len per = (svi_len)SVI_BLOCK * K + mix_weights_scratch(pr.obs, D, K) + K;
  double *dsc = (double *)R_alloc((size_t)(per * threads), sizeof(double));
  (void)mix_simd_wide(); /* settled before the threads start */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (svi_len b = 0; b < nblocks; b++) {
    double *W = dsc + (svi_len)svi_thread_id() * per;
    svi_len s = b * SVI_BLOCK;
    int nb = (int)((s + SVI_BLOCK <= N) ? SVI_BLOCK : N - s);
    mix_block_weights(&ev, &x, s, nb, W, W + (svi_len)SVI_BLOCK * K);
    if (!red) {
      memcpy(po + s * K, W, sizeof(double) * (size_t)nb * K);
      continue;
    }
    mix_logsumexp_rows(W, nb, K, po + s,
                       W + (svi_len)SVI_BLOCK * K + mix_weights_scratch(pr.obs, D, K));
  }
  UNPROTECT(n_prot);
  return out;
}

/* The training points' assignments (mix_add_assignments() in R): for each
 * point of `data`, the first component of largest variational weight
 * (1-based), 1 minus its responsibility, and with `keep_z` the N x K
 * responsibilities (else NULL). The softmax is formed as the pure-R
 * reference does (max.col(ties "first"), exp of the differences, rowSums'
 * long double sum in component order, one division), so the values are the
 * same bit for bit; one pass, no K x N matrix of weights. */
SEXP ffi_mix_assign(SEXP data, SEXP prior, SEXP Nk, SEXP S, SEXP keep_z_, SEXP threads_) {
  int n_prot = 0, D, K;
  mix_prior pr = unpack_prior(prior, &D);
  check_state(Nk, S, pr.obs, D, &K);
  mix_data x = unpack_data(data, pr.obs, D);
  int threads = svi_threads_from_r(threads_), keep_z = svi_flag_arg(keep_z_, "keep_z");
  if (x.N > INT_MAX) Rf_error("internal error: too many points");
  if (keep_z) svi_need_size((double)K, (double)x.N, (double)R_XLEN_T_MAX, "responsibilities");
  mix_eval ev;
  if (build(&ev, &pr, K, D, Nk, S, 0, threads))
    Rf_error("internal error: a component is not positive definite");
  svi_len N = x.N, nblocks = svi_n_blocks(N);
  SEXP cls = PROTECT(Rf_allocVector(INTSXP, N));
  SEXP unc = PROTECT(Rf_allocVector(REALSXP, N));
  SEXP z = PROTECT(keep_z ? Rf_allocMatrix(REALSXP, (int)N, K) : R_NilValue);
  n_prot += 3;
  int *pc = INTEGER(cls);
  double *pu = REAL(unc), *pz = keep_z ? REAL(z) : NULL;
  /* per thread: the block's weights, the kernel's scratch, and its sums */
  svi_len per = (svi_len)SVI_BLOCK * K + mix_weights_scratch(pr.obs, D, K) + K + SVI_BLOCK;
  double *dsc = (double *)R_alloc((size_t)(per * threads), sizeof(double));
  (void)mix_simd_wide(); /* settled before the threads start */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (svi_len b = 0; b < nblocks; b++) {
    double *W = dsc + (svi_len)svi_thread_id() * per;
    double *sums = W + per - SVI_BLOCK;
    svi_len s = b * SVI_BLOCK;
    int nb = (int)((s + SVI_BLOCK <= N) ? SVI_BLOCK : N - s);
    mix_block_weights(&ev, &x, s, nb, W, W + (svi_len)SVI_BLOCK * K);
    for (int i = 0; i < nb; i++) {
      double *w = W + (svi_len)i * K;
      int k = 0;
      for (int j = 1; j < K; j++)
        if (w[j] > w[k]) k = j;
      const double top = w[k];
      long double acc = 0.0L;
      for (int j = 0; j < K; j++) {
        /* exp() of a difference below -746 is 0 exactly: skip the call */
        const double d = w[j] - top;
        w[j] = d < -746.0 ? 0.0 : exp(d);
        acc += w[j];
      }
      const double sum = (double)acc;
      sums[i] = sum;
      pc[s + i] = k + 1;
      pu[s + i] = 1.0 - w[k] / sum;
    }
    /* z column by column: runs of the block's points, not a stride of N */
    if (pz)
      for (int j = 0; j < K; j++) {
        double *zj = pz + s + (svi_len)j * N;
        for (int i = 0; i < nb; i++) zj[i] = W[(svi_len)i * K + j] / sums[i];
      }
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, 3));
  n_prot += 2;
  SET_VECTOR_ELT(out, 0, cls);
  SET_VECTOR_ELT(out, 1, unc);
  SET_VECTOR_ELT(out, 2, z);
  SET_STRING_ELT(nms, 0, Rf_mkChar("classification"));
  SET_STRING_ELT(nms, 1, Rf_mkChar("uncertainty"));
  SET_STRING_ELT(nms, 2, Rf_mkChar("z"));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(n_prot);
  return out;
}

/* The ELBO without the entropy of the responsibilities: allocation term
 * plus each component's observation term, at the conjugate posterior of the
 * summaries (Nk, S). NaN when a scale matrix is not positive definite. */
SEXP ffi_mix_objective(SEXP prior, SEXP Nk, SEXP S) {
  int D, K;
  mix_prior pr = unpack_prior(prior, &D);
  check_state(Nk, S, pr.obs, D, &K);
  svi_len P = pr.obs->stat_size(D);
  const double *pN = REAL(Nk), *pS = REAL(S);
  if (prepare_shared(&pr, K, D, Nk, S)) return Rf_ScalarReal(R_NaN);
  double out = mix_alloc_objective(&pr, K, pN) + pr.shared_objective;
  double *scratch = (double *)R_alloc((size_t)(P + D), sizeof(double));
  for (int k = 0; k < K; k++) {
    const double *Sk = pS + (svi_len)k * P;
    out += pr.obs->objective(&pr, D, pN[k], Sk, scratch);
  }
  return Rf_ScalarReal(out);
}

/* Seeds for initialisation: K distinct 1-based point indices. */
SEXP ffi_mix_init(SEXP data, SEXP lik_, SEXP D_, SEXP K_, SEXP plusplus, SEXP scale,
                  SEXP seed, SEXP threads_) {
  int n_prot = 0, lik = svi_int_arg(lik_, MIX_GAUSS, MIX_LIK_MAX, "lik"),
      D = svi_int_arg(D_, 1, 1000000, "D"), K = svi_int_arg(K_, 1, INT_MAX, "K");
  const mix_obs *obs = mix_obs_of(lik);
  mix_data x = unpack_data(data, obs, D);
  if (K < 1 || K > x.N) Rf_error("internal error: K out of range");
  int pp = svi_flag_arg(plusplus, "plusplus");
  const double *sc = real_or_null(scale, D, "scale");
  if (pp && !obs->documents && !sc) Rf_error("internal error: k-means++ needs a scale");
  int threads = svi_threads_from_r(threads_);
  svi_len *idx = (svi_len *)R_alloc(K, sizeof(svi_len));
  double *dist = (double *)R_alloc((size_t)x.N * 3, sizeof(double));
  double *work = (double *)R_alloc((size_t)(D + x.N), sizeof(double));
  mix_init_seeds(&x, K, pp, sc, svi_seed_from_r(seed), threads, idx, dist, work);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  for (int k = 0; k < K; k++) REAL(out)[k] = (double)idx[k] + 1;
  UNPROTECT(n_prot);
  return out;
}

/* A K-vector of counts and a P x K matrix of statistics (P from the length). */
static svi_len check_pair(SEXP N, SEXP S, R_xlen_t K, const char *what) {
  if (TYPEOF(N) != REALSXP || TYPEOF(S) != REALSXP || XLENGTH(N) != K || K < 1 ||
      XLENGTH(S) % K != 0)
    Rf_error("internal error: %s summaries have the wrong size", what);
  return (svi_len)(XLENGTH(S) / K);
}

static SEXP state_list(svi_len K, svi_len P, SEXP *oN, SEXP *oS, int *n_prot) {
  const char *names[] = {"N", "S"};
  SEXP out = PROTECT(svi_named_list(2, names));
  (*n_prot)++;
  *oN = Rf_allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 0, *oN);
  if (P > INT_MAX || K > INT_MAX) Rf_error("internal error: summaries too large");
  *oS = Rf_allocMatrix(REALSXP, (int)P, (int)K);
  SET_VECTOR_ELT(out, 1, *oS);
  return out;
}

/* Memoized global step for one batch: the global summaries (N, S) with the
 * batch's cached summaries (oN, oS; NULL in lap 0) swapped for its new ones
 * (nN, nS). Returns list(N, S). */
SEXP ffi_mix_global_memoized(SEXP N, SEXP S, SEXP oN, SEXP oS, SEXP nN, SEXP nS) {
  int n_prot = 0;
  R_xlen_t K = XLENGTH(N);
  svi_len P = check_pair(N, S, K, "global");
  if (Rf_isNull(oN) != Rf_isNull(oS)) Rf_error("internal error: give both old summaries");
  if (!Rf_isNull(oN) && check_pair(oN, oS, K, "old") != P)
    Rf_error("internal error: old summaries have the wrong size");
  if (check_pair(nN, nS, K, "new") != P)
    Rf_error("internal error: new summaries have the wrong size");
  SEXP rN, rS;
  SEXP out = state_list(K, P, &rN, &rS, &n_prot);
  mix_global_memoized(K, P, REAL(N), REAL(S), Rf_isNull(oN) ? NULL : REAL(oN),
                      Rf_isNull(oS) ? NULL : REAL(oS), REAL(nN), REAL(nS), REAL(rN),
                      REAL(rS));
  UNPROTECT(n_prot);
  return out;
}

/* Stochastic global step: (1 - rho) (N, S) + rho w (nN, nS), w the ratio of
 * the number of points to the batch size. Returns list(N, S). */
SEXP ffi_mix_global_stochastic(SEXP N, SEXP S, SEXP nN, SEXP nS, SEXP rho, SEXP w) {
  int n_prot = 0;
  R_xlen_t K = XLENGTH(N);
  svi_len P = check_pair(N, S, K, "global");
  if (check_pair(nN, nS, K, "new") != P)
    Rf_error("internal error: new summaries have the wrong size");
  svi_need_real(rho, 1, "rho");
  svi_need_real(w, 1, "w");
  SEXP rN, rS;
  SEXP out = state_list(K, P, &rN, &rS, &n_prot);
  mix_global_stochastic(K, P, REAL(N), REAL(S), REAL(nN), REAL(nS), REAL(rho)[0],
                        REAL(w)[0], REAL(rN), REAL(rS));
  UNPROTECT(n_prot);
  return out;
}

/* Point estimates of the fitted mixture from the global summaries:
 * list(weights, means (K x D or K x V for the multinomial's word
 * distributions), spread: D x D x K covariances (full models), K x D
 * variances (diagonal), NULL (multinomial)). */
SEXP ffi_mix_point(SEXP prior, SEXP Nk, SEXP S) {
  int n_prot = 0, D, K;
  mix_prior pr = unpack_prior(prior, &D);
  check_state(Nk, S, pr.obs, D, &K);
  svi_len P = pr.obs->stat_size(D), tri = (svi_len)D * (D + 1) / 2;
  int full = pr.obs->spread == 1;
  if (prepare_shared(&pr, K, D, Nk, S))
    Rf_error("internal error: the shared covariance is not positive definite");
  const char *names[] = {"weights", "means", "spread"};
  SEXP out = PROTECT(svi_named_list(3, names));
  n_prot++;
  SEXP w = Rf_allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 0, w);
  mix_point_weights(&pr, K, REAL(Nk), REAL(w));
  SEXP mean = Rf_allocMatrix(REALSXP, K, D);
  SET_VECTOR_ELT(out, 1, mean);
  SEXP spread = R_NilValue;
  if (full) {
    svi_need_size((double)D * D, (double)K, (double)R_XLEN_T_MAX, "covariances");
    spread = Rf_alloc3DArray(REALSXP, D, D, K);
  } else if (pr.obs->spread == 2) {
    spread = Rf_allocMatrix(REALSXP, K, D);
  }
  SET_VECTOR_ELT(out, 2, spread);
  double *m = (double *)R_alloc((size_t)D, sizeof(double));
  double *v = (double *)R_alloc(full ? (size_t)D * D : (size_t)D, sizeof(double));
  double *scratch = (double *)R_alloc((size_t)tri, sizeof(double));
  double *pm = REAL(mean), *ps = Rf_isNull(spread) ? NULL : REAL(spread);
  for (int k = 0; k < K; k++) {
    pr.obs->point_component(&pr, D, REAL(Nk)[k], REAL(S) + (svi_len)k * P, m, v, scratch);
    for (int d = 0; d < D; d++) pm[(svi_len)d * K + k] = m[d];
    if (full)
      memcpy(ps + (svi_len)k * D * D, v, sizeof(double) * (size_t)D * D);
    else if (ps)
      for (int d = 0; d < D; d++) ps[(svi_len)d * K + k] = v[d];
  }
  UNPROTECT(n_prot);
  return out;
}

/* Numeric training data for C: list(Xc, center, spread, bad), Xc the
 * centred copy of X (the zero-mean model: a copy), bad the first non-finite
 * value's 1-based (row, column), or NULL. */
SEXP ffi_mix_center(SEXP X, SEXP zero_mean, SEXP threads_) {
  int n_prot = 0;
  if (TYPEOF(X) != REALSXP || !Rf_isMatrix(X))
    Rf_error("internal error: X must be a double matrix");
  int zm = svi_flag_arg(zero_mean, "zero_mean"), threads = svi_threads_from_r(threads_);
  svi_len N = Rf_nrows(X);
  int D = Rf_ncols(X);
  const char *names[] = {"Xc", "center", "spread", "bad", "range"};
  SEXP out = PROTECT(svi_named_list(5, names));
  n_prot++;
  SEXP range = Rf_allocMatrix(REALSXP, 2, D);
  SET_VECTOR_ELT(out, 4, range);
  SEXP Xc = Rf_allocMatrix(REALSXP, (int)N, D);
  SET_VECTOR_ELT(out, 0, Xc);
  SEXP center = Rf_allocVector(REALSXP, D);
  SET_VECTOR_ELT(out, 1, center);
  SEXP spread = Rf_allocVector(REALSXP, D);
  SET_VECTOR_ELT(out, 2, spread);
  svi_len *bad = (svi_len *)R_alloc((size_t)D + 1, sizeof(svi_len));
  if (mix_center_columns(REAL(X), N, D, zm, threads, REAL(Xc), REAL(center), REAL(spread),
                         REAL(range), bad)) {
    /* the first bad value in column-major order, as which() finds it */
    for (int d = 0; d < D; d++) {
      if (bad[d] < 0) continue;
      SEXP b = Rf_allocVector(REALSXP, 2);
      SET_VECTOR_ELT(out, 3, b);
      REAL(b)[0] = (double)bad[d] + 1;
      REAL(b)[1] = (double)d + 1;
      break;
    }
  }
  UNPROTECT(n_prot);
  return out;
}

/* X[perm, ] for a double matrix X and a permutation perm (1-based,
 * doubles): rows gathered column by column, columns in parallel. */
SEXP ffi_mix_rows(SEXP X, SEXP perm, SEXP threads_) {
  int n_prot = 0;
  if (TYPEOF(X) != REALSXP || !Rf_isMatrix(X))
    Rf_error("internal error: X must be a double matrix");
  svi_len N = Rf_nrows(X), n = XLENGTH(perm);
  int D = Rf_ncols(X), threads = svi_threads_from_r(threads_);
  svi_need_real(perm, n, "perm");
  const double *p = REAL(perm), *x = REAL(X);
  for (svi_len i = 0; i < n; i++)
    if (!(p[i] >= 1 && p[i] <= (double)N))
      Rf_error("internal error: row index out of range");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int)n, D));
  n_prot++;
  double *o = REAL(out);
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int d = 0; d < D; d++) {
    const double *xd = x + (svi_len)d * N;
    double *od = o + (svi_len)d * n;
    for (svi_len i = 0; i < n; i++) od[i] = xd[(svi_len)p[i] - 1];
  }
  UNPROTECT(n_prot);
  return out;
}

/* Working memory of a fit's local steps (see mix_arena): a raw vector of
 * `bytes` bytes left uninitialised (C writes every byte it reads). */
SEXP ffi_mix_work(SEXP bytes) {
  double b = Rf_asReal(bytes);
  /* a batch's scratch: (28 L + 8) bytes a point; 8 GB is far above any
   * batch fit_mixture() makes (at most 20 batches by default) */
  if (!(b >= 0 && b <= 8589934592.0)) Rf_error("internal error: bad work size");
  return Rf_allocVector(RAWSXP, (R_xlen_t)b);
}

/* The observation table of likelihood code lik (for tests): list(name,
 * stat_size (doubles of a component's statistic at dimension D), spread,
 * documents). */
SEXP ffi_mix_obs(SEXP lik_, SEXP D_) {
  const mix_obs *obs = mix_obs_of(svi_int_arg(lik_, MIX_GAUSS, MIX_LIK_MAX, "lik"));
  /* (svi_packed_size(D) is an int: D (D + 1) / 2 fits for D <= 46340) */
  int D = svi_int_arg(D_, 1, 46340, "D");
  const char *names[] = {"name", "stat_size", "spread", "documents"};
  SEXP out = PROTECT(svi_named_list(4, names));
  SET_VECTOR_ELT(out, 0, Rf_mkString(obs->name));
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double)obs->stat_size(D)));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(obs->spread));
  SET_VECTOR_ELT(out, 3, Rf_ScalarLogical(obs->documents));
  UNPROTECT(1);
  return out;
}

/* Kernel choice, for tests and benchmarks: level 0 keeps the two-double
 * kernels, 1 lets the AVX2 ones in where the CPU has them (the default).
 * Returns the vector width in use afterwards. */
SEXP ffi_mix_simd(SEXP level) {
  mix_simd_set(svi_int_arg(level, 0, 1, "level"));
  return Rf_ScalarInteger(mix_simd_width());
}
