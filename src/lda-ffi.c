/* Glue of the LDA engine: unpacks SEXPs, allocates outputs, calls the
 * kernels of lda-vb.c, lda-global.c and eval-completion.c. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include "ffi.h"
#include "lda.h"

/* The options of the vb step (and of completion, which runs it), read by
 * name from the named list built by vb_opts() in R/lda-vb.R. */
static lda_vb_opts opts_from_r(int K, SEXP opts) {
  lda_vb_opts o;
  o.K = K;
  o.L = svi_opt_int(opts, "L", 1, K);
  o.max_iter = svi_opt_int(opts, "max_iter", 0, 10000000);
  o.select_every = svi_opt_int(opts, "select_every", 0, 2);
  o.restart_max = svi_opt_int(opts, "restart_max", 0, 100000);
  o.restart_iter = svi_opt_int(opts, "restart_iter", 0, 10000000);
  o.want_objective = 0;
  o.alpha = svi_opt_real(opts, "alpha", 0, DBL_MAX);
  o.tol = svi_opt_real(opts, "tol", R_NegInf, R_PosInf);
  o.active_eps = svi_opt_real(opts, "active_eps", R_NegInf, R_PosInf);
  o.warm = NULL;
  if (!(o.alpha > 0)) Rf_error("internal error: `alpha` must be positive");
  return o;
}

static void check_topics(SEXP topics, int V) {
  if (TYPEOF(topics) != REALSXP || !Rf_isMatrix(topics) || Rf_ncols(topics) != V ||
      Rf_nrows(topics) < 1)
    Rf_error("internal error: topics must be a double K x V matrix");
}

/* The vb local step over a batch (x: a sparsevi_dtm). Options by name
 * (opts_from_r() and: mode, objective, summary, store). mode 0: topics are
 * Dirichlet parameters lambda; mode 1: a topic-word matrix beta (fold-in
 * with fixed topics); mode 2: the store X of lambda = eta + scale X, with
 * option store = c(eta, scale, the K row sums of X). The summary comes back
 * as the parts p, i, x of a sparse K x V matrix (NULL without one). */
/* The by-word summary (lda_vb_wordsum) as a K x V dgCMatrix's slots
 * (svi_set_sparse_by_word()): each word's sums in a K row, the entries the
 * previous word touched zeroed first. The same entries as the dense
 * accumulator gives. */
typedef struct {
  const lda_vb_wordsum *ws;
  int L, n;
  double *row;
  int *touched, *mark;
} word_sums;

static const double *word_sums_column(void *ctx, int w) {
  word_sums *c = (word_sums *)ctx;
  for (int t = 0; t < c->n; t++) c->row[c->touched[t]] = 0;
  c->n = lda_vb_word_sums(c->ws, c->L, w, c->row, c->touched, c->mark);
  return c->row;
}

static void set_word_sums(SEXP out, int slot, const lda_vb_wordsum *ws, int L, int K, int V,
                          const int *words, int Vb) {
  word_sums c = {ws, L, 0, (double *)R_alloc(K, sizeof(double)),
                 (int *)R_alloc(K, sizeof(int)), (int *)R_alloc(K, sizeof(int))};
  memset(c.row, 0, sizeof(double) * (size_t)K);
  memset(c.mark, 0, sizeof(int) * (size_t)K);
  svi_set_sparse_by_word(out, slot, K, V, words, Vb, word_sums_column, &c);
}

