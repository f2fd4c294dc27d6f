/* Glue shared by all entry points, and the entry points of the shared
 * infrastructure itself (used by oracle tests and benchmarks). */
#include <stdlib.h>
#include <math.h>
#include <limits.h>
#include <string.h>
#include "ffi.h"
#include <Rmath.h>
#ifndef _WIN32
#include <unistd.h>
#endif

svi_dtm svi_dtm_view_unchecked(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_dtm x;
  if (TYPEOF(doc_ptr) != INTSXP || TYPEOF(term) != INTSXP || TYPEOF(count) != REALSXP ||
      XLENGTH(doc_ptr) < 1 || XLENGTH(doc_ptr) > INT_MAX || XLENGTH(term) != XLENGTH(count) ||
      XLENGTH(term) > INT_MAX)
    Rf_error("internal error: malformed document-term structure");
  x.D = (int)XLENGTH(doc_ptr) - 1;
  x.V = svi_int_arg(V, 0, INT_MAX - 1, "V");
  x.doc_ptr = INTEGER(doc_ptr);
  x.term = INTEGER(term);
  x.count = REAL(count);
  if (x.doc_ptr[x.D] != XLENGTH(term))
    Rf_error("internal error: doc_ptr does not end at the number of entries");
  return x;
}

/* Entries must be in range for every kernel to index safely: doc_ptr
 * non-decreasing from 0, terms in [0, V), counts finite, non-negative and
 * below 2^53 (kernels round them to token numbers). One pass over the
 * entries, cheap next to any kernel that reads them. */
svi_dtm svi_dtm_view(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_dtm x = svi_dtm_view_unchecked(doc_ptr, term, count, V);
  if (x.V < 1) Rf_error("internal error: V must be positive");
  if (x.doc_ptr[0] != 0) Rf_error("internal error: doc_ptr must start at 0");
  for (int d = 0; d < x.D; d++)
    if (x.doc_ptr[d + 1] < x.doc_ptr[d]) Rf_error("internal error: doc_ptr decreases");
  const R_xlen_t nnz = XLENGTH(term);
  for (R_xlen_t e = 0; e < nnz; e++) {
    double c = x.count[e];
    if (x.term[e] < 0 || x.term[e] >= x.V) Rf_error("internal error: term out of range");
    if (!(c >= 0.0 && c <= 9007199254740992.0))
      Rf_error("internal error: counts must be finite, non-negative and below 2^53");
  }
  return x;
}

svi_dtm svi_dtm_list(SEXP x, SEXP V) {
  if (TYPEOF(x) != VECSXP)
    Rf_error("internal error: a corpus must be a sparsevi_dtm list");
  return svi_dtm_view(svi_opt(x, "doc_ptr"), svi_opt(x, "term"), svi_opt(x, "count"), V);
}

static void need_type(SEXP x, SEXPTYPE type, R_xlen_t n, const char *what) {
  if (TYPEOF(x) != type)
    Rf_error("internal error: `%s` must be of type %s, not %s", what, Rf_type2char(type),
             Rf_type2char(TYPEOF(x)));
  if (n >= 0 && XLENGTH(x) != n)
    Rf_error("internal error: `%s` must have length %.0f, not %.0f", what, (double)n,
             (double)XLENGTH(x));
}

void svi_need_real(SEXP x, R_xlen_t n, const char *what) { need_type(x, REALSXP, n, what); }
void svi_need_int(SEXP x, R_xlen_t n, const char *what) { need_type(x, INTSXP, n, what); }
void svi_need_lgl(SEXP x, R_xlen_t n, const char *what) { need_type(x, LGLSXP, n, what); }
void svi_need_list(SEXP x, R_xlen_t n, const char *what) { need_type(x, VECSXP, n, what); }

void svi_need_matrix(SEXP x, SEXPTYPE type, int nrow, int ncol, const char *what) {
  need_type(x, type, -1, what);
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2)
    Rf_error("internal error: `%s` must be a matrix", what);
  if ((nrow >= 0 && INTEGER(dim)[0] != nrow) || (ncol >= 0 && INTEGER(dim)[1] != ncol))
    Rf_error("internal error: `%s` has the wrong dimensions", what);
}

static double scalar(SEXP x, const char *what) {
  if ((TYPEOF(x) != REALSXP && TYPEOF(x) != INTSXP && TYPEOF(x) != LGLSXP) ||
      XLENGTH(x) < 1)
    Rf_error("internal error: `%s` must be a number", what);
  double v = Rf_asReal(x);
  if (ISNAN(v)) Rf_error("internal error: `%s` must not be NA", what);
  return v;
}

int svi_int_arg(SEXP x, int lo, int hi, const char *what) {
  double v = scalar(x, what);
  if (!(v >= lo && v <= hi) || v != floor(v))
    Rf_error("internal error: `%s` must be a whole number in [%d, %d]", what, lo, hi);
  return (int)v;
}

double svi_real_arg(SEXP x, double lo, double hi, const char *what) {
  double v = scalar(x, what);
  if (!(v >= lo && v <= hi)) Rf_error("internal error: `%s` out of range", what);
  return v;
}

