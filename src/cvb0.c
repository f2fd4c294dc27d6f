/* Glue of the SCVB0 engine: unpacks SEXPs, allocates outputs and scratch,
 * calls the kernels of lda-cvb0.c. R (R/lda-cvb0.R) has validated
 * everything. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "glue.h"
#include "lda-cvb0.h"

/* Bound (in doubles) of the per-entry buffer used to reduce the summary in
 * document order: 4M doubles (32 MB) or one document's worth, whichever is
 * larger. */

static int cmp_int(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static cvb0_settings settings_from_r(SEXP settings, int K) {
  if (TYPEOF(settings) != REALSXP || (XLENGTH(settings) != 6 && XLENGTH(settings) != 7))
    Rf_error("internal error: SCVB0 settings must be 6 or 7 doubles");
  const double *s = REAL(settings);
  cvb0_settings cs;
  cs.K = K;
  cs.alpha = s[0];
  cs.doc_s = s[1];
  cs.doc_tau = s[2];
  cs.doc_kappa = s[3];
  if (!(s[4] >= 1 && s[4] <= 1e4) || !(s[0] > 0) || !isfinite(s[0]) || !(s[1] >= 0) ||
      !(s[2] >= 0) || !isfinite(s[1]) || !isfinite(s[2]) || !isfinite(s[3]))
    Rf_error("internal error: SCVB0 settings out of range");
  cs.passes = (int)s[4];
  cs.shuffle = s[5] != 0.0;
  /* optional 7th: the kernel's vector width (0 = widest available) */
  cs.kernel = XLENGTH(settings) == 7 ? (int)s[6] : 0;
  if (cs.kernel != 0 && cs.kernel != 2 && cs.kernel != 4 && cs.kernel != 8)
    Rf_error("internal error: SCVB0 kernel width must be 0, 2, 4 or 8");
  return cs;
}

/* tot_k = sum_v lambda_kv, or the given K-vector. */
static double *inv_totals(SEXP lambda, SEXP tot, int K, int V) {
  double *inv = (double *)R_alloc(K, sizeof(double));
  if (!Rf_isNull(tot)) {
    if (TYPEOF(tot) != REALSXP || XLENGTH(tot) != K)
      Rf_error("internal error: topic totals must be K doubles");
    for (int k = 0; k < K; k++) inv[k] = REAL(tot)[k];
  } else {
    const double *lam = REAL(lambda);
    for (int k = 0; k < K; k++) inv[k] = 0.0;
    for (int v = 0; v < V; v++)
      for (int k = 0; k < K; k++) inv[k] += lam[(R_xlen_t)v * K + k];
  }
  for (int k = 0; k < K; k++) {
    if (!(inv[k] > 0.0)) Rf_error("internal error: a topic total is not positive");
    inv[k] = 1.0 / inv[k];
  }
  return inv;
}

/* Local step (want_summary TRUE) or fold-in (FALSE) of SCVB0. lambda is
 * either the K x V topic parameters or, with affine = c(shift, scale), the
 * store X of the lazy global step (lambda = shift + scale X); tot (or NULL)
 * the row sums of lambda; scratch (or NULL) a double vector this call may
 * overwrite.
 * Returns list(theta = K x D NTheta, words = 0-based distinct words of the
 * batch (increasing), and the slots x, i, p of the K x V dgCMatrix summary:
 * the sum of m gamma over the last pass, K entries per word of the batch). */
SEXP ffi_lda_local_cvb0(SEXP doc_ptr, SEXP term, SEXP count, SEXP V_, SEXP lambda,
                        SEXP tot, SEXP settings, SEXP seed, SEXP stream_base,
                        SEXP threads_, SEXP want_summary, SEXP affine, SEXP scratch) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_view(doc_ptr, term, count, V_);
  svi_need_matrix(lambda, REALSXP, -1, x.V, "lambda");
  const int K = Rf_nrows(lambda), V = x.V;
  if (K < 1) Rf_error("internal error: lambda has no topics");
  cvb0_settings cs = settings_from_r(settings, K);
  const uint64_t sd = svi_seed_from_r(seed);
  const uint64_t sb = svi_stream_from_r(stream_base);
  const int want = svi_flag_arg(want_summary, "want_summary");
  /* training (a summary) runs on one thread: see cvb0_local() */
  const int threads = want ? 1 : svi_threads_from_r(threads_);
  double shift = 0.0, scale = 1.0;
  if (!Rf_isNull(affine)) {
    if (TYPEOF(affine) != REALSXP || XLENGTH(affine) != 2 || !isfinite(REAL(affine)[0]) ||
        !isfinite(REAL(affine)[1]) || Rf_isNull(tot))
      Rf_error("internal error: SCVB0 affine store needs c(shift, scale) and totals");
    shift = REAL(affine)[0];
    scale = REAL(affine)[1];
  }
  double *inv_tot = inv_totals(lambda, tot, K, V);

  /* distinct words of the batch (increasing: wlist) and the column of each
   * entry's word (ecol): through a V-long table unless the vocabulary is
   * very much larger than the batch, then by sorting the batch's terms (on
   * wikipara's 129k words and 100-document minibatches, ~4,000 entries, the
   * table is the faster: sorting cost 0.1 M tokens/s) */
  const R_xlen_t nnz = XLENGTH(term);
  int U = 0;
  int *ecol = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  int *wlist;
  if ((double)V <= 256.0 * (double)nnz) {
    int *col_of = (int *)R_alloc(V, sizeof(int));
    for (int v = 0; v < V; v++) col_of[v] = -1;
    for (R_xlen_t e = 0; e < nnz; e++) col_of[x.term[e]] = 0;
    for (int v = 0; v < V; v++)
      if (col_of[v] == 0) col_of[v] = U++;
    wlist = (int *)R_alloc(U > 0 ? U : 1, sizeof(int));
    for (int v = 0, u = 0; v < V; v++)
      if (col_of[v] >= 0) wlist[u++] = v;
    for (R_xlen_t e = 0; e < nnz; e++) ecol[e] = col_of[x.term[e]];
  } else {
    wlist = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    if (nnz > 0) memcpy(wlist, x.term, sizeof(int) * (size_t)nnz);
    qsort(wlist, (size_t)nnz, sizeof(int), cmp_int);
    for (R_xlen_t e = 0; e < nnz; e++)
      if (U == 0 || wlist[e] != wlist[U - 1]) wlist[U++] = wlist[e];
    for (R_xlen_t e = 0; e < nnz; e++) {
      const int v = x.term[e];
      int lo = 0, hi = U - 1;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (wlist[mid] < v)
          lo = mid + 1;
        else
          hi = mid;
      }
      ecol[e] = lo;
    }
  }
  SEXP words = PROTECT(Rf_allocVector(INTSXP, want ? U : 0));
  n_prot++;
  if ((double)K * (double)x.D > (double)R_XLEN_T_MAX ||
      (double)K * (double)U > (double)R_XLEN_T_MAX)
    Rf_error("internal error: SCVB0 output too large");
  /* P = lambda / tot over the batch's words (topics are frozen within a
   * batch) */
  if (want) memcpy(INTEGER(words), wlist, sizeof(int) * (size_t)U);
  /* scratch: P, in the caller's reusable vector when it is long
   * enough (R/lda-cvb0.R keeps one per session: fresh R_alloc blocks of a
   * few MB per minibatch cost page faults and garbage collections), else
   * R_alloc */
  double *scr = NULL;
  svi_len scr_len = 0;
  if (!Rf_isNull(scratch)) {
    if (TYPEOF(scratch) != REALSXP) Rf_error("internal error: SCVB0 scratch must be doubles");
    scr = REAL(scratch);
    scr_len = XLENGTH(scratch);
  }
  const svi_len p_len = (svi_len)K * (U > 0 ? U : 1);
  const int p_in_scr = scr != NULL && scr_len >= p_len;
  double *P = p_in_scr ? scr : (double *)R_alloc(p_len, sizeof(double));
  cvb0_topic_columns(K, REAL(lambda), shift, scale, inv_tot, U, wlist, P);
  SEXP theta = PROTECT(Rf_allocMatrix(REALSXP, K, x.D));
  n_prot++;
  /* the summary as the slots of a K x V dgCMatrix: x (K per batch word), i, p */
  SEXP summary = PROTECT(Rf_allocVector(REALSXP, want ? (R_xlen_t)K * U : 0));
  n_prot++;
  SEXP s_i = PROTECT(Rf_allocVector(INTSXP, want ? (R_xlen_t)K * U : 0));
  n_prot++;
  SEXP s_p = PROTECT(Rf_allocVector(INTSXP, want ? (R_xlen_t)V + 1 : 0));
  n_prot++;
  if (want) {
    if ((double)K * (double)U > 2147483647.0)
      Rf_error("internal error: SCVB0 summary has more than 2^31 entries");
    int *pi = INTEGER(s_i), *pp = INTEGER(s_p);
    for (int u = 0; u < U; u++)
      for (int k = 0; k < K; k++) pi[(R_xlen_t)u * K + k] = k;
    pp[0] = 0;
    for (int v = 0, u = 0; v < V; v++) {
      if (u < U && wlist[u] == v) u++;
      pp[v + 1] = u * K;
    }
  }

  /* scratch */
  int mt = 1;
  for (int d = 0; d < x.D; d++) {
    int n = x.doc_ptr[d + 1] - x.doc_ptr[d];
    if (n > mt) mt = n;
  }
  double *tables = (double *)R_alloc(cvb0_scratch_size(&x, &cs), sizeof(double));
  double *g_all = (double *)R_alloc((size_t)threads * cvb0_thread_stride(K), sizeof(double));
  int *order_all = (int *)R_alloc((size_t)threads * cvb0_order_stride(mt), sizeof(int));
  cvb0_local(&x, P, ecol, U, &cs, sd, sb, threads, REAL(theta),
             want ? REAL(summary) : NULL, tables, g_all, order_all);

  const char *names[] = {"theta", "words", "x", "i", "p"};
  SEXP out = PROTECT(svi_named_list(5, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, theta);
  SET_VECTOR_ELT(out, 1, words);
  SET_VECTOR_ELT(out, 2, summary);
  SET_VECTOR_ELT(out, 3, s_i);
  SET_VECTOR_ELT(out, 4, s_p);
  UNPROTECT(n_prot);
  return out;
}

