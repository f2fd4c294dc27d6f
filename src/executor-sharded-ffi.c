/* Topics sharded by word over persistent workers (R/executor-sharded.R):
 * worker r (0-based) of W owns the columns of the words v with
 * v mod W = r, its column j being word r + j W. Taking a shard out of the
 * whole table (ffi_lda_columns_take()) and putting it back, at the start and
 * end of a lap (ffi_lda_shard_put()), are here, as is the cut of a summary
 * by owner. The owners' stochastic step is store_update_owner()
 * (src/lda-store.c). */
#include <limits.h>
#include <string.h>
#include "ffi.h"

/* Whether a double is +0 (all bits zero): the one value a taken shard
 * leaves out. -0, NaN and every other value are kept as they are, so
 * putting a shard back restores the table bit for bit. */
static int plain_zero(double x) {
  double z = 0;
  return memcmp(&x, &z, sizeof(double)) == 0;
}

/* Columns cols (1-based) of the K x V table X, in the smaller of two
 * exact forms: the K x n matrix itself, or, when at most 2/3 of its
 * entries are other than +0 (12 bytes an entry against 8), its entries
 * other than +0 column by column, list(K, n, p, i, x): column j's rows
 * i[p[j] .. p[j + 1]) (0-based, increasing) with their values x. A new
 * fit's seeded start is all +0 but its K seed documents' counts, a lap's
 * end leaves +0 in every column no batch has touched, and the topics of a
 * fit whose summaries keep L topics per entry (sparse_rest "renormalise"
 * or "sample") are mostly +0. The R reference is shard_take_r()
 * (R/executor-sharded.R). */
SEXP ffi_lda_columns_take(SEXP X, SEXP cols_) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_int(cols_, -1, "cols");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  const R_xlen_t nl = XLENGTH(cols_);
  if (nl > INT_MAX) Rf_error("internal error: too many columns");
  const int n = (int)nl, *cols = INTEGER(cols_);
  for (int j = 0; j < n; j++)
    if (cols[j] < 1 || cols[j] > V) Rf_error("internal error: a column outside the table");
  const double *x = REAL(X);
  /* (the count stops once the matrix is known to be smaller: the default
   * call's dense columns are read once more for 2/3 of their entries, not
   * all of them, on every round's messages) */
  const double whole = (double)K * (double)n * 2.0;
  R_xlen_t nnz = 0;
  for (int j = 0; j < n && (double)nnz * 3.0 <= whole; j++) {
    const double *c = x + (R_xlen_t)(cols[j] - 1) * K;
    for (int k = 0; k < K; k++) nnz += !plain_zero(c[k]);
  }
  if ((double)nnz * 3.0 > whole) {
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, n));
    double *o = REAL(out);
    for (int j = 0; j < n; j++)
      memcpy(o + (R_xlen_t)j * K, x + (R_xlen_t)(cols[j] - 1) * K, sizeof(double) * (size_t)K);
    UNPROTECT(1);
    return out;
  }
  static const char *names[] = {"K", "n", "p", "i", "x"};
  SEXP out = PROTECT(svi_named_list(5, names));
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(K));
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(n));
  SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, (R_xlen_t)n + 1));
  SET_VECTOR_ELT(out, 3, Rf_allocVector(INTSXP, nnz));
  SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, nnz));
  double *p = REAL(VECTOR_ELT(out, 2)), *v = REAL(VECTOR_ELT(out, 4));
  int *i = INTEGER(VECTOR_ELT(out, 3));
  R_xlen_t e = 0;
  p[0] = 0;
  for (int j = 0; j < n; j++) {
    const double *c = x + (R_xlen_t)(cols[j] - 1) * K;
    for (int k = 0; k < K; k++)
      if (!plain_zero(c[k])) {
        i[e] = k;
        v[e++] = c[k];
      }
    p[j + 1] = (double)e;
  }
  UNPROTECT(1);
  return out;
}

/* Checks a taken shard's list form (ffi_lda_columns_take()) for K rows and n
 * columns: pointers from 0, increasing, ending at the entries' count, rows
 * in range and increasing within a column. */
