/* Glue of the Bregman k-means++ pick (lda-pick.c). */
#include <limits.h>
#include "ffi.h"
#include "lda-pick.h"

/* x a sparsevi_dtm (V terms); p (per entry), self, lens (per document) and
 * u (K uniforms) from R/lda-start.R's lda_bregman_pick(). Returns the K chosen
 * documents, 1-based. */
SEXP ffi_lda_bregman_pick(SEXP x_, SEXP V_, SEXP K_, SEXP eta_, SEXP p, SEXP self,
                          SEXP lens, SEXP u) {
  svi_dtm x = svi_dtm_list(x_, V_);
  int K = svi_int_arg(K_, 1, INT_MAX, "K");
  double eta = svi_real_arg(eta_, 0, 1e300, "eta");
  svi_len nnz = x.doc_ptr[x.D];
  svi_need_real(p, (R_xlen_t)nnz, "p");
  svi_need_real(self, x.D, "self");
  svi_need_real(lens, x.D, "lens");
  svi_need_real(u, K, "u");
  if (x.D < 1) Rf_error("internal error: no documents to pick from");
  size_t D = (size_t)x.D, n1 = nnz > 0 ? (size_t)nnz : 1;
  int *tp = (int *)R_alloc((size_t)x.V + 1, sizeof(int));
  int *tdoc = (int *)R_alloc(n1, sizeof(int));
  double *tval = (double *)R_alloc(n1, sizeof(double));
  double *psum = (double *)R_alloc(D, sizeof(double));
  double *cross = (double *)R_alloc(D, sizeof(double));
  double *mind = (double *)R_alloc(D, sizeof(double));
  double *w = (double *)R_alloc(D, sizeof(double));
  unsigned char *flag = (unsigned char *)R_alloc(D, 1);
  SEXP out = PROTECT(Rf_allocVector(INTSXP, K));
  lda_bregman_pick(&x, K, eta, REAL(p), REAL(self), REAL(lens), REAL(u), INTEGER(out), tp,
                   tdoc, tval, psum, cross, mind, w, flag);
  UNPROTECT(1);
  return out;
}