int svi_flag_arg(SEXP x, const char *what) {
  if (TYPEOF(x) != LGLSXP || XLENGTH(x) < 1 || LOGICAL(x)[0] == NA_LOGICAL)
    Rf_error("internal error: `%s` must be TRUE or FALSE", what);
  return LOGICAL(x)[0];
}

SEXP svi_opt(SEXP opts, const char *name) {
  if (TYPEOF(opts) != VECSXP) Rf_error("internal error: options must be a named list");
  SEXP nms = Rf_getAttrib(opts, R_NamesSymbol);
  if (TYPEOF(nms) == STRSXP) {
    R_xlen_t n = XLENGTH(opts);
    for (R_xlen_t i = 0; i < n; i++)
      if (strcmp(CHAR(STRING_ELT(nms, i)), name) == 0) return VECTOR_ELT(opts, i);
  }
  Rf_error("internal error: option `%s` is missing", name);
  return R_NilValue; /* not reached */
}

int svi_opt_int(SEXP opts, const char *name, int lo, int hi) {
  return svi_int_arg(svi_opt(opts, name), lo, hi, name);
}

double svi_opt_real(SEXP opts, const char *name, double lo, double hi) {
  return svi_real_arg(svi_opt(opts, name), lo, hi, name);
}

int svi_opt_flag(SEXP opts, const char *name) {
  return svi_flag_arg(svi_opt(opts, name), name);
}

/* The option `name` of opts, or R_NilValue when it is missing. */
static SEXP opt_or_null(SEXP opts, const char *name) {
  if (TYPEOF(opts) != VECSXP) Rf_error("internal error: options must be a named list");
  SEXP nms = Rf_getAttrib(opts, R_NamesSymbol);
  if (TYPEOF(nms) == STRSXP) {
    R_xlen_t n = XLENGTH(opts);
    for (R_xlen_t i = 0; i < n; i++)
      if (strcmp(CHAR(STRING_ELT(nms, i)), name) == 0) return VECTOR_ELT(opts, i);
  }
  return R_NilValue;
}

int svi_opt_int_or(SEXP opts, const char *name, int lo, int hi, int absent) {
  SEXP v = opt_or_null(opts, name);
  return Rf_isNull(v) ? absent : svi_int_arg(v, lo, hi, name);
}

double svi_opt_real_or(SEXP opts, const char *name, double lo, double hi, double absent) {
  SEXP v = opt_or_null(opts, name);
  return Rf_isNull(v) ? absent : svi_real_arg(v, lo, hi, name);
}

static void check_interrupt(void *unused) {
  (void)unused;
  R_CheckUserInterrupt();
}

int svi_interrupt_pending(void) {
  return R_ToplevelExec(check_interrupt, NULL) == FALSE;
}

void svi_need_size(double a, double b, double limit, const char *what) {
  if (!(a >= 0 && b >= 0) || a * b > limit || a * b > (double)R_XLEN_T_MAX)
    Rf_error("internal error: %s too large (%.0f x %.0f)", what, a, b);
}

uint64_t svi_seed_from_r(SEXP seed) {
  if (TYPEOF(seed) != REALSXP || XLENGTH(seed) != 2 || !(REAL(seed)[0] >= 0) ||
      !(REAL(seed)[1] >= 0) || REAL(seed)[0] >= 4294967296.0 || REAL(seed)[1] >= 4294967296.0)
    Rf_error("internal error: seed must be two doubles in [0, 2^32)");
  uint64_t hi = (uint64_t)REAL(seed)[0], lo = (uint64_t)REAL(seed)[1];
  return (hi << 32) ^ lo;
}

uint64_t svi_stream_from_r(SEXP stream) {
  return (uint64_t)svi_real_arg(stream, 0, 9007199254740992.0, "stream");
}

/* A child of fork() (parallel::mclapply(), makeForkCluster(), future's
 * multicore plan) runs on one thread: GNU OpenMP's thread pool does not
 * survive a fork, and a child that opens a parallel region of two or more
 * threads after its parent has used the pool waits forever. Every kernel's
 * thread count passes through svi_threads_from_r(), which compares the
 * process id with the one recorded when the DLL was loaded (no fork handler,
 * which could outlive an unloaded DLL). Results do not depend on it. */
#ifndef _WIN32
static pid_t svi_pid = 0;
#endif

void svi_threads_init(void) {
#ifndef _WIN32
  svi_pid = getpid();
#endif
}

static int svi_forked(void) {
#ifndef _WIN32
  return svi_pid != 0 && getpid() != svi_pid;
#else
  return 0;
#endif
}

