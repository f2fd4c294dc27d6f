/* The training documents' kept proportions (R/lda-methods.R): each
 * document's top L topics, renormalised, and the D x K sparse matrix they
 * make. One C pass each instead of R's select / index / rowsum / unlist /
 * sparseMatrix chain: in a one-pass default fit over 60,000 Wikipedia
 * paragraphs that chain left 46 MB of garbage in the lap and 20 MB after
 * training. R forms: lda_top_share_r(), lda_kept_csc_r(). */
#include <limits.h>
#include "ffi.h"
#include "svi.h"

/* The result list(j, x) of the two forms below, L entries for each of n
 * documents; *pj and *px point at its vectors. Protected once (the caller
 * unprotects one). */
static SEXP top_share_out(int L, int n, int **pj, double **px) {
  const char *names[] = {"j", "x"};
  SEXP out = PROTECT(svi_named_list(2, names));
  SET_VECTOR_ELT(out, 0, Rf_allocVector(INTSXP, (R_xlen_t)L * n));
  SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, (R_xlen_t)L * n));
  *pj = INTEGER(VECTOR_ELT(out, 0));
  *px = REAL(VECTOR_ELT(out, 1));
  return out;
}

/* One document's part: the L largest of wa[0 .. m) (idx: m ints of
 * scratch) in canonical order, their topics (cand[i], or i when cand is
 * NULL; 1-based in pj) and their values over their sum. */
static void top_share_column(double *wa, int m, int L, const int *cand, int *idx, int *pj,
                             double *px) {
  svi_top_sorted(wa, m, L, idx); /* the L largest in canonical order */
  double s = 0;
  for (int l = 0; l < L; l++) s += wa[idx[l]];
  for (int l = 0; l < L; l++) {
    pj[l] = (cand ? cand[idx[l]] : idx[l]) + 1;
    px[l] = wa[idx[l]] / s;
  }
}

/* W a K x n matrix (a column per document), alpha added to each entry
 * (0 for proportions already smoothed). Returns list(j, x): for document t
 * entries t L .. t L + L - 1, its L largest (w + alpha) in decreasing
 * order, j their 1-based topics and x their values over their sum. */
SEXP ffi_lda_top_share(SEXP W, SEXP L_, SEXP alpha_) {
  svi_need_matrix(W, REALSXP, -1, -1, "W");
  const int K = Rf_nrows(W), n = Rf_ncols(W);
  const int L = svi_int_arg(L_, 1, INT_MAX, "L");
  const double alpha = svi_real_arg(alpha_, 0, 1e300, "alpha");
  if (L > K) Rf_error("internal error: L out of range");
  double *wa = (double *)R_alloc(K > 0 ? K : 1, sizeof(double));
  int *idx = (int *)R_alloc(K > 0 ? K : 1, sizeof(int));
  int *pj;
  double *px;
  SEXP out = top_share_out(L, n, &pj, &px);
  const double *w = REAL(W);
  for (int t = 0; t < n; t++) {
    const double *wt = w + (R_xlen_t)t * K;
    for (int k = 0; k < K; k++) wa[k] = wt[k] + alpha;
    top_share_column(wa, K, L, NULL, idx, pj + (R_xlen_t)t * L, px + (R_xlen_t)t * L);
  }
  UNPROTECT(1);
  return out;
}

/* ffi_lda_top_share() of a sparse K x n matrix given by its CSC slots (p,
 * 0-based k increasing within a column, x), without the dense columns: a
 * column's top L under the total order of svi_select_top() (larger value
 * first, then lower topic) lie among its non-zeros and its L lowest topics
 * without an entry (value alpha), so only those are ranked, in topic order.
 * The same output as on the dense matrix, bit for bit. */
SEXP ffi_lda_top_share_csc(SEXP p_, SEXP k_, SEXP x_, SEXP K_, SEXP L_, SEXP alpha_) {
  const int K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K");
  const int L = svi_int_arg(L_, 1, K, "L");
  const double alpha = svi_real_arg(alpha_, 0, 1e300, "alpha");
  if (TYPEOF(p_) != INTSXP || TYPEOF(k_) != INTSXP || TYPEOF(x_) != REALSXP ||
      XLENGTH(p_) < 1 || XLENGTH(k_) != XLENGTH(x_))
    Rf_error("internal error: malformed sparse columns");
  const int n = (int)XLENGTH(p_) - 1;
  const int *p = INTEGER(p_), *kk = INTEGER(k_);
  const double *xx = REAL(x_);
  if (p[0] != 0 || p[n] != XLENGTH(k_)) Rf_error("internal error: malformed sparse columns");
  for (int t = 0; t < n; t++) {
    if (p[t + 1] < p[t] || p[t + 1] - p[t] > K) Rf_error("internal error: malformed sparse columns");
    for (int j = p[t]; j < p[t + 1]; j++)
      if (kk[j] < 0 || kk[j] >= K || (j > p[t] && kk[j] <= kk[j - 1]))
        Rf_error("internal error: malformed sparse columns");
  }
  const int room = K; /* at most K candidates a column */
  double *wa = (double *)R_alloc(room, sizeof(double));
  int *cand = (int *)R_alloc(room, sizeof(int)), *idx = (int *)R_alloc(room, sizeof(int));
  int *pj;
  double *px;
  SEXP out = top_share_out(L, n, &pj, &px);
  for (int t = 0; t < n; t++) {
    /* merge the column's entries with its lowest L empty topics, in topic
     * order, so that position order is topic order for the ties */
    /* (walking the entries, not the topics: O(entries + L) a column) */
    int m = 0, zeros = 0, k = 0;
    for (int j = p[t];; j++) {
      int next = j < p[t + 1] ? kk[j] : K;
      for (; k < next && zeros < L; k++, zeros++) {
        cand[m] = k;
        wa[m++] = 0.0 + alpha;
      }
      if (j == p[t + 1]) break;
      cand[m] = next;
      wa[m++] = xx[j] + alpha;
      k = next + 1;
    }
    /* (m >= L: the entries and the empty topics up to L make at least L) */
    top_share_column(wa, m, L, cand, idx, pj + (R_xlen_t)t * L, px + (R_xlen_t)t * L);
  }
  UNPROTECT(1);
  return out;
}

