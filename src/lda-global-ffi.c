/* Glue of the global steps the LDA engines share (memoized, stochastic,
 * streaming; lambda from a store; topic totals), the topics' part of the
 * ELBO, empirical Bayes eta and random initial topics: unpacks SEXPs,
 * allocates outputs, calls the kernels of lda-global.c, lda-eb.c and
 * lda-init.c. */
#include <limits.h>
#include "ffi.h"
#include "lda.h"

/* Adds sign * summary (a dense K x V matrix or a dgCMatrix) into out. */
static void add_summary(double *out, int K, int V, SEXP s, double sign) {
  if (s == R_NilValue) return;
  if (Rf_isS4(s)) {
    SEXP p = R_do_slot(s, Rf_install("p")), i = R_do_slot(s, Rf_install("i")),
         x = R_do_slot(s, Rf_install("x"));
    svi_need_int(p, (R_xlen_t)V + 1, "summary@p");
    svi_need_int(i, -1, "summary@i");
    svi_need_real(x, XLENGTH(i), "summary@x");
    const int *pp = INTEGER(p), *pi = INTEGER(i);
    if (pp[0] != 0 || pp[V] != XLENGTH(i))
      Rf_error("internal error: malformed summary pointers");
    for (int v = 0; v < V; v++)
      if (pp[v + 1] < pp[v]) Rf_error("internal error: malformed summary pointers");
    for (R_xlen_t j = 0; j < XLENGTH(i); j++)
      if (pi[j] < 0 || pi[j] >= K) Rf_error("internal error: summary row out of range");
    lda_add_sparse(out, K, V, INTEGER(p), INTEGER(i), REAL(x), sign);
  } else {
    if (TYPEOF(s) != REALSXP || XLENGTH(s) != (R_xlen_t)K * V)
      Rf_error("internal error: summary has the wrong size");
    const double *a = REAL(s);
    R_xlen_t n = (R_xlen_t)K * V;
    for (R_xlen_t j = 0; j < n; j++) out[j] += sign * a[j];
  }
}

/* Memoized: S <- S - old + new; lambda = eta + S. */
SEXP ffi_lda_global_memoized(SEXP S, SEXP old, SEXP new_, SEXP eta_) {
  int n_prot = 0;
  svi_need_matrix(S, REALSXP, -1, -1, "S");
  int K = Rf_nrows(S), V = Rf_ncols(S);
  SEXP S2 = PROTECT(Rf_duplicate(S));
  n_prot++;
  add_summary(REAL(S2), K, V, old, -1.0);
  add_summary(REAL(S2), K, V, new_, 1.0);
  SEXP lambda = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  n_prot++;
  lda_lambda_from_stats(REAL(lambda), REAL(S2), (svi_len)K * V, Rf_asReal(eta_));
  const char *names[] = {"S", "lambda"};
  SEXP res = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(res, 0, S2);
  SET_VECTOR_ELT(res, 1, lambda);
  UNPROTECT(n_prot);
  return res;
}

/* The K topic totals sum_v lambda_kv, summed as the vb step sums them. */
SEXP ffi_lda_topic_totals(SEXP lambda) {
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  SEXP tot = PROTECT(Rf_allocVector(REALSXP, Rf_nrows(lambda)));
  lda_topic_totals(REAL(lambda), Rf_nrows(lambda), Rf_ncols(lambda), REAL(tot));
  UNPROTECT(1);
  return tot;
}

/* X with each row divided by its sum (ML-OPE's topics from its store, whose
 * scale cancels): one K x V result, the sums taken as lda_topic_totals(). */
SEXP ffi_lda_normalise_rows(SEXP X) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  double *inv = (double *)R_alloc(K, sizeof(double));
  lda_topic_totals(REAL(X), K, V, inv);
  for (int k = 0; k < K; k++) inv[k] = inv[k] > 0 ? 1.0 / inv[k] : 0.0;
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  const double *x = REAL(X);
  double *o = REAL(out);
  for (svi_len v = 0; v < V; v++)
    for (int k = 0; k < K; k++) o[v * K + k] = x[v * K + k] * inv[k];
  UNPROTECT(1);
  return out;
}

/* lambda = eta + max(S, 0) (K x V), e.g. from a memoized store at the end of
 * a lap. */
