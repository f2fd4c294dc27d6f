/* Glue shared by all entry points, and the entry points of the shared
 * infrastructure itself (used by oracle tests and benchmarks). */
#include <stdlib.h>
#include <math.h>
#include "glue.h"
#include <Rmath.h>

svi_dtm svi_dtm_view(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_dtm x;
  if (TYPEOF(doc_ptr) != INTSXP || TYPEOF(term) != INTSXP || TYPEOF(count) != REALSXP ||
      XLENGTH(doc_ptr) < 1 || XLENGTH(term) != XLENGTH(count))
    Rf_error("internal error: malformed document-term structure");
  x.D = (int)XLENGTH(doc_ptr) - 1;
  x.V = Rf_asInteger(V);
  x.doc_ptr = INTEGER(doc_ptr);
  x.term = INTEGER(term);
  x.count = REAL(count);
  if (x.doc_ptr[x.D] != XLENGTH(term))
    Rf_error("internal error: doc_ptr does not end at the number of entries");
  return x;
}

uint64_t svi_seed_from_r(SEXP seed) {
  if (TYPEOF(seed) != REALSXP || XLENGTH(seed) != 2)
    Rf_error("internal error: seed must be two doubles");
  uint64_t hi = (uint64_t)REAL(seed)[0], lo = (uint64_t)REAL(seed)[1];
  return (hi << 32) ^ lo;
}

int svi_threads_from_r(SEXP threads) {
  int n = Rf_asInteger(threads);
  if (n == NA_INTEGER || n < 1) n = 1;
#ifndef _OPENMP
  n = 1;
#endif
  return n;
}

SEXP svi_named_list(int n, const char **names) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
  SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
  for (int i = 0; i < n; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
  Rf_setAttrib(out, R_NamesSymbol, nm);
  UNPROTECT(2);
  return out;
}

/* ---- entry points of the infrastructure ---- */

/* which: 0 svi_digamma, 1 svi_lgamma, 2 svi_exp, 3 R's digammafn,
 * 4 R's lgammafn, 5 libm exp. */
SEXP ffi_svi_special(SEXP x, SEXP which) {
  R_xlen_t n = XLENGTH(x);
  int w = Rf_asInteger(which);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  const double *px = REAL(x);
  double *po = REAL(out);
  switch (w) {
  case 0: for (R_xlen_t i = 0; i < n; i++) po[i] = svi_digamma(px[i]); break;
  case 1: for (R_xlen_t i = 0; i < n; i++) po[i] = svi_lgamma(px[i]); break;
  case 2:
    for (R_xlen_t i = 0; i < n; i++) po[i] = px[i];
    svi_exp_inplace(po, n);
    break;
  case 3: for (R_xlen_t i = 0; i < n; i++) po[i] = Rf_digamma(px[i]); break;
  case 4: for (R_xlen_t i = 0; i < n; i++) po[i] = Rf_lgammafn(px[i]); break;
  case 5: for (R_xlen_t i = 0; i < n; i++) po[i] = exp(px[i]); break;
  default: Rf_error("internal error: unknown special function %d", w);
  }
  UNPROTECT(1);
  return out;
}

static const double *sort_key;
static int cmp_desc(const void *a, const void *b) {
  int ia = *(const int *)a, ib = *(const int *)b;
  double va = sort_key[ia], vb = sort_key[ib];
  if (va > vb) return -1;
  if (va < vb) return 1;
  return (ia > ib) - (ia < ib);
}

/* Top-L of each column of the K x n matrix W. method 0: selection;
 * 1: full sort (the benchmark's baseline). Returns an L x n integer matrix of
 * 1-based indices, each column in decreasing order of weight. */
SEXP ffi_svi_select_top(SEXP W, SEXP L_, SEXP method) {
  int K = Rf_nrows(W), n = Rf_ncols(W), L = Rf_asInteger(L_), m = Rf_asInteger(method);
  if (L < 1 || L > K) Rf_error("internal error: L out of range");
  SEXP out = PROTECT(Rf_allocMatrix(INTSXP, L, n));
  int *idx = (int *)R_alloc(K, sizeof(int));
  const double *w = REAL(W);
  int *po = INTEGER(out);
  for (int j = 0; j < n; j++) {
    const double *wj = w + (R_xlen_t)j * K;
    if (m == 0) {
      svi_select_top(wj, K, L, idx);
    } else {
      for (int k = 0; k < K; k++) idx[k] = k;
      sort_key = wj;
      qsort(idx, K, sizeof(int), cmp_desc);
    }
    /* order the selected L for a canonical output (L log L, outside timing
     * of interest when L << K) */
    sort_key = wj;
    if (m == 0) qsort(idx, L, sizeof(int), cmp_desc);
    for (int l = 0; l < L; l++) po[(R_xlen_t)j * L + l] = idx[l] + 1;
  }
  UNPROTECT(1);
  return out;
}

/* n uniforms from stream `stream` of seed `seed`. */
SEXP ffi_svi_rng_unif(SEXP seed, SEXP stream, SEXP n_) {
  svi_rng r;
  svi_rng_init(&r, svi_seed_from_r(seed), (uint64_t)Rf_asReal(stream));
  R_xlen_t n = (R_xlen_t)Rf_asReal(n_);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  for (R_xlen_t i = 0; i < n; i++) REAL(out)[i] = svi_rng_unif(&r);
  UNPROTECT(1);
  return out;
}

SEXP ffi_svi_has_openmp(void) {
#ifdef _OPENMP
  return Rf_ScalarLogical(1);
#else
  return Rf_ScalarLogical(0);
#endif
}
