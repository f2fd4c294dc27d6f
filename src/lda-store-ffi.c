/* Glue of the topic store (lda-store.c; R/lda-store.R): a store is
 * list(X, meta) with X the K x V table and meta = c(scale, t, xtot (K)), so
 * that lambda = offset + scale X with row sums V offset + scale xtot.
 *
 * The update entry points write X and meta IN PLACE, through the package's
 * one ownership guard (own.c): they refuse a store R may share
 * (MAYBE_SHARED: also bound elsewhere) unless its table carries the
 * ownership flag, so that an in-place write can never reach an object the
 * caller did not hand over; R copies a store explicitly where two states
 * would otherwise hold it (the start of a lap, lda_store_lap_start()). The
 * flag marks a table the training loop holds alone although lists it never
 * reads again still refer to it: a new fit's start given up to its store
 * (ffi_lda_store_new(in_place = TRUE)), a store kept safe on disk, a table
 * kept for a later lap's copy. The entry points with an in_place option
 * write their input only when they own it, and copy it otherwise. Every
 * entry point takes its settings as one named list (svi_opt*, ffi.h). */
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include "ffi.h"
#include "lda-store.h"
#include "lda-cvb0.h"

/* The store (X, meta) of K x V topics; errors unless it is one. */
static void store_dims(SEXP X, SEXP meta, int *K, int *V) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  *K = Rf_nrows(X);
  *V = Rf_ncols(X);
  if (TYPEOF(meta) != REALSXP || XLENGTH(meta) != (R_xlen_t)*K + 2)
    Rf_error("internal error: malformed topic store");
}

/* Whether the store (X, meta) may be written in place: both unshared, or
 * X flagged as the package's own (its meta goes with it: the lists that
 * share them are never read again). */
static int store_owned(SEXP X, SEXP meta) {
  return svi_flagged(X) || (svi_owns(X) && svi_owns(meta));
}

/* Errors unless the store may be written in place (X or meta shared). */
static void store_need_own(SEXP X, SEXP meta) {
  if (!store_owned(X, meta))
    Rf_error("internal error: the topic store is shared; the package writes only what it "
             "owns (copy it with lda_store_copy())");
}

/* list(X = X, meta = meta), the form of every store. */
static SEXP store_list(SEXP X, SEXP meta) {
  const char *names[] = {"X", "meta"};
  SEXP out = PROTECT(svi_named_list(2, names));
  SET_VECTOR_ELT(out, 0, X);
  SET_VECTOR_ELT(out, 1, meta);
  UNPROTECT(1);
  return out;
}

int svi_check_summary(SEXP words, SEXP xv, int K, int V) {
  if (TYPEOF(words) != INTSXP || TYPEOF(xv) != REALSXP ||
      XLENGTH(xv) < (R_xlen_t)K * XLENGTH(words))
    Rf_error("internal error: malformed batch summary");
  const int U = (int)XLENGTH(words);
  const int *w = INTEGER(words);
  for (int u = 0; u < U; u++)
    if (w[u] < 0 || w[u] >= V || (u > 0 && w[u] <= w[u - 1]))
      Rf_error("internal error: summary words must increase within [0, V)");
  return U;
}

/* A new store of a dense lambda (K x V) with row sums opts$tot (K):
 * X = lambda - eta, meta = c(1, t, tot - V eta), in one pass (the same
 * arithmetic as R's lambda - eta). opts: tot, eta, t, in_place. With
 * in_place = TRUE, X is lambda itself, converted (no second K x V table):
 * only for a table that R/lda-train.R knows to be the start's own (a new fit's,
 * never a user's matrix), whose states the loop never reads again, and only
 * when the package owns it (svi_owns(): else it is copied, never written).
 * It loses its dimnames and carries the ownership flag, so that anything
 * still holding the old lambda can tell (lda_store_consumed()). Returns
 * list(X, meta). */
