/* Topics sharded by word over persistent workers (R/executor-sharded.R):
 * worker r (0-based) of W owns the columns of the words v with
 * v mod W = r, its column j being word r + j W. Taking a shard out of the
 * whole table is lda_table_columns(); putting it back, at the end of a lap,
 * is here. The owners' stochastic step is store_update_owner()
 * (src/lda-store.c). */
#include <string.h>
#include "ffi.h"

/* X[, r + j W] <- shard[, j] for every column j of the shard, IN PLACE
 * (X must be the package's own: the lap's copy of the store). Returns
 * NULL. */
SEXP ffi_lda_shard_put(SEXP X, SEXP shard, SEXP W_, SEXP r_) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_matrix(shard, REALSXP, -1, -1, "shard");
  svi_need_own(X, "the topic table");
  const int K = Rf_nrows(X), V = Rf_ncols(X), n = Rf_ncols(shard);
  const int W = Rf_asInteger(W_), r = Rf_asInteger(r_);
  if (W < 1 || r < 0 || r >= W || Rf_nrows(shard) != K)
    Rf_error("internal error: malformed topic shard");
  /* the shard holds exactly the words r, r + W, ... below V */
  if (n != (r < V ? (V - 1 - r) / W + 1 : 0))
    Rf_error("internal error: the topic shard has the wrong number of columns");
  double *x = REAL(X);
  const double *s = REAL(shard);
  for (int j = 0; j < n; j++)
    memcpy(x + ((R_xlen_t)r + (R_xlen_t)j * W) * K, s + (R_xlen_t)j * K,
           sizeof(double) * (size_t)K);
  return R_NilValue;
}

/* A batch summary over the whole vocabulary cut by owner: W parts, owner
 * r's holding its words (v mod W = r, as its own 0-based columns v / W)
 * with their values, in word order. S is dense, list(words, x) with (at
 * least) K values per word, or sparse, list(words, p, k, v): the R
 * reference is shard_split_summary_r() (R/executor-sharded.R). Returns a
 * list of W lists of the same form. */
SEXP ffi_lda_shard_split(SEXP S, SEXP K_, SEXP W_) {
  svi_need_list(S, -1, "S");
  const int K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K");
  const int W = svi_int_arg(W_, 1, 1 << 16, "W");
  const SEXP words_ = svi_opt(S, "words");
  svi_need_int(words_, -1, "words");
  const int U = (int)XLENGTH(words_);
  const int *words = INTEGER(words_);
  for (int u = 0; u < U; u++)
    if (words[u] < 0 || (u > 0 && words[u] <= words[u - 1]))
      Rf_error("internal error: a summary's words must be increasing and not negative");
  /* sparse: a p that is not NULL (as the R side tells the forms apart) */
  int sparse = 0;
  SEXP nms = Rf_getAttrib(S, R_NamesSymbol);
  for (R_xlen_t i = 0; TYPEOF(nms) == STRSXP && i < XLENGTH(S); i++)
    if (strcmp(CHAR(STRING_ELT(nms, i)), "p") == 0) sparse = VECTOR_ELT(S, i) != R_NilValue;
  const int *p = NULL, *k = NULL;
  const double *x = NULL, *v = NULL;
  if (sparse) {
    const SEXP p_ = svi_opt(S, "p"), k_ = svi_opt(S, "k"), v_ = svi_opt(S, "v");
    svi_need_int(p_, (R_xlen_t)U + 1, "p");
    svi_need_int(k_, -1, "k");
    svi_need_real(v_, XLENGTH(k_), "v");
    p = INTEGER(p_);
    k = INTEGER(k_);
    v = REAL(v_);
    if (p[0] != 0 || p[U] != XLENGTH(k_))
      Rf_error("internal error: malformed sparse batch summary");
    for (int u = 0; u < U; u++)
      if (p[u + 1] < p[u]) Rf_error("internal error: malformed sparse batch summary");
  } else {
    const SEXP x_ = svi_opt(S, "x");
    svi_need_real(x_, -1, "x");
    if (XLENGTH(x_) < (R_xlen_t)K * U)
      Rf_error("internal error: a dense summary needs K values for each of its words");
    x = REAL(x_);
  }
  /* each owner's number of words (and of sparse entries) */
  int *nw = (int *)R_alloc((size_t)W, sizeof(int));
  R_xlen_t *ne = (R_xlen_t *)R_alloc((size_t)W, sizeof(R_xlen_t));
  memset(nw, 0, sizeof(int) * (size_t)W);
  memset(ne, 0, sizeof(R_xlen_t) * (size_t)W);
  for (int u = 0; u < U; u++) {
    const int r = words[u] % W;
    nw[r]++;
    if (sparse) ne[r] += p[u + 1] - p[u];
  }
  static const char *dense_names[] = {"words", "x"};
  static const char *sparse_names[] = {"words", "p", "k", "v"};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, W));
  for (int r = 0; r < W; r++) {
    SEXP part = sparse ? svi_named_list(4, sparse_names) : svi_named_list(2, dense_names);
    SET_VECTOR_ELT(out, r, part); /* (protected by out from here) */
    SET_VECTOR_ELT(part, 0, Rf_allocVector(INTSXP, nw[r]));
    if (sparse) {
      SET_VECTOR_ELT(part, 1, Rf_allocVector(INTSXP, (R_xlen_t)nw[r] + 1));
      SET_VECTOR_ELT(part, 2, Rf_allocVector(INTSXP, ne[r]));
      SET_VECTOR_ELT(part, 3, Rf_allocVector(REALSXP, ne[r]));
      INTEGER(VECTOR_ELT(part, 1))[0] = 0;
    } else {
      SET_VECTOR_ELT(part, 1, Rf_allocVector(REALSXP, (R_xlen_t)K * nw[r]));
    }
    nw[r] = 0; /* (now each part's words filled so far) */
    ne[r] = 0;
  }
  for (int u = 0; u < U; u++) {
    const int r = words[u] % W, j = nw[r]++;
    SEXP part = VECTOR_ELT(out, r);
    INTEGER(VECTOR_ELT(part, 0))[j] = words[u] / W;
    if (sparse) {
      const int n = p[u + 1] - p[u];
      memcpy(INTEGER(VECTOR_ELT(part, 2)) + ne[r], k + p[u], sizeof(int) * (size_t)n);
      memcpy(REAL(VECTOR_ELT(part, 3)) + ne[r], v + p[u], sizeof(double) * (size_t)n);
      ne[r] += n;
      INTEGER(VECTOR_ELT(part, 1))[j + 1] = (int)ne[r];
    } else {
      memcpy(REAL(VECTOR_ELT(part, 1)) + (R_xlen_t)j * K, x + (R_xlen_t)u * K,
             sizeof(double) * (size_t)K);
    }
  }
  UNPROTECT(1);
  return out;
}
