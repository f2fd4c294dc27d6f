/* Glue of the OPE engine: the OPE local step and its summaries and the
 * ML-OPE global step. Unpacks SEXPs, allocates outputs and scratch, calls
 * the kernels in lda-ope.c. */
#include <float.h>
#include <limits.h>
#include <string.h>
#include <stdint.h>
#include "pool.h"
#include "ffi.h"
#include "lda-ope.h"
#include "lda.h"

/* The entry points are internal, but a fuzz harness calls them with arbitrary
 * arguments: everything that would index memory is checked here. */
static void check_csr(const svi_dtm *x) {
  if (x->doc_ptr[0] != 0) Rf_error("internal error: doc_ptr must start at 0");
  for (int d = 0; d < x->D; d++)
    if (x->doc_ptr[d + 1] < x->doc_ptr[d])
      Rf_error("internal error: doc_ptr must be non-decreasing");
  const int nnz = x->doc_ptr[x->D];
  for (int i = 0; i < nnz; i++)
    if (x->term[i] < 0 || x->term[i] >= x->V)
      Rf_error("internal error: term out of range");
}

/* Most distinct words of one document. */
static int max_doc_nnz(const svi_dtm *x) {
  int m = 0;
  for (int d = 0; d < x->D; d++) {
    int n = x->doc_ptr[d + 1] - x->doc_ptr[d];
    if (n > m) m = n;
  }
  return m;
}

/* The sparse summary of a batch (lda_summary_ope_sparse()) as list(words,
 * p, k, v): word words[u] (0-based, increasing) has the sums v[p[u] ..
 * p[u + 1]) at topics k (0-based, increasing), the form the topic store's
 * sparse update reads (lda_store_update()). rest 2 (the shape form,
 * ope_doc_shape()) adds r: word u's column is r[u] times its weight column
 * (1 / K each for ML-OPE, the word's normalised topic column otherwise)
 * plus those sums. xl: the batch with its words
 * renumbered 0 .. Vb - 1 (words[] their numbers in the vocabulary); beta:
 * the normalised topics at those words (K x Vb), colsum their column sums;
 * theta: K x D. */