static void check_taken(SEXP s, int K, int n) {
  const SEXP p_ = svi_opt(s, "p"), i_ = svi_opt(s, "i"), x_ = svi_opt(s, "x");
  svi_need_real(p_, (R_xlen_t)n + 1, "p");
  svi_need_int(i_, -1, "i");
  svi_need_real(x_, XLENGTH(i_), "x");
  if (Rf_asInteger(svi_opt(s, "K")) != K || Rf_asInteger(svi_opt(s, "n")) != n)
    Rf_error("internal error: the topic shard has the wrong shape");
  const double *p = REAL(p_);
  const int *i = INTEGER(i_);
  if (p[0] != 0 || p[n] != (double)XLENGTH(i_))
    Rf_error("internal error: malformed topic shard");
  for (int j = 0; j < n; j++) {
    if (!(p[j + 1] >= p[j])) Rf_error("internal error: malformed topic shard");
    for (R_xlen_t e = (R_xlen_t)p[j]; e < (R_xlen_t)p[j + 1]; e++)
      if (i[e] < 0 || i[e] >= K || (e > (R_xlen_t)p[j] && i[e] <= i[e - 1]))
        Rf_error("internal error: malformed topic shard");
  }
}

/* Column j of a taken shard (either form) into out[0 .. K). */
static void taken_column(SEXP s, int K, int j, double *out) {
  if (Rf_isMatrix(s)) {
    memcpy(out, REAL(s) + (R_xlen_t)j * K, sizeof(double) * (size_t)K);
    return;
  }
  const double *p = REAL(svi_opt(s, "p")), *x = REAL(svi_opt(s, "x"));
  const int *i = INTEGER(svi_opt(s, "i"));
  memset(out, 0, sizeof(double) * (size_t)K);
  for (R_xlen_t e = (R_xlen_t)p[j]; e < (R_xlen_t)p[j + 1]; e++) out[i[e]] = x[e];
}

/* The number of columns of a taken shard of K rows, checked. */
static int taken_columns(SEXP s, int K) {
  if (Rf_isMatrix(s)) {
    svi_need_matrix(s, REALSXP, K, -1, "shard");
    return Rf_ncols(s);
  }
  svi_need_list(s, -1, "shard");
  const int n = Rf_asInteger(svi_opt(s, "n"));
  if (n < 0 || n == NA_INTEGER) Rf_error("internal error: malformed topic shard");
  check_taken(s, K, n);
  return n;
}

/* A taken shard as its K x n matrix (a worker's own columns at a lap's
 * start): the matrix itself when it came whole. */
SEXP ffi_lda_shard_columns(SEXP s) {
  if (Rf_isMatrix(s)) {
    svi_need_matrix(s, REALSXP, -1, -1, "shard");
    return s;
  }
  svi_need_list(s, -1, "shard");
  const int K = Rf_asInteger(svi_opt(s, "K"));
  if (K < 1 || K == NA_INTEGER) Rf_error("internal error: malformed topic shard");
  const int n = taken_columns(s, K);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, n));
  for (int j = 0; j < n; j++) taken_column(s, K, j, REAL(out) + (R_xlen_t)j * K);
  UNPROTECT(1);
  return out;
}

/* X[, r + j W] <- shard[, j] for every column j of the shard (a taken
 * shard, either form: ffi_lda_columns_take()), IN PLACE (X must be the
 * package's own: the lap's copy of the store). Returns NULL. */
SEXP ffi_lda_shard_put(SEXP X, SEXP shard, SEXP W_, SEXP r_) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_own(X, "the topic table");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  const int W = svi_int_arg(W_, 1, 1 << 16, "W");
  const int r = svi_int_arg(r_, 0, W - 1, "r");
  const int n = taken_columns(shard, K);
  /* the shard holds exactly the words r, r + W, ... below V */
  if (n != (r < V ? (V - 1 - r) / W + 1 : 0))
    Rf_error("internal error: the topic shard has the wrong number of columns");
  double *x = REAL(X);
  for (int j = 0; j < n; j++) taken_column(shard, K, j, x + ((R_xlen_t)r + (R_xlen_t)j * W) * K);
  return R_NilValue;
}

