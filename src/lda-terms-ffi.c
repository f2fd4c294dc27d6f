/* Entry points of terms(fit, type = "frex") (lda-terms.c) and of
 * augment()'s topic of each (document, word) pair. */
#include "ffi.h"
#include "lda-terms.h"

/* The n FREX words of each topic of the K x V topics TW / rs (each row
 * over its entry of rs: lambda over its row sums; TW itself when rs is
 * NULL), w the weight of frequency: an n x K integer matrix of 1-based
 * words, each column best first. The threads share the topics (blocks of
 * LDA_FREX_BLOCK); each topic's words are its own, so the result does not
 * depend on threads. */
SEXP ffi_lda_terms_frex(SEXP TW, SEXP rs_, SEXP n_, SEXP w_, SEXP threads_) {
  svi_need_matrix(TW, REALSXP, -1, -1, "TW");
  const int K = Rf_nrows(TW), V = Rf_ncols(TW);
  if (K < 1 || V < 1) Rf_error("internal error: TW has no topics or no words");
  if (rs_ != R_NilValue) svi_need_real(rs_, K, "rs");
  const int n = svi_int_arg(n_, 1, V, "n");
  const double w = svi_real_arg(w_, 0.0, 1.0, "w");
  const int threads = svi_threads_from_r(threads_);
  SEXP out = PROTECT(Rf_allocMatrix(INTSXP, n, K));
  lda_frex_scratch *sc = (lda_frex_scratch *)R_alloc(threads, sizeof(lda_frex_scratch));
  for (int t = 0; t < threads; t++) {
    double *d = (double *)R_alloc((size_t)(LDA_FREX_BLOCK + 3) * V, sizeof(double));
    sc[t].beta = d;
    sc[t].excl = d + (svi_len)LDA_FREX_BLOCK * V;
    sc[t].F = sc[t].excl + V;
    sc[t].E = sc[t].F + V;
    sc[t].key = (uint64_t *)R_alloc((size_t)2 * V, sizeof(uint64_t));
    sc[t].key2 = sc[t].key + V;
    sc[t].ix = (int *)R_alloc((size_t)2 * V + LDA_FREX_RADIX, sizeof(int));
    sc[t].ix2 = sc[t].ix + V;
    sc[t].cnt = sc[t].ix + 2 * (svi_len)V;
  }
  const double *tw = REAL(TW), *rs = rs_ == R_NilValue ? NULL : REAL(rs_);
  double *cs = (double *)R_alloc(V, sizeof(double));
  lda_frex_colsums(tw, rs, K, V, cs);
  int *po = INTEGER(out);
  const int blocks = (K + LDA_FREX_BLOCK - 1) / LDA_FREX_BLOCK;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
#endif
  for (int b = 0; b < blocks; b++) {
    const int k0 = b * LDA_FREX_BLOCK,
              nb = K - k0 < LDA_FREX_BLOCK ? K - k0 : LDA_FREX_BLOCK;
    lda_frex_block(tw, rs, K, V, cs, w, k0, nb, n, po + (svi_len)k0 * n,
                   sc + svi_thread_id());
  }
  for (R_xlen_t i = 0; i < XLENGTH(out); i++) po[i]++;
  UNPROTECT(1);
  return out;
}

/* The topic of each (document, word) pair of augment() (R/tidy.R): the k
 * of largest theta[d, k] beta[k, w], the first on ties (max.col()'s
 * "first"), topic 1 when every product is 0. theta is sparse by document:
 * column d of a K x D dgCMatrix (tp, ti, tx; topics increasing), so the
 * topics outside a document's are products of 0. beta's column w is
 * column col[j] of M over rs (each row over its entry: lambda over its row
 * sums, the bits of topic_word; M itself when rs is NULL). Pair j is
 * document doc[j] (0-based) and column col[j] (0-based). Returns the
 * 1-based topics; the threads share the pairs, each its own. */
SEXP ffi_lda_pair_topics(SEXP tp_, SEXP ti_, SEXP tx_, SEXP M, SEXP rs_, SEXP doc_, SEXP col_,
                         SEXP threads_) {
  svi_need_matrix(M, REALSXP, -1, -1, "M");
  const int K = Rf_nrows(M), C = Rf_ncols(M);
  if (K < 1) Rf_error("internal error: M has no topics");
  svi_need_int(tp_, -1, "tp");
  svi_need_int(ti_, -1, "ti");
  svi_need_real(tx_, XLENGTH(ti_), "tx");
  svi_need_int(doc_, -1, "doc");
  svi_need_int(col_, XLENGTH(doc_), "col");
  if (rs_ != R_NilValue) svi_need_real(rs_, K, "rs");
  const R_xlen_t D = XLENGTH(tp_) - 1, nz = XLENGTH(ti_), n = XLENGTH(doc_);
  if (D < 0) Rf_error("internal error: tp is empty");
  const int *tp = INTEGER(tp_), *ti = INTEGER(ti_), *doc = INTEGER(doc_), *col = INTEGER(col_);
  if (tp[0] != 0 || tp[D] != nz) Rf_error("internal error: malformed tp");
  for (R_xlen_t d = 0; d < D; d++)
    if (tp[d + 1] < tp[d]) Rf_error("internal error: malformed tp");
  for (R_xlen_t e = 0; e < nz; e++)
    if (ti[e] < 0 || ti[e] >= K) Rf_error("internal error: topic index out of range");
  for (R_xlen_t j = 0; j < n; j++)
    if (doc[j] < 0 || doc[j] >= D || col[j] < 0 || col[j] >= C)
      Rf_error("internal error: pair out of range");
  const int threads = svi_threads_from_r(threads_);
  const double *tx = REAL(tx_), *m = REAL(M), *rs = rs_ == R_NilValue ? NULL : REAL(rs_);
  SEXP out = PROTECT(Rf_allocVector(INTSXP, n));
  int *po = INTEGER(out);
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 4096) num_threads(threads) if (threads > 1)
#endif
  for (R_xlen_t j = 0; j < n; j++) {
    const double *mw = m + (svi_len)col[j] * K;
    double best = 0.0;
    int at = 0;
    for (int e = tp[doc[j]]; e < tp[doc[j] + 1]; e++) {
      const int k = ti[e];
      const double beta = rs ? mw[k] / rs[k] : mw[k];
      const double s = tx[e] * beta;
      if (s > best) {
        best = s;
        at = k;
      }
    }
    po[j] = at + 1;
  }
  UNPROTECT(1);
  return out;
}