static SEXP ope_sparse_summary(const svi_dtm *xl, int K, const int *words, const double *beta,
                               const double *colsum, const double *theta, int mode, int L,
                               int rest, uint64_t seed, uint64_t stream, int threads) {
  const int Vb = xl->V, D = xl->D;
  const svi_len nnz = xl->doc_ptr[D];
  int *col_ptr = (int *)R_alloc((R_xlen_t)Vb + 1, sizeof(int));
  int *col_doc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  double *col_count = (double *)R_alloc(nnz > 0 ? nnz : 1, sizeof(double));
  ope_transpose(xl, col_ptr, col_doc, col_count);
  int *top_k = (int *)R_alloc((R_xlen_t)L * (D > 0 ? D : 1), sizeof(int));
  double *top_w = (double *)R_alloc((R_xlen_t)L * (D > 0 ? D : 1), sizeof(double));
  int *taken = (int *)R_alloc(K, sizeof(int));
  double *base = NULL;
  if (rest == 2) {
    base = (double *)R_alloc(D > 0 ? D : 1, sizeof(double));
    ope_doc_shape(theta, K, D, L, top_k, top_w, base, taken);
  } else {
    ope_doc_top(theta, K, D, L, rest, seed, stream, top_k, top_w, taken);
  }
  /* room for each word: min(K, L x its documents) topics */
  svi_len *cap = (svi_len *)R_alloc((R_xlen_t)Vb + 1, sizeof(svi_len));
  cap[0] = 0;
  for (int v = 0; v < Vb; v++) {
    const svi_len m = (svi_len)L * (col_ptr[v + 1] - col_ptr[v]);
    cap[v + 1] = cap[v] + (m < K ? m : K);
  }
  const svi_len room = cap[Vb] > 0 ? cap[Vb] : 1;
  int *ok = (int *)R_alloc(room, sizeof(int));
  double *ov = (double *)R_alloc(room, sizeof(double));
  int *on = (int *)R_alloc(Vb > 0 ? Vb : 1, sizeof(int));
  double *scratch = (double *)R_alloc((R_xlen_t)threads * K, sizeof(double));
  int *marks = (int *)R_alloc((R_xlen_t)threads * 2 * K, sizeof(int));
  ope_summary_in in = {K, Vb, col_ptr, col_doc, col_count, theta, beta};
  const char *snames[] = {"words", "p", "k", "v", "r"};
  SEXP sl = PROTECT(svi_named_list(rest == 2 ? 5 : 4, snames));
  double *r = NULL;
  if (rest == 2) {
    SEXP rr = Rf_allocVector(REALSXP, Vb);
    SET_VECTOR_ELT(sl, 4, rr);
    r = REAL(rr);
  }
  lda_summary_ope_sparse(&in, mode, top_k, top_w, base, colsum, L, threads, cap, ok, ov, on, r,
                         scratch, marks);
  svi_len n = 0;
  for (int v = 0; v < Vb; v++) n += on[v];
  if (n > INT_MAX) Rf_error("internal error: sparse summary too large");
  SEXP w = Rf_allocVector(INTSXP, Vb);
  SET_VECTOR_ELT(sl, 0, w);
  if (Vb > 0) memcpy(INTEGER(w), words, sizeof(int) * (size_t)Vb);
  SEXP p = Rf_allocVector(INTSXP, (R_xlen_t)Vb + 1);
  SET_VECTOR_ELT(sl, 1, p);
  SEXP k = Rf_allocVector(INTSXP, (R_xlen_t)n);
  SET_VECTOR_ELT(sl, 2, k);
  SEXP x = Rf_allocVector(REALSXP, (R_xlen_t)n);
  SET_VECTOR_ELT(sl, 3, x);
  int *pp = INTEGER(p), *kk = INTEGER(k);
  double *xx = REAL(x);
  pp[0] = 0;
  for (int v = 0; v < Vb; v++) {
    const int e = pp[v];
    if (on[v] > 0) {
      memcpy(kk + e, ok + cap[v], sizeof(int) * (size_t)on[v]);
      memcpy(xx + e, ov + cap[v], sizeof(double) * (size_t)on[v]);
    }
    pp[v + 1] = e + on[v];
  }
  UNPROTECT(1);
  return sl;
}

/* OPE for every document of a batch (x: a sparsevi_dtm), reading only the
 * batch's words of the topics: O(K x the batch's vocabulary), not O(K V),
 * beyond the topic totals. Options by name (ope_run(), R/lda-ope.R): alpha,
 * iter, eps, mode, stream0, store.
 * topics: K x V weights X; store: NULL (beta = X with each row normalised,
 * the totals summed here) or c(offset, scale, K totals of X) for a lazy store
 * of the global steps (beta_kv proportional to offset + scale X_kv, each
 * topic's total V offset + scale tot_k).
 * mode: 0 no summary, 1 S_kv = sum_d n_dv theta_dk (ML-OPE), 2 phi summary.
 * stream0: the first block's stream id; block b draws from stream0 + b.
 * Returns list(theta = K x D, summary = list(words, x): the batch's words
 * (0-based, increasing) and their K values each, the form
 * lda_summary_blocks() reads (NULL without one), f_start = D, f_end = D).
 * Memory: beyond theta, one K x (batch vocabulary) table: the normalised
 * topics at the batch's words, which the summary then overwrites column by
 * column and which is returned as x (no copy, no row indices). */