SEXP ffi_lda_store_new(SEXP lambda, SEXP opts) {
  int n_prot = 0;
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  const int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  SEXP tot = svi_opt(opts, "tot");
  if (TYPEOF(tot) != REALSXP || XLENGTH(tot) != K)
    Rf_error("internal error: topic totals must be K doubles");
  const double e = svi_opt_real(opts, "eta", 0.0, HUGE_VAL),
               t = svi_opt_real(opts, "t", 0.0, 9007199254740992.0);
  const int in_place = svi_opt_flag(opts, "in_place") && svi_owns(lambda);
  SEXP X = lambda;
  if (!in_place) {
    X = PROTECT(svi_table_alloc(K, V));
    n_prot++;
  }
  SEXP meta = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)K + 2));
  n_prot++;
  store_from_lambda(K, V, REAL(lambda), e, REAL(X));
  if (in_place) {
    Rf_setAttrib(X, R_DimNamesSymbol, R_NilValue);
    svi_give_up(X);
  }
  double *mt = REAL(meta);
  mt[0] = 1.0;
  mt[1] = t;
  for (int k = 0; k < K; k++) mt[2 + k] = REAL(tot)[k] - (double)V * e;
  SEXP out = store_list(X, meta);
  UNPROTECT(n_prot);
  return out;
}

/* The store of SCVB0's seeded start (R: lda_cvb0_seeded_start()): X the
 * chosen documents' counts, given as triples k, v (0-based) and x from
 * lda_seed_counts(), each (k, v) at most once, and 0 elsewhere; scale 1,
 * step count 0 and the row sums of X (summed triple by triple). Its lambda =
 * eta + X is the seeded table, eta plus the counts, but the K x V table is
 * never written whole: it comes zero-filled from the system, its pages
 * first touched on `threads` threads (svi_table_zero_on()), and the first
 * global step updates this store instead
 * of converting a dense start into one (together two passes over the table:
 * 0.035 s and 0.03 s of a 0.75 s default call at K = 100, V = 129,289).
 * Returns list(X, meta). */
SEXP ffi_lda_store_seeded(SEXP K_, SEXP V_, SEXP k_, SEXP v_, SEXP x_, SEXP threads_) {
  const int K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K"), V = svi_int_arg(V_, 1, INT_MAX, "V");
  const int threads = svi_threads_from_r(threads_);
  if (TYPEOF(k_) != INTSXP || TYPEOF(v_) != INTSXP || TYPEOF(x_) != REALSXP ||
      XLENGTH(v_) != XLENGTH(k_) || XLENGTH(x_) != XLENGTH(k_))
    Rf_error("internal error: malformed seed counts");
  const int *kk = INTEGER(k_), *vv = INTEGER(v_);
  const double *xx = REAL(x_);
  const R_xlen_t n = XLENGTH(k_);
  for (R_xlen_t i = 0; i < n; i++) {
    if (kk[i] < 0 || kk[i] >= K || vv[i] < 0 || vv[i] >= V)
      Rf_error("internal error: seed count outside the table");
    if (!(xx[i] >= 0) || !R_FINITE(xx[i]))
      Rf_error("internal error: seed counts must be finite and non-negative");
  }
  SEXP X = PROTECT(svi_table_zero_on(K, V, threads));
  SEXP meta = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)K + 2));
  double *m = REAL(X), *mt = REAL(meta);
  mt[0] = 1.0;
  mt[1] = 0.0;
  for (int k = 0; k < K; k++) mt[2 + k] = 0.0;
  for (R_xlen_t i = 0; i < n; i++) {
    m[(svi_len)vv[i] * K + kk[i]] = xx[i];
    mt[2 + kk[i]] += xx[i];
  }
  SEXP out = store_list(X, meta);
  UNPROTECT(2);
  return out;
}

/* A new store of memoized sums S (K x V): X = max(S, 0), meta = c(1, t, row
 * sums of X summed word by word). S = NULL gives an empty (all-zero) store
 * of opts$K x opts$V. opts: t, K, V, in_place, keep (optional, 0 or 1).
 * With in_place = TRUE, S is a table given up (a new fit's start, as in
 * ffi_lda_store_new()): the store is made in it when the package owns it
 * (else in a new table: S is never written), flagged as owned, empty
 * unless keep = 1 (then X = max(S, 0) in S's own table: streaming
 * training's store of the start's lambda). Returns list(X, meta). */