SEXP ffi_lda_local_vb(SEXP x_, SEXP V_, SEXP topics, SEXP opts, SEXP threads_,
                      SEXP warm) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_list(x_, V_);
  check_topics(topics, x.V);
  int K = Rf_nrows(topics), V = x.V, D = x.D;
  int mode = svi_opt_int(opts, "mode", 0, 2), threads = svi_threads_from_r(threads_);
  lda_vb_opts o = opts_from_r(K, opts);
  const double *store = NULL;
  if (mode == 2) {
    SEXP st = svi_opt(opts, "store");
    if (TYPEOF(st) != REALSXP || XLENGTH(st) != 2 + (R_xlen_t)K)
      Rf_error("internal error: the vb step on a store needs eta, scale and row sums");
    store = REAL(st);
  }
  /* warm: NULL, or a K x D double matrix of start counts (previous lap) */
  if (!Rf_isNull(warm)) {
    if (TYPEOF(warm) != REALSXP || XLENGTH(warm) != (R_xlen_t)K * D)
      Rf_error("internal error: the warm start of the vb step must be K x D doubles");
    o.warm = REAL(warm);
  }
  int want_obj = svi_opt_flag(opts, "objective"),
      want_sum = svi_opt_flag(opts, "summary");
  o.want_objective = want_obj;
  svi_len nnz = x.doc_ptr[D];
  int *words = (int *)R_alloc(V, sizeof(int));
  int *loc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  int Vb = lda_batch_words(&x, words, loc);
  size_t kvb = (size_t)K * (size_t)(Vb > 0 ? Vb : 1);
  /* le, a second K x Vb table, only for the dense step's objective */
  double *le = lda_vb_needs_le(&o) ? (double *)R_alloc(kvb, sizeof(double)) : NULL;
  double *eb = (double *)R_alloc(kvb, sizeof(double));
  if (mode == 2) {
    /* vocab_size: the vocabulary of the row sums when `topics` holds only
     * some of its columns (a cluster worker receives the columns of its
     * batches' words, R/executor.R); else all of them */
    int Vs = svi_opt_int_or(opts, "vocab_size", 1, INT_MAX, V);
    lda_topic_weights_store(REAL(topics), K, Vs, words, Vb, store[0], store[1], store + 2,
                            threads, le, eb);
  } else {
    lda_topic_weights(REAL(topics), K, V, words, Vb, mode, threads, le, eb);
  }

  SEXP doc_topic = PROTECT(Rf_allocMatrix(REALSXP, K, D));
  n_prot++;
  SEXP doc_obj = PROTECT(Rf_allocVector(REALSXP, D));
  n_prot++;
  SEXP iters = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  SEXP tries = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  SEXP accepts = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  lda_vb_out out;
  out.doc_topic = REAL(doc_topic);
  out.doc_obj = want_obj ? REAL(doc_obj) : NULL;
  if (!want_obj)
    for (int d = 0; d < D; d++) REAL(doc_obj)[d] = NA_REAL;
  out.iters = INTEGER(iters);
  out.tries = INTEGER(tries);
  out.accepts = INTEGER(accepts);
  out.acc = NULL;
  out.ws = NULL;
  /* The sparse step's summary by word (12 bytes per entry and kept topic)
   * where that is smaller than a dense K x Vb accumulator (8 bytes per
   * entry of it): at large K it is many times smaller. */
  lda_vb_wordsum ws;
  int L = o.L < K ? o.L : K;
  int form = svi_opt_int(opts, "summary_form", 0, 2);
  int by_word = want_sum && o.L < K &&
                (form == 2 || (form == 0 && (double)nnz * L * 12.0 + (double)nnz * 8.0 <
                                                (double)kvb * 8.0));
  if (by_word) {
    ws.slot = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    ws.word_ptr = (int *)R_alloc((size_t)Vb + 1, sizeof(int));
    ws.nsel = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    ws.idx = (int *)R_alloc(nnz > 0 ? (size_t)nnz * L : 1, sizeof(int));
    ws.val = (double *)R_alloc(nnz > 0 ? (size_t)nnz * L : 1, sizeof(double));
    lda_vb_wordsum_slots(&x, loc, Vb, &ws);
    out.ws = &ws;
  } else if (want_sum) {
    out.acc = (double *)R_alloc(kvb, sizeof(double));
    memset(out.acc, 0, kvb * sizeof(double));
  }
  lda_vb_batch(&x, loc, Vb, eb, le, &o, threads, &out);

  /* Dense responsibilities (L >= K) keep exp(E log theta) sums in acc and
   * are multiplied by the word's weights here; L-sparse ones are final. */
  if (want_sum && o.L >= K)
    for (int w = 0; w < Vb; w++) {
      double *a = out.acc + (svi_len)w * K;
      const double *e = eb + (svi_len)w * K;
      for (int k = 0; k < K; k++) a[k] *= e[k];
    }
  const char *names[] = {"p", "i", "x", "doc_topic", "doc_obj", "iters", "tries", "accepts"};
  SEXP res = PROTECT(svi_named_list(8, names));
  n_prot++;
  /* the batch summary as a sparse K x V matrix over the batch's words:
   * O(K x its vocabulary) however large V is */
  if (by_word)
    set_word_sums(res, 0, &ws, L, K, V, words, Vb);
  else if (want_sum)
    svi_set_sparse_columns(res, 0, out.acc, K, V, words, Vb);
  SET_VECTOR_ELT(res, 3, doc_topic);
  SET_VECTOR_ELT(res, 4, doc_obj);
  SET_VECTOR_ELT(res, 5, iters);
  SET_VECTOR_ELT(res, 6, tries);
  SET_VECTOR_ELT(res, 7, accepts);
  UNPROTECT(n_prot);
  return res;
}

/* Document completion (src/eval-completion.c): obs and held are the
 * observed and held-out parts (sparsevi_dtm lists), beta K x V, options by
 * name as for the vb step (opts_from_r()). */
SEXP ffi_lda_completion(SEXP obs_, SEXP held_, SEXP V_, SEXP beta, SEXP opts,
                        SEXP threads_) {
  int n_prot = 0;
  svi_dtm obs = svi_dtm_list(obs_, V_);
  svi_dtm held = svi_dtm_list(held_, V_);
  if (obs.D != held.D) Rf_error("internal error: observed and held-out parts differ in size");
  check_topics(beta, obs.V);
  int K = Rf_nrows(beta);
  lda_vb_opts o = opts_from_r(K, opts);
  int threads = svi_threads_from_r(threads_);
  SEXP ll = PROTECT(Rf_allocVector(REALSXP, obs.D));
  n_prot++;
  SEXP nt = PROTECT(Rf_allocVector(REALSXP, obs.D));
  n_prot++;
  lda_completion(&obs, &held, REAL(beta), &o, threads, REAL(ll), REAL(nt));
  const char *names[] = {"loglik", "tokens"};
  SEXP res = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(res, 0, ll);
  SET_VECTOR_ELT(res, 1, nt);
  UNPROTECT(n_prot);
  return res;
}

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
