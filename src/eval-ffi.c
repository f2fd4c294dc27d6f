/* Glue of the evaluators: document completion, left-to-right, UMass
 * coherence and the NPMI co-occurrence counts. Unpacks SEXPs, allocates
 * outputs and scratch, calls the kernels in eval-completion.c, eval-ltr.c,
 * eval-umass.c and eval-npmi.c. */
#include <limits.h>
#include <math.h>
#include "ffi.h"
#include "lda.h"
#include "lda-vb-ffi.h"
#include "lda-gibbs.h"
#include "eval-npmi.h"

/* Document completion (src/eval-completion.c): obs and held are the
 * observed and held-out parts (sparsevi_dtm lists), beta K x V, options by
 * name as for the vb step (lda_vb_opts_from_r()). */
SEXP ffi_lda_completion(SEXP obs_, SEXP held_, SEXP V_, SEXP beta, SEXP opts,
                        SEXP threads_) {
  int n_prot = 0;
  svi_dtm obs = svi_dtm_list(obs_, V_);
  svi_dtm held = svi_dtm_list(held_, V_);
  if (obs.D != held.D) Rf_error("internal error: observed and held-out parts differ in size");
  lda_check_topics(beta, obs.V);
  int K = Rf_nrows(beta);
  lda_vb_opts o = lda_vb_opts_from_r(K, opts);
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

/* Left-to-right: x a sparsevi_dtm, beta K x V (rows: topics); options by
 * name: alpha (length K), particles, stream0. Returns list(loglik =
 * per-document log probability, tokens = per-document token counts). */
SEXP ffi_eval_ltr(SEXP x_, SEXP V_, SEXP beta, SEXP opts, SEXP seed, SEXP threads_) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_list(x_, V_);
  svi_need_matrix(beta, REALSXP, -1, x.V, "beta");
  int K = Rf_nrows(beta), R = svi_opt_int(opts, "particles", 1, 100000),
      threads = svi_threads_from_r(threads_);
  if (K < 1) Rf_error("internal error: dimensions");
  SEXP alpha = svi_opt(opts, "alpha");
  SEXP stream0 = svi_opt(opts, "stream0");
  svi_need_real(alpha, K, "alpha");
  svi_len maxlen = 1;
  for (int d = 0; d < x.D; d++) {
    svi_len n = 0;
    for (int e = x.doc_ptr[d]; e < x.doc_ptr[d + 1]; e++)
      n += (svi_len)floor(x.count[e] + 0.5);
    if (n > maxlen) maxlen = n;
  }
  svi_len per = (svi_len)R * K + maxlen;
  int *iscr = (int *)R_alloc(per * threads, sizeof(int));
  double *dscr = (double *)R_alloc((size_t)K * threads, sizeof(double));
  const char *names[] = {"loglik", "tokens"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SEXP ll = PROTECT(Rf_allocVector(REALSXP, x.D));
  n_prot++;
  SEXP nn = PROTECT(Rf_allocVector(REALSXP, x.D));
  n_prot++;
  eval_ltr(&x, REAL(beta), K, REAL(alpha), R, svi_seed_from_r(seed),
           svi_stream_from_r(stream0), threads, iscr, per, dscr, REAL(ll), REAL(nn));
  SET_VECTOR_ELT(out, 0, ll);
  SET_VECTOR_ELT(out, 1, nn);
  UNPROTECT(n_prot);
  return out;
}

/* UMass coherence: top is an n x K integer matrix of 0-based word ids.
 * Returns list(score = per-topic coherence, skipped = pairs skipped). */
SEXP ffi_eval_umass(SEXP doc_ptr, SEXP term, SEXP count, SEXP V_, SEXP top) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_view(doc_ptr, term, count, V_);
  svi_need_matrix(top, INTSXP, -1, -1, "top");
  int n = Rf_nrows(top), K = Rf_ncols(top);
  const int *tp = INTEGER(top);
  for (R_xlen_t i = 0; i < XLENGTH(top); i++)
    if (tp[i] < 0 || tp[i] >= x.V) Rf_error("internal error: top word out of range");
  svi_len nk = (svi_len)n * K;
  int *slot = (int *)R_alloc(x.V, sizeof(int));
  svi_len *lptr = (svi_len *)R_alloc(nk + 1, sizeof(svi_len));
  svi_len *fill = (svi_len *)R_alloc(nk + 1, sizeof(svi_len));
  svi_len nnz = x.doc_ptr[x.D];
  int *docs = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  const char *names[] = {"score", "skipped"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SEXP score = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  SEXP skipped = PROTECT(Rf_allocVector(INTSXP, K));
  n_prot++;
  eval_umass(&x, tp, n, K, slot, lptr, docs, fill, REAL(score), INTEGER(skipped));
  SET_VECTOR_ELT(out, 0, score);
  SET_VECTOR_ELT(out, 1, skipped);
  UNPROTECT(n_prot);
  return out;
}

/* Document frequencies of U words and co-occurrence counts of P pairs in x
 * (a sparsevi_dtm); the pairs as a named list (n_pairs = P and):
 * word_map: integer, length V, 0-based word-of-interest index or -1.
 * adj_ptr (U + 1), adj_partner, adj_pair: each pair listed under its first word.
 * Returns list(doc_freq = U doubles, pair_freq = P doubles). */
SEXP ffi_eval_npmi_counts(SEXP x_, SEXP pairs, SEXP threads_) {
  int n_prot = 0;
  /* the word pairs by name (coherence_npmi(), R/eval.R) */
  SEXP word_map = svi_opt(pairs, "word_map"), adj_ptr = svi_opt(pairs, "adj_ptr"),
       adj_partner = svi_opt(pairs, "adj_partner"), adj_pair = svi_opt(pairs, "adj_pair"),
       n_pairs = svi_opt(pairs, "n_pairs");
  if (TYPEOF(word_map) != INTSXP || TYPEOF(adj_ptr) != INTSXP ||
      TYPEOF(adj_partner) != INTSXP || TYPEOF(adj_pair) != INTSXP ||
      XLENGTH(adj_ptr) < 1 || XLENGTH(adj_partner) != XLENGTH(adj_pair) ||
      XLENGTH(word_map) > INT_MAX || XLENGTH(adj_ptr) > INT_MAX)
    Rf_error("internal error: malformed word pairs");
  SEXP Vs = PROTECT(Rf_ScalarInteger((int)XLENGTH(word_map)));
  n_prot++;
  svi_dtm x = svi_dtm_list(x_, Vs);
  const int U = (int)XLENGTH(adj_ptr) - 1, P = Rf_asInteger(n_pairs);
  if (P == NA_INTEGER || P < 0 || P > XLENGTH(adj_pair))
    Rf_error("internal error: malformed word pairs");
  const int *wm = INTEGER(word_map), *ap = INTEGER(adj_ptr), *pa = INTEGER(adj_partner),
            *pp = INTEGER(adj_pair);
  for (int v = 0; v < x.V; v++)
    if (wm[v] < -1 || wm[v] >= U) Rf_error("internal error: malformed word pairs");
  if (ap[0] != 0 || ap[U] != XLENGTH(adj_partner))
    Rf_error("internal error: malformed word pairs");
  for (int u = 0; u < U; u++)
    if (ap[u + 1] < ap[u]) Rf_error("internal error: malformed word pairs");
  for (R_xlen_t a = 0; a < XLENGTH(adj_partner); a++)
    if (pa[a] < 0 || pa[a] >= U || pp[a] < 0 || pp[a] >= P)
      Rf_error("internal error: malformed word pairs");
  const int threads = svi_threads_from_r(threads_);
  npmi_pairs pr = {
      U, P, INTEGER(word_map), INTEGER(adj_ptr), INTEGER(adj_partner), INTEGER(adj_pair)};
  const char *names[] = {"doc_freq", "pair_freq"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SEXP df = PROTECT(Rf_allocVector(REALSXP, U));
  n_prot++;
  SEXP pf = PROTECT(Rf_allocVector(REALSXP, P));
  n_prot++;
  double *scratch =
      (double *)R_alloc((R_xlen_t)threads * ((R_xlen_t)U + P) + 1, sizeof(double));
  int *flags = (int *)R_alloc((R_xlen_t)threads * U + 1, sizeof(int));
  eval_npmi_counts(&x, &pr, threads, REAL(df), REAL(pf), scratch, flags);
  SET_VECTOR_ELT(out, 0, df);
  SET_VECTOR_ELT(out, 1, pf);
  UNPROTECT(n_prot);
  return out;
}