/* The D x K column-compressed matrix of kept proportions: parts[[b]] a
 * list(j, x) from ffi_lda_top_share() for the documents rows[[b]] (1-based
 * rows of the matrix, L entries each, every row in exactly one part).
 * Returns list(p, i, x), the slots of the dgCMatrix, rows increasing
 * within each column. */
SEXP ffi_lda_kept_csc(SEXP parts, SEXP rows, SEXP D_, SEXP K_, SEXP L_) {
  const int D = svi_int_arg(D_, 0, INT_MAX, "D"), K = svi_int_arg(K_, 1, SVI_MAX_TOPICS, "K"),
            L = svi_int_arg(L_, 1, K, "L");
  if (TYPEOF(parts) != VECSXP || TYPEOF(rows) != VECSXP || XLENGTH(parts) != XLENGTH(rows))
    Rf_error("internal error: malformed kept parts");
  const R_xlen_t nb = XLENGTH(parts), len = (R_xlen_t)D * L;
  if (len > INT_MAX) Rf_error("internal error: too many kept proportions");
  /* the rows cover D documents, and each part holds L entries a row: checked
   * before anything is allocated, so that D and L are those of the input */
  R_xlen_t n_rows = 0;
  for (R_xlen_t b = 0; b < nb; b++) {
    SEXP pb = VECTOR_ELT(parts, b), rb = VECTOR_ELT(rows, b);
    if (TYPEOF(rb) != INTSXP || TYPEOF(pb) != VECSXP || XLENGTH(pb) < 2)
      Rf_error("internal error: malformed kept part");
    SEXP jb = VECTOR_ELT(pb, 0), xb = VECTOR_ELT(pb, 1);
    const R_xlen_t n = XLENGTH(rb);
    if (TYPEOF(jb) != INTSXP || TYPEOF(xb) != REALSXP || XLENGTH(jb) != n * L ||
        XLENGTH(xb) != n * L)
      Rf_error("internal error: malformed kept part");
    n_rows += n;
  }
  if (n_rows != D) Rf_error("internal error: kept rows do not cover the documents once");
  int *J = (int *)R_alloc(len > 0 ? len : 1, sizeof(int));
  double *X = (double *)R_alloc(len > 0 ? len : 1, sizeof(double));
  unsigned char *seen = (unsigned char *)R_alloc(D > 0 ? D : 1, 1);
  for (int d = 0; d < D; d++) seen[d] = 0;
  /* each document's L entries at d L, in row order */
  for (R_xlen_t b = 0; b < nb; b++) {
    SEXP pb = VECTOR_ELT(parts, b), rb = VECTOR_ELT(rows, b);
    SEXP jb = VECTOR_ELT(pb, 0), xb = VECTOR_ELT(pb, 1);
    const R_xlen_t n = XLENGTH(rb);
    const int *r = INTEGER(rb), *j = INTEGER(jb);
    const double *x = REAL(xb);
    for (R_xlen_t t = 0; t < n; t++) {
      const int d = r[t] - 1;
      if (d < 0 || d >= D || seen[d]) Rf_error("internal error: kept rows do not cover the documents once");
      seen[d] = 1;
      for (int l = 0; l < L; l++) {
        const int k = j[t * L + l];
        if (k < 1 || k > K) Rf_error("internal error: kept topic out of range");
        J[(R_xlen_t)d * L + l] = k - 1;
        X[(R_xlen_t)d * L + l] = x[t * L + l];
      }
    }
  }
  for (int d = 0; d < D; d++) {
    if (!seen[d]) Rf_error("internal error: kept rows do not cover the documents once");
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  SEXP p = SET_VECTOR_ELT(out, 0, Rf_allocVector(INTSXP, (R_xlen_t)K + 1));
  SEXP ii = SET_VECTOR_ELT(out, 1, Rf_allocVector(INTSXP, len));
  SEXP xx = SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, len));
  SEXP nm = PROTECT(Rf_allocVector(STRSXP, 3));
  SET_STRING_ELT(nm, 0, Rf_mkChar("p"));
  SET_STRING_ELT(nm, 1, Rf_mkChar("i"));
  SET_STRING_ELT(nm, 2, Rf_mkChar("x"));
  Rf_setAttrib(out, R_NamesSymbol, nm);
  int *pp = INTEGER(p), *pi = INTEGER(ii);
  double *px = REAL(xx);
  for (int k = 0; k <= K; k++) pp[k] = 0;
  for (R_xlen_t e = 0; e < len; e++) pp[J[e] + 1]++;
  for (int k = 0; k < K; k++) pp[k + 1] += pp[k];
  int *next = (int *)R_alloc(K, sizeof(int));
  for (int k = 0; k < K; k++) next[k] = pp[k];
  for (int d = 0; d < D; d++) {
    for (int l = 0; l < L; l++) {
      const R_xlen_t e = (R_xlen_t)d * L + l;
      const int at = next[J[e]]++;
      pi[at] = d;
      px[at] = X[e];
    }
  }
  UNPROTECT(2);
  return out;
}