SEXP ffi_lda_store_counts(SEXP S, SEXP opts) {
  int n_prot = 0;
  const int empty = S == R_NilValue;
  if (!empty) svi_need_matrix(S, REALSXP, -1, -1, "S");
  const int K = empty ? svi_opt_int(opts, "K", 1, INT_MAX) : Rf_nrows(S),
            V = empty ? svi_opt_int(opts, "V", 1, INT_MAX) : Rf_ncols(S);
  svi_need_size(K, V, 2147483647.0, "the topic store");
  /* (asked for in place and not owned: the same store in a new table) */
  const int asked = !empty && svi_opt_flag(opts, "in_place");
  const int reuse = asked && svi_owns(S);
  const int keep = svi_opt_int_or(opts, "keep", 0, 1, 0);
  SEXP X = S;
  if (!reuse) {
    X = PROTECT(svi_table_alloc(K, V));
    n_prot++;
  }
  SEXP meta = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)K + 2));
  n_prot++;
  double *mt = REAL(meta);
  mt[0] = 1.0;
  mt[1] = svi_opt_real(opts, "t", 0.0, 9007199254740992.0);
  /* (keep: element by element, so X may be S itself) */
  store_from_counts(K, V, (empty || (asked && !keep)) ? NULL : REAL(S), REAL(X), mt + 2);
  if (reuse) {
    Rf_setAttrib(X, R_DimNamesSymbol, R_NilValue);
    svi_give_up(X);
  }
  SEXP res = store_list(X, meta);
  UNPROTECT(n_prot);
  return res;
}

/* The stochastic global step on the store (store_update()): scale <- (1 -
 * rho) scale and X[, words] += rho mult values / scale, IN PLACE, X and meta
 * together and without any R call in between (an interrupted lap leaves no
 * half-applied step). `values` holds K doubles per word. opts: rho, mult,
 * rescale_below, t (the step count after this step) and, optionally,
 * threads (default 1; the result does not depend on it). Returns the new
 * scale. */
/* The settings of a stochastic step on a store (opts: rho, mult,
 * rescale_below, t, threads) with its current scale, checked, and 2 K
 * doubles of scratch (the row sums of the summary, then the new totals). */
typedef struct {
  double scale, rho, mult, below, t;
  int threads;
  double *scr;
} store_step;

static store_step store_step_opts(SEXP meta, SEXP opts, int K) {
  store_step st;
  st.scale = REAL(meta)[0];
  st.rho = svi_opt_real(opts, "rho", 0.0, 1.0);
  st.mult = svi_opt_real(opts, "mult", -HUGE_VAL, HUGE_VAL);
  st.below = svi_opt_real(opts, "rescale_below", 0.0, 1.0);
  st.t = svi_opt_real(opts, "t", 0.0, 9007199254740992.0);
  if (!(st.scale > 0.0) || !isfinite(st.scale) || !(st.below < 1.0))
    Rf_error("internal error: topic store update settings out of range");
  st.threads = svi_opt_int_or(opts, "threads", 1, 1024, 1);
  st.scr = (double *)R_alloc((size_t)2 * K, sizeof(double));
  return st;
}

/* Writes a step's result into meta: the new scale, the step counter t and
 * the new totals (the second half of st->scr); returns the new scale. */
static SEXP store_step_done(SEXP meta, int K, const store_step *st, double sc_new) {
  double *mt = REAL(meta);
  memcpy(mt + 2, st->scr + K, sizeof(double) * (size_t)K);
  mt[0] = sc_new;
  mt[1] = st->t;
  return Rf_ScalarReal(sc_new);
}

SEXP ffi_lda_store_update(SEXP X, SEXP meta, SEXP words, SEXP values, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  const int U = svi_check_summary(words, values, K, V);
  const store_step st = store_step_opts(meta, opts, K);
  const double sc_new = store_update(K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult, U,
                                     INTEGER(words), REAL(values), st.below, st.scr, st.scr + K,
                                     st.threads);
  return store_step_done(meta, K, &st, sc_new);
}

/* The number of words U of a sparse summary (words; S = list(p, k, v)) of
 * K x V topics; errors unless it is well formed: words increasing in
 * [0, V), p from 0 to length(k) and non-decreasing, each word's topics
 * increasing in [0, K). */