SEXP ffi_lda_local_ope(SEXP x_, SEXP topics, SEXP opts, SEXP seed, SEXP threads_) {
  int n_prot = 0;
  SEXP store = svi_opt(opts, "store");
  if (TYPEOF(topics) != REALSXP || !Rf_isMatrix(topics))
    Rf_error("internal error: topics must be a double matrix");
  const int K = Rf_nrows(topics), V = Rf_ncols(topics);
  if (K < 1 || V < 1) Rf_error("internal error: topics must have topics and words");
  if (store != R_NilValue && (TYPEOF(store) != REALSXP || XLENGTH(store) != (R_xlen_t)K + 2))
    Rf_error("internal error: malformed topic store");
  SEXP Vs = PROTECT(Rf_ScalarInteger(V));
  n_prot++;
  svi_dtm x = svi_dtm_list(x_, Vs);
  check_csr(&x);
  ope_opts o = {K, svi_opt_int(opts, "iter", 0, 10000000),
                Rf_asReal(svi_opt(opts, "alpha")), Rf_asReal(svi_opt(opts, "eps")),
                svi_opt_real_or(opts, "background", 0, DBL_MAX, 0)};
  if (!(o.eps > 0.0) || o.eps * K >= 1.0 || !(o.alpha > 0.0) || !R_FINITE(o.alpha))
    Rf_error("internal error: bad OPE settings");
  const int mode = svi_opt_int(opts, "mode", 0, 2);
  /* top_L (fit_lda(L = ) below K): a sparse summary from each document's L
   * largest proportions (lda_summary_ope_sparse()); 0 or K: the dense one */
  const int top_L = svi_opt_int_or(opts, "top_L", 0, K, 0);
  const int sparse = mode != 0 && top_L > 0 && top_L < K;
  /* sparse_rest: 0 renormalise the top L, 1 sample the rest (ope_doc_top()),
   * 2 the shape form (ope_doc_shape()) */
  const int sparse_rest = svi_opt_int_or(opts, "sparse_rest", 0, 2, 1);
  const int threads = svi_threads_from_r(threads_);
  if (threads > 1) svi_pool_wake(); /* they wake while this call sets up */
  const uint64_t sd = svi_seed_from_r(seed);
  const double st_r = Rf_asReal(svi_opt(opts, "stream0"));
  const uint64_t st = (R_FINITE(st_r) && st_r >= 0 && st_r < 1.8e19) ? (uint64_t)st_r : 0;

  /* the batch's words and each entry's place among them */
  const svi_len nnz = x.doc_ptr[x.D];
  int *words = (int *)R_alloc(V, sizeof(int));
  int *loc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  const int Vb = svi_batch_words(x.term, nnz, x.V, NULL, loc, words);
  svi_dtm xl = x;
  xl.term = loc;
  xl.V = Vb;

  /* beta: an R vector when the summary is written over it (see below) */
  const size_t kvb = (size_t)K * (size_t)(Vb > 0 ? Vb : 1);
  SEXP summary = R_NilValue;
  double *beta;
  if ((mode == OPE_SUMMARY_THETA || mode == OPE_SUMMARY_PHI) && !sparse) {
    summary = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)K * Vb));
    n_prot++;
    beta = Vb > 0 ? REAL(summary) : (double *)R_alloc(K, sizeof(double));
  } else {
    beta = (double *)R_alloc(kvb, sizeof(double));
  }
  double *colsum = (double *)R_alloc(Vb > 0 ? Vb : 1, sizeof(double));
  double *inv = (double *)R_alloc(K, sizeof(double));
  double offset = 0.0, scale = 1.0;
  if (store == R_NilValue) {
    lda_topic_totals(REAL(topics), K, V, inv);
  } else {
    offset = REAL(store)[0];
    scale = REAL(store)[1];
    if (!(offset >= 0.0) || !R_FINITE(offset) || !(scale > 0.0) || !R_FINITE(scale))
      Rf_error("internal error: topic store offset or scale out of range");
    /* vocab_size: as for the vb step (src/lda-vb-ffi.c), when `topics` holds
     * only the columns of the batch's words */
    const int Vs = svi_opt_int_or(opts, "vocab_size", 1, INT_MAX, V);
    for (int k = 0; k < K; k++) inv[k] = Vs * offset + scale * REAL(store)[2 + k];
  }
  for (int k = 0; k < K; k++)
    if (!(inv[k] > 0.0) || !R_FINITE(inv[k]))
      Rf_error("internal error: every topic needs a positive finite total");
  for (int k = 0; k < K; k++) inv[k] = 1.0 / inv[k];
  ope_batch_topics(REAL(topics), K, words, Vb, offset, scale, inv, beta, colsum);

  const char *names[] = {"theta", "summary", "f_start", "f_end"};
  SEXP out = PROTECT(svi_named_list(4, names));
  n_prot++;
  SEXP theta = PROTECT(Rf_allocMatrix(REALSXP, K, x.D));
  n_prot++;
  SEXP fs = PROTECT(Rf_allocVector(REALSXP, x.D));
  n_prot++;
  SEXP fe = PROTECT(Rf_allocVector(REALSXP, x.D));
  n_prot++;
  const int mx = max_doc_nnz(&x);
  double *scratch = (double *)R_alloc((R_xlen_t)threads * (mx + K), sizeof(double));
  svi_rng *doc_rng = (svi_rng *)R_alloc((R_xlen_t)2 * (x.D > 0 ? x.D : 1), sizeof(svi_rng));
  if (lda_local_ope(&xl, beta, colsum, &o, sd, st, threads, REAL(theta), REAL(fs),
                    REAL(fe), scratch, mx, doc_rng, doc_rng + (x.D > 0 ? x.D : 1)) != 0)
    Rf_error("internal error: OPE drew another number of uniforms than K + T");
  SET_VECTOR_ELT(out, 0, theta);
  SET_VECTOR_ELT(out, 2, fs);
  SET_VECTOR_ELT(out, 3, fe);
  R_CheckUserInterrupt();

  if (sparse) {
    /* the sampled rest: document d's uniform from stream stream0 + 2^32 + d,
     * apart from the blocks' streams stream0 + b */
    SET_VECTOR_ELT(out, 1, ope_sparse_summary(&xl, K, words, beta, colsum, REAL(theta), mode,
                                              top_L, sparse_rest, sd,
                                              st + ((uint64_t)1 << 32), threads));
  } else if (mode == OPE_SUMMARY_THETA || mode == OPE_SUMMARY_PHI) {
    int *col_ptr = (int *)R_alloc((R_xlen_t)Vb + 1, sizeof(int));
    int *col_doc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    double *col_count = (double *)R_alloc(nnz > 0 ? nnz : 1, sizeof(double));
    ope_transpose(&xl, col_ptr, col_doc, col_count);
    double *acc = (double *)R_alloc((R_xlen_t)threads * K, sizeof(double));
    /* the summary over beta itself: word v's column of the summary needs
     * only word v's column of beta (lda_summary_ope()) */
    ope_summary_in in = {K, Vb, col_ptr, col_doc, col_count, REAL(theta), beta};
    lda_summary_ope(&in, mode, threads, beta, acc);
    SEXP w = PROTECT(Rf_allocVector(INTSXP, Vb));
    n_prot++;
    if (Vb > 0) memcpy(INTEGER(w), words, sizeof(int) * (size_t)Vb);
    /* list(words, x): x held by this list alone, so that the global step
     * may normalise it in place (lda_global_ml_lazy()) */
    const char *snames[] = {"words", "x"};
    SEXP sl = PROTECT(svi_named_list(2, snames));
    n_prot++;
    SET_VECTOR_ELT(sl, 0, w);
    SET_VECTOR_ELT(sl, 1, summary);
    SET_VECTOR_ELT(out, 1, sl);
  }
  UNPROTECT(n_prot);
  return out;
}