SEXP ffi_lda_lambda_from_stats(SEXP S, SEXP eta_) {
  svi_need_matrix(S, REALSXP, -1, -1, "S");
  SEXP lambda = PROTECT(svi_table_alloc(Rf_nrows(S), Rf_ncols(S)));
  lda_lambda_from_stats(REAL(lambda), REAL(S), (svi_len)Rf_nrows(S) * Rf_ncols(S),
                        Rf_asReal(eta_));
  UNPROTECT(1);
  return lambda;
}

/* Stochastic: lambda <- (1 - rho) lambda + rho (eta + scale S_B). */
SEXP ffi_lda_global_stochastic(SEXP lambda, SEXP new_, SEXP eta_, SEXP rho_, SEXP scale_) {
  int n_prot = 0;
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  double rho = Rf_asReal(rho_), eta = Rf_asReal(eta_), scale = Rf_asReal(scale_);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  n_prot++;
  double *o = REAL(out);
  const double *l = REAL(lambda);
  R_xlen_t n = (R_xlen_t)K * V;
  for (R_xlen_t j = 0; j < n; j++) o[j] = (1 - rho) * l[j] + rho * eta;
  add_summary(o, K, V, new_, rho * scale);
  UNPROTECT(n_prot);
  return out;
}

/* Streaming: lambda <- lambda + S_B. */
SEXP ffi_lda_global_streaming(SEXP lambda, SEXP new_) {
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  SEXP out = PROTECT(Rf_duplicate(lambda));
  add_summary(REAL(out), K, V, new_, 1.0);
  UNPROTECT(1);
  return out;
}

/* lambda = NULL: the topics of a memoized store, lambda = eta + max(S, 0). */
SEXP ffi_lda_elbo_topics(SEXP lambda, SEXP S, SEXP eta_, SEXP threads_) {
  svi_need_matrix(S, REALSXP, -1, -1, "S");
  int K = Rf_nrows(S), V = Rf_ncols(S);
  if (lambda != R_NilValue) {
    svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
    if (Rf_nrows(lambda) != K || Rf_ncols(lambda) != V)
      Rf_error("internal error: S and lambda differ");
  }
  return Rf_ScalarReal(lda_elbo_topics(lambda == R_NilValue ? NULL : REAL(lambda), REAL(S), K,
                                       V, Rf_asReal(eta_), svi_threads_from_r(threads_)));
}

/* Empirical Bayes eta from the expected counts S (K x V). */
SEXP ffi_lda_eb_eta(SEXP S, SEXP eta_, SEXP max_iter_, SEXP tol_) {
  svi_need_matrix(S, REALSXP, -1, -1, "S");
  double eta = Rf_asReal(eta_), tol = Rf_asReal(tol_);
  int max_iter = Rf_asInteger(max_iter_), iters = 0;
  if (!(eta > 0) || !R_FINITE(eta) || max_iter < 1 || max_iter > 10000 || !(tol > 0))
    Rf_error("internal error: bad EB controls");
  double out = lda_eb_eta(REAL(S), Rf_nrows(S), Rf_ncols(S), eta, max_iter, tol, &iters);
  SEXP res = PROTECT(Rf_allocVector(REALSXP, 2));
  REAL(res)[0] = out;
  REAL(res)[1] = iters;
  UNPROTECT(1);
  return res;
}

/* K x V near-uniform random topics from stream `stream` of `seed`. */
SEXP ffi_lda_init_random(SEXP seed, SEXP stream, SEXP K_, SEXP V_, SEXP eta_) {
  int K = svi_int_arg(K_, 1, INT_MAX, "K"), V = svi_int_arg(V_, 1, INT_MAX, "V");
  double eta = Rf_asReal(eta_);
  if (!(eta > 0) || !R_FINITE(eta)) Rf_error("internal error: bad eta");
  svi_rng r;
  svi_rng_init(&r, svi_seed_from_r(seed), svi_stream_from_r(stream));
  /* (svi_table_alloc() checks the limit fit_lda() checks first,
   * check_topic_table_size) */
  SEXP out = PROTECT(svi_table_alloc(K, V));
  lda_init_gamma100(REAL(out), (svi_len)K * V, eta, &r);
  UNPROTECT(1);
  return out;
}