static int store_check_sparse(SEXP words, SEXP S, int K, int V) {
  const SEXP p_ = svi_opt(S, "p"), k_ = svi_opt(S, "k"), v_ = svi_opt(S, "v");
  if (TYPEOF(words) != INTSXP || TYPEOF(p_) != INTSXP || TYPEOF(k_) != INTSXP ||
      TYPEOF(v_) != REALSXP || XLENGTH(p_) != XLENGTH(words) + 1 ||
      XLENGTH(k_) != XLENGTH(v_))
    Rf_error("internal error: malformed sparse batch summary");
  const int U = (int)XLENGTH(words);
  const int *w = INTEGER(words), *p = INTEGER(p_), *k = INTEGER(k_);
  if (p[0] != 0 || p[U] != XLENGTH(k_))
    Rf_error("internal error: malformed sparse batch summary");
  for (int u = 0; u < U; u++) {
    if (w[u] < 0 || w[u] >= V || (u > 0 && w[u] <= w[u - 1]) || p[u + 1] < p[u])
      Rf_error("internal error: malformed sparse batch summary");
    for (int e = p[u]; e < p[u + 1]; e++)
      if (k[e] < 0 || k[e] >= K || (e > p[u] && k[e] <= k[e - 1]))
        Rf_error("internal error: malformed sparse batch summary");
  }
  return U;
}

/* ffi_lda_store_update() with a sparse summary (store_update_sparse()):
 * word words[u] has the values v[p[u] .. p[u + 1]) at topics k (0-based,
 * each column's topics distinct). Same opts; returns the new scale. */
SEXP ffi_lda_store_update_sparse(SEXP X, SEXP meta, SEXP words, SEXP S, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  const int U = store_check_sparse(words, S, K, V);
  const int *p = INTEGER(svi_opt(S, "p")), *k = INTEGER(svi_opt(S, "k"));
  const store_step st = store_step_opts(meta, opts, K);
  const double sc_new = store_update_sparse(
      K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult, U, INTEGER(words), p, k,
      REAL(svi_opt(S, "v")), st.below, st.scr, st.scr + K, st.threads);
  return store_step_done(meta, K, &st, sc_new);
}

/* Whether the summary S (a named list) is sparse, list(.., p, k, v): it has
 * a non-NULL p (as lda_store_update() tells them apart in R). */
static int store_summary_sparse(SEXP S) {
  if (TYPEOF(S) != VECSXP) Rf_error("internal error: a batch summary must be a list");
  SEXP nms = Rf_getAttrib(S, R_NamesSymbol);
  if (TYPEOF(nms) != STRSXP) return 0;
  for (R_xlen_t i = 0; i < XLENGTH(S); i++)
    if (strcmp(CHAR(STRING_ELT(nms, i)), "p") == 0) return VECTOR_ELT(S, i) != R_NilValue;
  return 0;
}

/* The step of ffi_lda_store_update() on one owner's part of a store sharded
 * by word (store_update_owner(), R/executor-sharded.R): X (K x V_r) the
 * owner's columns, meta the whole store's (identical on every owner),
 * words the minibatch's words among the columns (0-based local columns,
 * increasing), S their part of the summary, list(x = K values per word) or
 * sparse list(p, k, v) as for ffi_lda_store_update_sparse(), and opts
 * those of ffi_lda_store_update() and ssum, the K row sums of the WHOLE
 * summary (ffi_lda_summary_rowsums()): the totals follow the whole store,
 * which the owner's part alone cannot give. IN PLACE, X and meta; returns
 * the new scale. */
SEXP ffi_lda_store_update_owner(SEXP X, SEXP meta, SEXP words, SEXP S, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  const int sparse = store_summary_sparse(S);
  const int U = sparse ? store_check_sparse(words, S, K, V)
                       : svi_check_summary(words, svi_opt(S, "x"), K, V);
  const SEXP ssum = svi_opt(opts, "ssum");
  if (TYPEOF(ssum) != REALSXP || XLENGTH(ssum) != K)
    Rf_error("internal error: the summary's row sums `ssum` must be K doubles");
  const store_step st = store_step_opts(meta, opts, K);
  double sc_new;
  if (sparse)
    sc_new = store_update_owner_sparse(
        K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult, U, INTEGER(words),
        INTEGER(svi_opt(S, "p")), INTEGER(svi_opt(S, "k")), REAL(svi_opt(S, "v")),
        st.below, REAL(ssum), st.scr + K, st.threads);
  else
    sc_new = store_update_owner(K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult,
                                U, INTEGER(words), REAL(svi_opt(S, "x")), st.below,
                                REAL(ssum), st.scr + K, st.threads);
  return store_step_done(meta, K, &st, sc_new);
}