/* Each row of a K x V table divided by its sum, in place when allowed
 * (ML-OPE's store from its start, its topics from the store, its summary
 * normalised: R/lda-ope.R). X: a double matrix, or a vector of opts$K rows.
 * opts: K, r_sums (sum as R's rowSums(), else as lda_topic_totals()),
 * divide (x / sum, as R's X / rowSums(X); else x times 1 / sum, or 0 for a
 * row summing to 0), in_place (write X itself when the package owns it,
 * svi_owns(); given = the caller gives X up although R shares it: a new
 * fit's start, whose other holders are never read again; else X is
 * copied), mark (1: the result loses its dimnames and carries the ownership
 * flag, a table given up to its store; -1: it loses both). Returns the
 * result. */
SEXP ffi_lda_ope_rows(SEXP X, SEXP opts) {
  int n_prot = 0;
  if (TYPEOF(X) != REALSXP) Rf_error("internal error: the table must be doubles");
  const int K = Rf_isMatrix(X) ? Rf_nrows(X) : svi_opt_int(opts, "K", 1, INT_MAX);
  if (K < 1 || XLENGTH(X) % K != 0) Rf_error("internal error: malformed table");
  const svi_len V = (svi_len)(XLENGTH(X) / K);
  const int in_place = svi_opt_flag(opts, "in_place") &&
                       (svi_owns(X) || svi_opt_flag(opts, "given"));
  const int mark = svi_opt_int_or(opts, "mark", -1, 1, 0);
  SEXP out = X;
  if (!in_place) {
    out = PROTECT(Rf_duplicate(X));
    n_prot++;
  }
  /* R_alloc aligns for doubles only; long double wants 16 bytes */
  char *raw = R_alloc((size_t)K * sizeof(long double) + 16, 1);
  long double *acc = (long double *)(((uintptr_t)raw + 15) & ~(uintptr_t)15);
  double *f = (double *)R_alloc(K, sizeof(double));
  ope_rows_normalise(REAL(out), K, V, svi_opt_flag(opts, "r_sums"),
                     svi_opt_flag(opts, "divide"), acc, f);
  if (mark != 0) {
    if (Rf_isMatrix(out)) Rf_setAttrib(out, R_DimNamesSymbol, R_NilValue);
    if (mark > 0) svi_give_up(out); else svi_take_back(out);
  }
  UNPROTECT(n_prot);
  return out;
}

