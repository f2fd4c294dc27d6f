/* Entry point of terms(fit, type = "frex") (lda-terms.c). */
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