/* The summary's column pointers p (V + 1) and row indices i (K rows) must
 * describe a valid K x V dgCMatrix. */
static void check_summary_csc(SEXP p, SEXP i, int K, int V) {
  const int *pp = INTEGER(p), *pi = INTEGER(i);
  if (pp[0] != 0 || pp[V] != XLENGTH(i))
    Rf_error("internal error: malformed SCVB0 summary pointers");
  for (int v = 0; v < V; v++)
    if (pp[v + 1] < pp[v]) Rf_error("internal error: malformed SCVB0 summary pointers");
  for (R_xlen_t j = 0; j < XLENGTH(i); j++)
    if (pi[j] < 0 || pi[j] >= K) Rf_error("internal error: summary row out of range");
}

/* Global step of SCVB0 (eqs. 7-8). S is a K x V dgCMatrix given by its
 * slots p, i, x. Returns list(lambda, tot). */
SEXP ffi_lda_global_cvb0(SEXP lambda, SEXP tot, SEXP eta, SEXP rho, SEXP scale, SEXP p,
                         SEXP i, SEXP xv, SEXP threads_) {
  int n_prot = 0;
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  const int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  if (TYPEOF(tot) != REALSXP || XLENGTH(tot) != K ||
      TYPEOF(p) != INTSXP || XLENGTH(p) != (R_xlen_t)V + 1 || TYPEOF(i) != INTSXP ||
      TYPEOF(xv) != REALSXP || XLENGTH(i) != XLENGTH(xv))
    Rf_error("internal error: malformed SCVB0 global step input");
  check_summary_csc(p, i, K, V);
  SEXP lam_new = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  n_prot++;
  Rf_setAttrib(lam_new, R_DimNamesSymbol, Rf_getAttrib(lambda, R_DimNamesSymbol));
  SEXP tot_new = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  cvb0_global(K, V, REAL(lambda), REAL(tot), Rf_asReal(eta), Rf_asReal(rho),
              Rf_asReal(scale), INTEGER(p), INTEGER(i), REAL(xv),
              svi_threads_from_r(threads_), REAL(lam_new), REAL(tot_new));
  const char *names[] = {"lambda", "tot"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, lam_new);
  SET_VECTOR_ELT(out, 1, tot_new);
  UNPROTECT(n_prot);
  return out;
}