/* The K row sums of a whole summary (store_rowsums()), S = list(words, x)
 * with (at least) K values per word, or sparse list(words, p, k, v): bit
 * for bit those the store's updates form from it, for the owners of a
 * sharded store (ffi_lda_store_update_owner()). */
SEXP ffi_lda_summary_rowsums(SEXP S, SEXP K_) {
  const int K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K");
  const SEXP words = svi_opt(S, "words");
  SEXP out = PROTECT(Rf_allocVector(REALSXP, K));
  if (store_summary_sparse(S)) {
    store_check_sparse(words, S, K, INT_MAX);
    const SEXP k_ = svi_opt(S, "k");
    store_rowsums_sparse(K, (int)XLENGTH(k_), INTEGER(k_), REAL(svi_opt(S, "v")),
                         REAL(out));
  } else {
    const SEXP x = svi_opt(S, "x");
    const int U = svi_check_summary(words, x, K, INT_MAX);
    store_rowsums(K, U, REAL(x), REAL(out));
  }
  UNPROTECT(1);
  return out;
}

/* ffi_lda_store_update() with SCVB0's shape form (list(words, p, k, v, r),
 * top_rest = 2, also ML-OPE's): the step adds, for each word words[u], r[u]
 * times its topic column lambda_kv / tot_k normalised over k, plus its
 * values, floored at 0 (cvb0_shape_columns()), under the topics before the
 * step: lambda = opts$offset + scale X with row sums opts$tot. Where one
 * thread runs the step (store_one_pass()), each column is made just before
 * it is added (store_update_fill()); else (threads sharing a large update,
 * or a dense rescaling step) all of them first, on every thread, into
 * opts$buf (NULL or a vector) when the package owns it and it holds K x U
 * values (the session's buffer, R/lda-cvb0.R), then store_update(). The
 * same bits either way.
 * opts: those of ffi_lda_store_update() and offset, tot, buf. Returns the
 * new scale. */
SEXP ffi_lda_store_update_shape(SEXP X, SEXP meta, SEXP S, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  const int U = svi_check_shape_summary(S, K, V);
  const store_step st = store_step_opts(meta, opts, K);
  const double off = svi_opt_real(opts, "offset", 0.0, HUGE_VAL);
  const SEXP tot = svi_opt(opts, "tot"), buf = svi_opt(opts, "buf");
  if (TYPEOF(tot) != REALSXP || XLENGTH(tot) != K)
    Rf_error("internal error: topic totals must be K doubles");
  double *inv = (double *)R_alloc(K, sizeof(double));
  for (int k = 0; k < K; k++) {
    inv[k] = REAL(tot)[k];
    if (!(inv[k] > 0.0)) Rf_error("internal error: a topic total is not positive");
    inv[k] = 1.0 / inv[k];
  }
  const int *w = INTEGER(svi_opt(S, "words")), *p = INTEGER(svi_opt(S, "p")),
            *k = INTEGER(svi_opt(S, "k"));
  const double *v = REAL(svi_opt(S, "v")), *r = REAL(svi_opt(S, "r"));
  const cvb0_topics tp = {REAL(X), off, st.scale, inv, w, 1};
  double sc_new;
  if (store_update_fills(K, U, st.scale, st.rho, st.below, st.threads)) {
    const cvb0_shape_ctx ctx = {K, U, &tp, p, k, v, r};
    double *col = (double *)R_alloc(K, sizeof(double));
    sc_new = store_update_fill(K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult, U, w,
                               cvb0_shape_fill, &ctx, col, st.below, st.scr, st.scr + K);
  } else {
    double *x = (TYPEOF(buf) == REALSXP && svi_owns(buf) && XLENGTH(buf) >= (R_xlen_t)K * U)
                    ? REAL(buf)
                    : (double *)R_alloc((size_t)K * (U > 0 ? U : 1), sizeof(double));
    cvb0_shape_columns(K, &tp, U, p, k, v, r, x, st.threads);
    sc_new = store_update(K, V, REAL(X), REAL(meta) + 2, st.scale, st.rho, st.mult, U, w, x,
                          st.below, st.scr, st.scr + K, st.threads);
  }
  return store_step_done(meta, K, &st, sc_new);
}