int svi_threads_from_r(SEXP threads) {
  int n = svi_int_arg(threads, 1, 1024, "threads");
#ifndef _OPENMP
  n = 1;
#endif
  if (n > 1 && svi_forked()) n = 1;
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
  svi_need_real(x, -1, "x");
  R_xlen_t n = XLENGTH(x);
  int w = svi_int_arg(which, 0, 5, "which");
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

/* The n largest entries of each row of the K x V matrix M (svi_top_rows()),
 * each divided by its row's entry of rdiv and then by its column's entry
 * of div (each skipped when NULL): an n x K integer matrix of 1-based
 * columns, each column of it row k's, in decreasing order (lower column
 * first among equal values). */
SEXP ffi_svi_top_rows(SEXP M, SEXP n_, SEXP div, SEXP rdiv) {
  svi_need_matrix(M, REALSXP, -1, -1, "M");
  int K = Rf_nrows(M), V = Rf_ncols(M), n = svi_int_arg(n_, 1, V, "n");
  if (div != R_NilValue) svi_need_real(div, V, "div");
  if (rdiv != R_NilValue) svi_need_real(rdiv, K, "rdiv");
  SEXP out = PROTECT(Rf_allocMatrix(INTSXP, n, K));
  double *hv = (double *)R_alloc((size_t)K * (size_t)n, sizeof(double));
  int *idx = INTEGER(out);
  svi_top_rows(REAL(M), rdiv == R_NilValue ? NULL : REAL(rdiv),
               div == R_NilValue ? NULL : REAL(div), K, V, n, idx, hv);
  for (R_xlen_t i = 0; i < XLENGTH(out); i++) idx[i]++;
  UNPROTECT(1);
  return out;
}

/* Top-L of each column of the K x n matrix W. method 0: selection;
 * 1: full sort (the benchmark's baseline). Returns an L x n integer matrix of
 * 1-based indices, each column in decreasing order of weight. */
SEXP ffi_svi_select_top(SEXP W, SEXP L_, SEXP method) {
  svi_need_matrix(W, REALSXP, -1, -1, "W");
  int K = Rf_nrows(W), n = Rf_ncols(W), L = svi_int_arg(L_, 1, INT_MAX, "L"),
      m = svi_int_arg(method, 0, 1, "method");
  if (L > K) Rf_error("internal error: L out of range");
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
    if (m == 0) svi_sort_top(wj, idx, L);
    for (int l = 0; l < L; l++) po[(R_xlen_t)j * L + l] = idx[l] + 1;
  }
  UNPROTECT(1);
  return out;
}

/* n uniforms from stream `stream` of seed `seed`. */
SEXP ffi_svi_rng_unif(SEXP seed, SEXP stream, SEXP n_) {
  svi_rng r;
  svi_rng_init(&r, svi_seed_from_r(seed), svi_stream_from_r(stream));
  /* callers ask for one uniform per document or point; the cap (2^28, 2 GB)
   * keeps a hostile direct call from filling all memory for minutes */
  R_xlen_t n = (R_xlen_t)svi_real_arg(n_, 0, 268435456.0, "n");
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  for (R_xlen_t i = 0; i < n; i++) REAL(out)[i] = svi_rng_unif(&r);
  UNPROTECT(1);
  return out;
}

/* c(OpenMP built in (0/1), this process a child of fork() (0/1)), as R
 * integers: sparsevi_threads() (R/threads.R) reads it. */
SEXP ffi_svi_threads_info(void) {
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 2));
#ifdef _OPENMP
  INTEGER(out)[0] = 1;
#else
  INTEGER(out)[0] = 0;
#endif
  INTEGER(out)[1] = svi_forked();
  UNPROTECT(1);
  return out;
}

void svi_set_sparse_by_word(SEXP out, int slot, int K, int V, const int *words, int Vb,
                            svi_column_fn col, void *ctx) {
  /* two passes over the columns: the non-zeros counted, then written */
  R_xlen_t nz = 0;
  for (int w = 0; w < Vb; w++) {
    const double *a = col(ctx, w);
    for (int k = 0; k < K; k++) nz += a[k] != 0;
  }
  if (nz > INT_MAX) Rf_error("the batch summary has more than 2^31 entries; use smaller batches");
  SEXP sp = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)V + 1));
  SEXP si = PROTECT(Rf_allocVector(INTSXP, nz));
  SEXP sx = PROTECT(Rf_allocVector(REALSXP, nz));
  int *p = INTEGER(sp), *ii = INTEGER(si);
  double *xx = REAL(sx);
  int pos = 0, w = 0;
  p[0] = 0;
  for (int v = 0; v < V; v++) {
    if (w < Vb && words[w] == v) {
      const double *a = col(ctx, w);
      for (int k = 0; k < K; k++)
        if (a[k] != 0) {
          ii[pos] = k;
          xx[pos++] = a[k];
        }
      w++;
    }
    p[v + 1] = pos;
  }
  SET_VECTOR_ELT(out, slot, sp);
  SET_VECTOR_ELT(out, slot + 1, si);
  SET_VECTOR_ELT(out, slot + 2, sx);
  UNPROTECT(3);
}

typedef struct {
  const double *acc;
  int K;
} dense_columns;

static const double *dense_column(void *ctx, int w) {
  const dense_columns *c = (const dense_columns *)ctx;
  return c->acc + (svi_len)w * c->K;
}

void svi_set_sparse_columns(SEXP out, int slot, const double *acc, int K, int V,
                            const int *words, int Vb) {
  dense_columns c = {acc, K};
  svi_set_sparse_by_word(out, slot, K, V, words, Vb, dense_column, &c);
}
