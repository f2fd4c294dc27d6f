/* Glue of the model-based hierarchical clustering (mix-hc.c). */
#include "ffi.h"
#include "mix-hc.h"

/* X: N x D numeric matrix (N >= 2); alpha, beta > 0. Returns list(merges =
 * (N - 1) x 2 integer matrix, 1-based, the cluster kept first; cost). */
SEXP ffi_mix_hc(SEXP X, SEXP alpha_, SEXP beta_) {
  int n_prot = 0;
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  int N = Rf_nrows(X), D = Rf_ncols(X);
  if (N < 2 || D < 1) Rf_error("internal error: X needs 2 rows and 1 column");
  svi_need_real(alpha_, 1, "alpha");
  svi_need_real(beta_, 1, "beta");
  double alpha = REAL(alpha_)[0], beta = REAL(beta_)[0];
  if (!(alpha > 0) || !(beta > 0) || !R_FINITE(alpha) || !R_FINITE(beta))
    Rf_error("internal error: alpha and beta must be positive");
  svi_need_size((double)N, (double)N / 2, 268435456.0, "X");
  svi_need_size((double)N, (double)D * D, 268435456.0, "X");
  const double *x = REAL(X);
  for (R_xlen_t i = 0; i < XLENGTH(X); i++)
    if (!R_FINITE(x[i])) Rf_error("internal error: X must be finite");
  double *mem = (double *)R_alloc(mix_hc_work_doubles(N, D), sizeof(double));
  int *flags = (int *)R_alloc(N, sizeof(int));
  svi_len *best = (svi_len *)R_alloc(N, sizeof(svi_len));
  int *mg = (int *)R_alloc((size_t)2 * (N - 1), sizeof(int));
  const char *names[] = {"merges", "cost"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SEXP m = Rf_allocMatrix(INTSXP, N - 1, 2);
  SET_VECTOR_ELT(out, 0, m);
  SEXP cost = Rf_allocVector(REALSXP, N - 1);
  SET_VECTOR_ELT(out, 1, cost);
  mix_hc_merges(x, N, D, alpha, beta, mg, REAL(cost), mem, flags, best);
  for (int s = 0; s < N - 1; s++) {
    INTEGER(m)[s] = mg[2 * s] + 1;
    INTEGER(m)[s + N - 1] = mg[2 * s + 1] + 1;
  }
  UNPROTECT(n_prot);
  return out;
}