/* X[, words] <- max(X[, words] + sign * values, 0) IN PLACE, and the row
 * sums in meta by the same changes (store_add()): O(K x the words). opts:
 * sign. */
SEXP ffi_lda_store_add(SEXP X, SEXP meta, SEXP words, SEXP values, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  const int U = svi_check_summary(words, values, K, V);
  store_add(K, REAL(X), REAL(meta) + 2, U, INTEGER(words), REAL(values),
            svi_opt_real(opts, "sign", -1.0, 1.0));
  return R_NilValue;
}

/* lambda = eta + scale X and its row sums tot = V eta + scale xtot, in one
 * pass (the same arithmetic as R's eta + scale * X). opts: eta, in_place.
 * With in_place = TRUE and X the package's own (svi_owns()), lambda is X
 * itself, no longer flagged (the store is used up: no second K x V table).
 * Returns list(lambda, tot). */
SEXP ffi_lda_store_lambda(SEXP X, SEXP meta, SEXP opts) {
  int n_prot = 0, K, V;
  store_dims(X, meta, &K, &V);
  const double e = svi_opt_real(opts, "eta", 0.0, HUGE_VAL), sc = REAL(meta)[0];
  const int in_place = svi_opt_flag(opts, "in_place") && svi_owns(X);
  SEXP lam = X;
  if (!in_place) {
    lam = PROTECT(svi_table_alloc(K, V));
    n_prot++;
  }
  SEXP tot = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  store_lambda(K, V, REAL(X), REAL(meta) + 2, e, sc, REAL(lam), REAL(tot));
  if (in_place) svi_take_back(lam);
  const char *names[] = {"lambda", "tot"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, lam);
  SET_VECTOR_ELT(out, 1, tot);
  UNPROTECT(n_prot);
  return out;
}

/* TRUE when an in-place write to the store would reach an object R may
 * share (MAYBE_SHARED; a table given up to its store counts as its own):
 * R then copies the store first (lda_store_own()). */
SEXP ffi_lda_store_shared(SEXP X, SEXP meta) {
  int K, V;
  store_dims(X, meta, &K, &V);
  return Rf_ScalarLogical(!store_owned(X, meta));
}

/* Snapshots of a large store on disk (R/lda-store.R, lda_store_protect()):
 * a lap then writes the store in place instead of working on a copy, and a
 * failed lap's state is read back from the file. The file: 8 bytes of
 * magic, K and V as doubles, meta (K + 2 doubles), X (K x V doubles, column
 * by column), in the machine's byte order (the file never leaves the R
 * session that wrote it). */
static const char store_magic[8] = {'S', 'V', 'I', 'S', 'T', 'O', 'R', '1'};

static int write_all(FILE *f, const void *p, size_t size, size_t n) {
  const char *c = (const char *)p;
  const size_t chunk = (size_t)1 << 24;
  while (n > 0) {
    size_t m = n < chunk ? n : chunk;
    if (fwrite(c, size, m, f) != m) return 0;
    c += size * m;
    n -= m;
  }
  return 1;
}

static int read_all(FILE *f, void *p, size_t size, size_t n) {
  char *c = (char *)p;
  const size_t chunk = (size_t)1 << 24;
  while (n > 0) {
    size_t m = n < chunk ? n : chunk;
    if (fread(c, size, m, f) != m) return 0;
    c += size * m;
    n -= m;
  }
  return 1;
}

/* Writes the store to `path` and flags X as the package's own (its last
 * good values are on disk, so the lap may write it in place). Errors
 * (nothing flagged) if the file cannot be written whole. */