/* Lazy global step of SCVB0 (cvb0_global_lazy): X (K x V, the store of
 * lambda = eta + scale X) is updated IN PLACE; R creates X itself for each
 * lap (R/lda-cvb0.R) and holds it nowhere else. Returns list(scale, xtot). */
SEXP ffi_lda_global_cvb0_lazy(SEXP X, SEXP xtot, SEXP scale, SEXP rho, SEXP mult, SEXP p,
                              SEXP i, SEXP xv, SEXP rescale_below) {
  int n_prot = 0;
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  if (TYPEOF(xtot) != REALSXP || XLENGTH(xtot) != K || TYPEOF(p) != INTSXP ||
      XLENGTH(p) != (R_xlen_t)V + 1 || TYPEOF(i) != INTSXP || TYPEOF(xv) != REALSXP ||
      XLENGTH(i) != XLENGTH(xv))
    Rf_error("internal error: malformed SCVB0 lazy global step input");
  check_summary_csc(p, i, K, V);
  const double sc = Rf_asReal(scale), r = Rf_asReal(rho), m = Rf_asReal(mult),
               below = Rf_asReal(rescale_below);
  if (!(sc > 0.0) || !isfinite(sc) || !(r >= 0.0 && r <= 1.0) || !isfinite(m) ||
      !(below >= 0.0 && below < 1.0))
    Rf_error("internal error: SCVB0 lazy global step settings out of range");
  SEXP xtot_new = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  const double sc_new = cvb0_global_lazy(K, V, REAL(X), REAL(xtot), sc, r, m, INTEGER(p),
                                         INTEGER(i), REAL(xv), below, REAL(xtot_new));
  const char *names[] = {"scale", "xtot"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, Rf_ScalarReal(sc_new));
  SET_VECTOR_ELT(out, 1, xtot_new);
  UNPROTECT(n_prot);
  return out;
}

/* The kernel width the local step would use when asked for `want` (0: the
 * widest the processor runs); for tests and benchmarks. */
SEXP ffi_lda_cvb0_kernel_width(SEXP want) {
  return Rf_ScalarInteger(cvb0_kernel_width(Rf_asInteger(want)));
}