/* ML-OPE's topics as the fit's topic_word (new_sparsevi_lda(), R/lda-class.R):
 * beta with dimnames dn. A table given up at the end of training (flagged
 * as owned by ffi_lda_ope_rows(mark = 1): the store's own, whose other
 * holders are never read again) is named in place and the flag removed: no
 * second K x V table; any other is copied. */
SEXP ffi_lda_ope_topic_word(SEXP beta, SEXP dn) {
  int n_prot = 0;
  svi_need_matrix(beta, REALSXP, -1, -1, "beta");
  SEXP out = beta;
  if (!svi_flagged(beta)) {
    out = PROTECT(Rf_duplicate(beta));
    n_prot++;
  }
  Rf_setAttrib(out, R_DimNamesSymbol, dn);
  svi_take_back(out);
  UNPROTECT(n_prot);
  return out;
}

/* ML-OPE topic update: beta (K x V, rows summing to 1), summary S (K x V),
 * step size rho. Returns (1 - rho) beta + rho normalise_rows(S). */
SEXP ffi_lda_global_ml(SEXP beta, SEXP S, SEXP rho) {
  int n_prot = 0;
  if (TYPEOF(beta) != REALSXP || TYPEOF(S) != REALSXP || !Rf_isMatrix(beta) ||
      !Rf_isMatrix(S))
    Rf_error("internal error: beta and the summary must be K x V doubles");
  const int K = Rf_nrows(beta), V = Rf_ncols(beta);
  if (Rf_nrows(S) != K || Rf_ncols(S) != V)
    Rf_error("internal error: beta and the summary must be K x V doubles");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  n_prot++;
  double *rs = (double *)R_alloc(K, sizeof(double));
  lda_global_ml(REAL(beta), REAL(S), K, V, Rf_asReal(rho), REAL(out), rs);
  UNPROTECT(n_prot);
  return out;
}