SEXP ffi_lda_store_save(SEXP X, SEXP meta, SEXP path) {
  int K, V;
  store_dims(X, meta, &K, &V);
  if (TYPEOF(path) != STRSXP || XLENGTH(path) != 1)
    Rf_error("internal error: the snapshot path must be one string");
  const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
  FILE *f = fopen(p, "wb");
  if (f == NULL) Rf_error("cannot write the topic store's snapshot to %s", p);
  double dims[2] = {(double)K, (double)V};
  int ok = write_all(f, store_magic, 1, 8) && write_all(f, dims, sizeof(double), 2) &&
           write_all(f, REAL(meta), sizeof(double), (size_t)K + 2) &&
           write_all(f, REAL(X), sizeof(double), (size_t)K * (size_t)V);
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    remove(p);
    Rf_error("cannot write the topic store's snapshot to %s (disk full?)", p);
  }
  svi_give_up(X);
  return R_NilValue;
}

/* The store saved at `path`: list(X, meta), fresh vectors, X unmarked. */
SEXP ffi_lda_store_load(SEXP path) {
  if (TYPEOF(path) != STRSXP || XLENGTH(path) != 1)
    Rf_error("internal error: the snapshot path must be one string");
  const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
  FILE *f = fopen(p, "rb");
  if (f == NULL) Rf_error("cannot read the topic store's snapshot %s", p);
  char magic[8];
  double dims[2];
  if (!read_all(f, magic, 1, 8) || memcmp(magic, store_magic, 8) != 0 ||
      !read_all(f, dims, sizeof(double), 2) || !(dims[0] >= 1 && dims[0] <= INT_MAX) ||
      !(dims[1] >= 1 && dims[1] <= INT_MAX)) {
    fclose(f);
    Rf_error("the topic store's snapshot %s is damaged", p);
  }
  const int K = (int)dims[0], V = (int)dims[1];
  /* allocations may fail (an R error): the file is closed first */
  fclose(f);
  SEXP X = PROTECT(svi_table_alloc(K, V));
  SEXP meta = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)K + 2));
  f = fopen(p, "rb");
  if (f == NULL) Rf_error("cannot read the topic store's snapshot %s", p);
  int ok = fseek(f, 8 + 2 * sizeof(double), SEEK_SET) == 0 &&
           read_all(f, REAL(meta), sizeof(double), (size_t)K + 2) &&
           read_all(f, REAL(X), sizeof(double), (size_t)K * (size_t)V);
  fclose(f);
  if (!ok) Rf_error("the topic store's snapshot %s is damaged", p);
  SEXP out = store_list(X, meta);
  UNPROTECT(2);
  return out;
}

/* In place: X = max(X, 0) and meta = c(1, t, row sums of X), what
 * ffi_lda_store_counts(X) computes into a new table (a sealed memoized
 * store continuing in place, R/lda-global.R). */
SEXP ffi_lda_store_recount(SEXP X, SEXP meta, SEXP opts) {
  int K, V;
  store_dims(X, meta, &K, &V);
  store_need_own(X, meta);
  double *mt = REAL(meta);
  const double t = svi_opt_real(opts, "t", 0.0, 9007199254740992.0);
  store_from_counts(K, V, REAL(X), REAL(X), mt + 2);
  mt[0] = 1.0;
  mt[1] = t;
  return R_NilValue;
}

/* The store's table X as the state's own matrix when the store ends: a
 * table flagged as the package's own loses the flag in place; any other is
 * returned as it is (nothing written). Returns X. */
SEXP ffi_lda_store_release(SEXP X) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_take_back(X);
  return X;
}

/* A copy of the store (X, meta): list(X, meta), fresh vectors. */
SEXP ffi_lda_store_copy(SEXP X, SEXP meta) {
  int K, V;
  store_dims(X, meta, &K, &V);
  SEXP X2 = PROTECT(svi_table_copy(X));
  SEXP m2 = PROTECT(Rf_duplicate(meta));
  svi_take_back(X2);
  SEXP out = store_list(X2, m2);
  UNPROTECT(2);
  return out;
}

/* The copy of the store (X, meta) a lap starts with, written into `dest`, a
 * table of the same size that an earlier lap of the same fit copied into
 * and whose state is no longer the last completed one (the lists that still
 * hold it are never read again; R flagged it as the package's own when it
 * kept it, lda_store_lap_start()): list(dest, a fresh meta), dest flagged
 * as the store's own. A dest the package does not own is never written:
 * the copy goes into a new table instead. */