/* The K x n columns a runner's local steps read (R/executor-sharded.R,
 * shard_worker_round()): column own_at[j] (1-based) is column own_cols[j]
 * of this worker's own table X, and column at[[o]][j] is column j of the
 * taken shard parts[[o]] (either form: ffi_lda_columns_take()) that owner
 * o sent. Every column is written once, with no zeroing pass and no R
 * temporaries; each of 1 .. n must be given exactly once. The R reference
 * is shard_gather_r(). */
SEXP ffi_lda_shard_gather(SEXP n_, SEXP X, SEXP own_cols_, SEXP own_at_, SEXP parts,
                          SEXP at_) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_int(own_cols_, -1, "own_cols");
  svi_need_int(own_at_, XLENGTH(own_cols_), "own_at");
  svi_need_list(parts, -1, "parts");
  svi_need_list(at_, XLENGTH(parts), "at");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  const int n = svi_int_arg(n_, 0, INT_MAX, "n");
  const int *own_cols = INTEGER(own_cols_), *own_at = INTEGER(own_at_);
  const int no = (int)XLENGTH(own_cols_), np = (int)XLENGTH(parts);
  /* (first the count: n places for exactly n columns given) */
  R_xlen_t given = no;
  for (int o = 0; o < np; o++) {
    svi_need_int(VECTOR_ELT(at_, o), -1, "at");
    given += XLENGTH(VECTOR_ELT(at_, o));
  }
  if (given != n)
    Rf_error("internal error: the gathered columns' places are not 1 .. n once each");
  char *seen = (char *)R_alloc((size_t)n + 1, 1);
  memset(seen, 0, (size_t)n + 1);
  /* every position once, every source column inside its source */
  for (int j = 0; j < no; j++) {
    if (own_cols[j] < 1 || own_cols[j] > V) Rf_error("internal error: a column outside the table");
    if (own_at[j] < 1 || own_at[j] > n || seen[own_at[j]]++)
      Rf_error("internal error: the gathered columns' places are not 1 .. n once each");
  }
  for (int o = 0; o < np; o++) {
    SEXP at = VECTOR_ELT(at_, o);
    if (taken_columns(VECTOR_ELT(parts, o), K) != XLENGTH(at))
      Rf_error("internal error: a topic shard has the wrong number of columns");
    const int *a = INTEGER(at);
    for (R_xlen_t j = 0; j < XLENGTH(at); j++)
      if (a[j] < 1 || a[j] > n || seen[a[j]]++)
        Rf_error("internal error: the gathered columns' places are not 1 .. n once each");
  }
  for (int u = 1; u <= n; u++)
    if (!seen[u]) Rf_error("internal error: the gathered columns' places are not 1 .. n once each");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, K, n));
  double *o_ = REAL(out);
  const double *x = REAL(X);
  for (int j = 0; j < no; j++)
    memcpy(o_ + (R_xlen_t)(own_at[j] - 1) * K, x + (R_xlen_t)(own_cols[j] - 1) * K,
           sizeof(double) * (size_t)K);
  for (int o = 0; o < np; o++) {
    SEXP part = VECTOR_ELT(parts, o);
    const int *a = INTEGER(VECTOR_ELT(at_, o));
    const int m = (int)XLENGTH(VECTOR_ELT(at_, o));
    for (int j = 0; j < m; j++) taken_column(part, K, j, o_ + (R_xlen_t)(a[j] - 1) * K);
  }
  UNPROTECT(1);
  return out;
}

/* meta[] <- value, IN PLACE (the lap's store's meta at the lap's end:
 * scale, step count and row sums as the workers' rounds left them).
 * Returns NULL. */
SEXP ffi_lda_shard_meta(SEXP meta, SEXP value) {
  svi_need_real(meta, -1, "meta");
  svi_need_real(value, XLENGTH(meta), "value");
  svi_need_own(meta, "the store's meta");
  memcpy(REAL(meta), REAL(value), sizeof(double) * (size_t)XLENGTH(meta));
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