SEXP ffi_lda_store_copy_into(SEXP X, SEXP meta, SEXP dest) {
  int K, V, n_prot = 0;
  store_dims(X, meta, &K, &V);
  svi_need_matrix(dest, REALSXP, K, V, "dest");
  if (dest == X) Rf_error("internal error: a store copied into itself");
  if (!svi_owns(dest)) {
    dest = PROTECT(svi_table_alloc(K, V));
    n_prot++;
  }
  memcpy(REAL(dest), REAL(X), sizeof(double) * (size_t)K * (size_t)V);
  SEXP m2 = PROTECT(Rf_duplicate(meta));
  n_prot++;
  svi_give_up(dest);
  SEXP out = store_list(dest, m2);
  UNPROTECT(n_prot);
  return out;
}

/* The columns `cols` (1-based, each in 1..V) of a K x V table, as a new
 * K x length(cols) matrix: what a cluster worker receives of the topics
 * (R/lda-store.R, lda_columns_state()). One memcpy per column. */
SEXP ffi_lda_table_columns(SEXP X, SEXP cols) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_int(cols, -1, "cols");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  const R_xlen_t n = XLENGTH(cols);
  const int *c = INTEGER(cols);
  for (R_xlen_t j = 0; j < n; j++)
    if (c[j] < 1 || c[j] > V) Rf_error("internal error: a column is out of range");
  if (n > INT_MAX) Rf_error("internal error: too many columns");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, (int)n));
  const double *x = REAL(X);
  double *o = REAL(out);
  for (R_xlen_t j = 0; j < n; j++) {
    if (j + 4 < n) SVI_PREFETCH_COLUMN(x + (R_xlen_t)(c[j + 4] - 1) * K, K, 0);
    memcpy(o + j * (R_xlen_t)K, x + (R_xlen_t)(c[j] - 1) * K, sizeof(double) * (size_t)K);
  }
  UNPROTECT(1);
  return out;
}

/* A sparse K x V summary (CSC slots p, i, x of a dgCMatrix) as the store's
 * updates want it: list(words = the 0-based columns with any entry, x = K
 * values per such column, zeros elsewhere). O(V + K x those columns). */
SEXP ffi_lda_summary_blocks(SEXP p, SEXP i, SEXP x, SEXP K_) {
  svi_need_int(p, -1, "p");
  svi_need_int(i, -1, "i");
  svi_need_real(x, XLENGTH(i), "x");
  const int K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K");
  const R_xlen_t V = XLENGTH(p) - 1;
  const int *pp = INTEGER(p), *pi = INTEGER(i);
  const double *px = REAL(x);
  if (V < 0 || pp[0] != 0 || pp[V] != XLENGTH(i))
    Rf_error("internal error: malformed summary pointers");
  R_xlen_t U = 0;
  for (R_xlen_t v = 0; v < V; v++) {
    if (pp[v + 1] < pp[v]) Rf_error("internal error: malformed summary pointers");
    if (pp[v + 1] > pp[v]) U++;
  }
  if ((double)U * K > (double)R_XLEN_T_MAX) Rf_error("internal error: summary too large");
  SEXP words = PROTECT(Rf_allocVector(INTSXP, U));
  SEXP vals = PROTECT(Rf_allocVector(REALSXP, U * K));
  double *o = REAL(vals);
  memset(o, 0, sizeof(double) * (size_t)(U * K));
  R_xlen_t u = 0;
  for (R_xlen_t v = 0; v < V; v++) {
    if (pp[v + 1] == pp[v]) continue;
    INTEGER(words)[u] = (int)v;
    double *col = o + u * K;
    for (int e = pp[v]; e < pp[v + 1]; e++) {
      if (pi[e] < 0 || pi[e] >= K) Rf_error("internal error: summary row out of range");
      col[pi[e]] = px[e];
    }
    u++;
  }
  const char *names[] = {"words", "x"};
  SEXP out = PROTECT(svi_named_list(2, names));
  SET_VECTOR_ELT(out, 0, words);
  SET_VECTOR_ELT(out, 1, vals);
  UNPROTECT(3);
  return out;
}
