/* Glue of the SCVB0 engine: unpacks SEXPs, allocates outputs and scratch,
 * calls the kernels of lda-cvb0.c. R (R/lda-cvb0.R) has validated
 * everything. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "ffi.h"
#include "lda-cvb0.h"
#include "pool.h"

/* the largest share of a batch's entries that may take a slot of the
 * summary on several threads (cvb0_summary_plan()); above it, one thread
 * runs the documents (a plan of one range) */
#define CVB0_SLOT_SHARE 0.4

/* The document update's settings, by name (cvb0_settings(), R/lda-cvb0.R):
 * alpha, background, doc_s, doc_tau, doc_kappa, passes, shuffle and kernel,
 * the vector width (0 = widest available). */
static cvb0_settings settings_from_r(SEXP opts, int K) {
  cvb0_settings cs;
  cs.K = K;
  cs.alpha = svi_opt_real(opts, "alpha", 0, DBL_MAX);
  cs.doc_s = svi_opt_real(opts, "doc_s", 0, DBL_MAX);
  cs.doc_tau = svi_opt_real(opts, "doc_tau", 0, DBL_MAX);
  cs.doc_kappa = svi_opt_real(opts, "doc_kappa", -DBL_MAX, DBL_MAX);
  if (!(cs.alpha > 0)) Rf_error("internal error: `alpha` must be positive");
  /* (absent in the settings of a fit saved before the option existed, and
   * for the topics of another engine: no background topic) */
  cs.background = svi_opt_real_or(opts, "background", 0, DBL_MAX, 0);
  cs.passes = svi_opt_int(opts, "passes", 1, 10000);
  cs.shuffle = svi_opt_flag(opts, "shuffle");
  /* (absent in the settings of a fit saved before the option existed: the
   * random start it was trained with) */
  cs.doc_start = svi_opt_int_or(opts, "doc_start", 0, 2, 0);
  cs.kernel = svi_opt_int(opts, "kernel", 0, 8);
  /* (absent in a fit saved before the option existed: dense) */
  cs.top_L = svi_opt_int_or(opts, "top_L", 0, INT_MAX, 0);
  if (cs.top_L >= K) cs.top_L = 0;
  cs.top_rest = svi_opt_int_or(opts, "top_rest", 0, 2, 0);
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

/* Per-call working memory carved from the session's scratch vector
 * (buffers$scratch) while it lasts, else R_alloc: the entry columns, the
 * word list, P, the scratch tables and, when the caller does not want them
 * back, the documents' topic counts. Fresh R_alloc blocks for each (about
 * 200 KB per minibatch of 100 kos documents) were half of what a default
 * fit allocated, and R's collector cleared them. Blocks are 16-byte aligned;
 * the scratch vector is doubles, so its start is. */
typedef struct {
  char *p;
  size_t left;
  size_t used; /* bytes taken, from the vector or not (the call's "need") */
} cvb0_arena;

static void *arena_take(cvb0_arena *a, size_t n, size_t size) {
  if (n < 1) n = 1;
  if (n > (SIZE_MAX - 15) / size) Rf_error("internal error: SCVB0 scratch too large");
  const size_t bytes = (n * size + 15) & ~(size_t)15;
  a->used += bytes;
  if (a->p != NULL && bytes <= a->left) {
    void *r = a->p;
    a->p += bytes;
    a->left -= bytes;
    return r;
  }
  return R_alloc(n, (int)size);
}

/* Local step (option summary TRUE) or fold-in (FALSE) of SCVB0 over x (a
 * sparsevi_dtm). Options by name (cvb0_opts(), R/lda-cvb0.R): the settings
 * of settings_from_r(), stream_base, summary and affine. lambda is either
 * the K x V topic parameters or, with affine = c(shift, scale), the store X
 * of the lazy global step (lambda = shift + scale X); tot (or NULL) the row
 * sums of lambda. buffers, by name (each NULL or a vector): scratch, a
 * double vector this call may overwrite; marks, the session's V-long int
 * table (svi_batch_words()); summary, a buffer for the summary (see below).
 * Each is written only when the package owns it (svi_owns(): R gives the
 * session's buffers up, R/lda-cvb0.R); one it does not own is left alone
 * and the call uses memory of its own instead.
 * Option theta FALSE: the K x D NTheta are working memory only and theta
 * is NULL. Returns list(theta = K x D NTheta, words = the 0-based distinct words of
 * the batch (increasing), x = the K x U summary: column u holds the sum of
 * m gamma over the last pass for word words[u]). A training summary is
 * these two vectors and nothing else: no K x V object per minibatch.
 * With option top_L = L < K (training only) the summary is sparse instead
 * (each entry's L largest responsibilities, cvb0_top() or cvb0_shape()): x
 * is NULL and p (U + 1), k, v give column u's topics k[p[u] .. p[u + 1])
 * (0-based, increasing) and their sums v, and in the shape form (top_rest
 * = 2) r (U) the sums of its entries' tail weights; p, k, v, r are NULL
 * otherwise. need: the doubles of scratch the call took. */
SEXP ffi_lda_local_cvb0(SEXP x_, SEXP V_, SEXP lambda, SEXP tot, SEXP opts, SEXP seed,
                        SEXP threads_, SEXP buffers) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_list(x_, V_);
  const SEXP term = svi_opt(x_, "term");
  svi_need_matrix(lambda, REALSXP, -1, x.V, "lambda");
  const int K = Rf_nrows(lambda), V = x.V;
  if (K < 1) Rf_error("internal error: lambda has no topics");
  cvb0_settings cs = settings_from_r(opts, K);
  const uint64_t sd = svi_seed_from_r(seed);
  const uint64_t sb = svi_stream_from_r(svi_opt(opts, "stream_base"));
  const int want = svi_opt_flag(opts, "summary");
  /* the documents' topic counts as a result (theta), or working memory only */
  const int want_theta = svi_opt_flag(opts, "theta");
  const SEXP affine = svi_opt(opts, "affine");
  /* the sparse summary (top_L < K): only when training */
  if (!want) cs.top_L = 0;
  const int sparse = cs.top_L > 0;
  SEXP scratch = svi_opt(buffers, "scratch"), marks = svi_opt(buffers, "marks"),
       sbuf = svi_opt(buffers, "summary");
  /* (a buffer the package does not own is never written: none instead) */
  if (!Rf_isNull(scratch) && !svi_owns(scratch)) scratch = R_NilValue;
  if (!Rf_isNull(marks) && !svi_owns(marks)) marks = R_NilValue;
  if (!Rf_isNull(sbuf) && !svi_owns(sbuf)) {
    sbuf = PROTECT(Rf_allocVector(REALSXP, 0));
    n_prot++;
  }
  const int threads = svi_threads_from_r(threads_);
  if (threads > 1) svi_pool_wake(); /* they wake while this call sets up */
  double shift = 0.0, scale = 1.0;
  if (!Rf_isNull(affine)) {
    if (TYPEOF(affine) != REALSXP || XLENGTH(affine) != 2 || !isfinite(REAL(affine)[0]) ||
        !isfinite(REAL(affine)[1]) || Rf_isNull(tot))
      Rf_error("internal error: SCVB0 affine store needs c(shift, scale) and totals");
    shift = REAL(affine)[0];
    scale = REAL(affine)[1];
  }
  int *mk = NULL;
  if (!Rf_isNull(marks)) {
    if (TYPEOF(marks) != INTSXP || XLENGTH(marks) < V)
      Rf_error("internal error: SCVB0 word table must be at least V integers");
    mk = INTEGER(marks);
  }
  double *inv_tot = inv_totals(lambda, tot, K, V);

  cvb0_arena arena = {NULL, 0, 0};
  if (!Rf_isNull(scratch)) {
    if (TYPEOF(scratch) != REALSXP) Rf_error("internal error: SCVB0 scratch must be doubles");
    arena.p = (char *)REAL(scratch);
    arena.left = (size_t)XLENGTH(scratch) * sizeof(double);
  }
  const R_xlen_t nnz = XLENGTH(term);
  int *ecol = (int *)arena_take(&arena, (size_t)nnz, sizeof(int));
  int *wlist = (int *)arena_take(&arena, (size_t)nnz, sizeof(int));
  const int U = svi_batch_words(x.term, nnz, x.V, mk, ecol, wlist);
  if ((double)K * (double)x.D > (double)R_XLEN_T_MAX ||
      (double)K * (double)U > 2147483647.0)
    Rf_error("internal error: SCVB0 output too large");
  SEXP words = PROTECT(Rf_allocVector(INTSXP, want ? U : 0));
  n_prot++;
  if (want && U > 0) memcpy(INTEGER(words), wlist, sizeof(int) * (size_t)U);
  /* P = lambda / tot over the batch's words (topics are frozen within a
   * batch; cvb0_local() fills it), in the session's scratch when it has
   * room (R/lda-cvb0.R keeps one per session: fresh R_alloc blocks of a
   * few MB per minibatch cost page faults and garbage collections), else
   * R_alloc */
  double *P = (double *)arena_take(&arena, (size_t)K * (size_t)(U > 0 ? U : 1), sizeof(double));
  const cvb0_topics tp = {REAL(lambda), shift, scale, inv_tot, wlist, cs.doc_start == 1};
  SEXP theta = R_NilValue;
  double *th;
  if (want_theta) {
    theta = PROTECT(Rf_allocMatrix(REALSXP, K, x.D));
    n_prot++;
    th = REAL(theta);
  } else {
    th = (double *)arena_take(&arena, (size_t)K * (size_t)(x.D > 0 ? x.D : 1), sizeof(double));
  }
  /* the summary: with buffers$summary NULL a new vector of its own, exactly
   * K x U (a package-held buffer returned as a result would be overwritten
   * by the next call while a round still holds it: issue 21). A double
   * vector there is a buffer the caller gives to this call alone and takes
   * back once the global step has read the result (lda_lap()'s buffers):
   * written in place when it holds K x U values (the result's x is then
   * that buffer, longer than K x U; readers take the first K x U), else a
   * new vector with a quarter to spare, which the caller keeps instead. A
   * fresh 2.4 MB summary per minibatch of 100 kos documents made R collect
   * garbage 34 times in a default fit, a third of its CPU time. */
  const R_xlen_t s_len = (want && !sparse) ? (R_xlen_t)K * U : 0;
  SEXP summary;
  if (sparse) {
    summary = R_NilValue;
  } else if (want && TYPEOF(sbuf) == REALSXP && XLENGTH(sbuf) >= s_len) {
    summary = sbuf;
  } else {
    const R_xlen_t len = (want && TYPEOF(sbuf) == REALSXP) ? s_len + s_len / 4 : s_len;
    summary = PROTECT(Rf_allocVector(REALSXP, len));
    n_prot++;
    /* a buffer for the caller to give back (lda_lap()): the package's own */
    if (want && TYPEOF(sbuf) == REALSXP) svi_give_up(summary);
  }

  /* scratch */
  int mt = 1;
  for (int d = 0; d < x.D; d++) {
    int n = x.doc_ptr[d + 1] - x.doc_ptr[d];
    if (n > mt) mt = n;
  }
  double *tables = (double *)arena_take(&arena, cvb0_scratch_size(&x, &cs), sizeof(double));
  double *g_all =
      (double *)arena_take(&arena, (size_t)threads * cvb0_thread_stride(K), sizeof(double));
  int *order_all = (int *)arena_take(&arena, (size_t)threads * cvb0_order_stride(mt), sizeof(int));
  /* training: where each entry's part of the summary goes (cvb0_summary_plan();
   * on several threads, some in places of their own first) */
  cvb0_plan plan, *pl = NULL;
  cvb0_sparse sp, *spp = NULL;
  if (sparse) {
    const int L = cs.top_L, shape = cs.top_rest == 2;
    sp.il = (int *)arena_take(&arena, (size_t)threads * (L + K), sizeof(int));
    memset(sp.il, 0, sizeof(int) * (size_t)threads * (size_t)(L + K));
    sp.cptr = (int *)arena_take(&arena, (size_t)U + 1, sizeof(int));
    sp.cent = (int *)arena_take(&arena, (size_t)nnz, sizeof(int));
    sp.cap = (svi_len *)arena_take(&arena, (size_t)U + 1, sizeof(svi_len));
    sp.eoff = (svi_len *)arena_take(&arena, (size_t)nnz + 1, sizeof(svi_len));
    sp.full = shape ? (int *)arena_take(&arena, (size_t)U + 1, sizeof(int)) : NULL;
    /* (one thread runs the documents in order: a full column's entries are
     * added to it as they come, without slots of their own) */
    const int direct = shape && threads == 1;
    const svi_len room = cvb0_sparse_plan(nnz, ecol, U, K, L, shape, direct, sp.cptr, sp.cent,
                                          sp.cap, sp.eoff, sp.full);
    sp.fullacc = NULL;
    if (direct) {
      sp.fullacc = (double *)arena_take(&arena, (size_t)K * (size_t)(U > 0 ? U : 1),
                                        sizeof(double));
      memset(sp.fullacc, 0, sizeof(double) * (size_t)K * (size_t)(U > 0 ? U : 1));
    }
    const svi_len ne = sp.eoff[nnz];
    sp.tk = (int *)arena_take(&arena, (size_t)(ne > 0 ? ne : 1), sizeof(int));
    sp.tv = (double *)arena_take(&arena, (size_t)(ne > 0 ? ne : 1), sizeof(double));
    sp.tc = shape ? (double *)arena_take(&arena, (size_t)nnz + 1, sizeof(double)) : NULL;
    sp.r = shape ? (double *)arena_take(&arena, (size_t)U + 1, sizeof(double)) : NULL;
    sp.ok = (int *)arena_take(&arena, (size_t)room, sizeof(int));
    sp.ov = (double *)arena_take(&arena, (size_t)room, sizeof(double));
    sp.nz = (int *)arena_take(&arena, (size_t)U, sizeof(int));
    sp.acc = (double *)arena_take(&arena, (size_t)threads * K, sizeof(double));
    sp.mark = (int *)arena_take(&arena, (size_t)threads * K, sizeof(int));
    sp.touched = (int *)arena_take(&arena, (size_t)threads * K, sizeof(int));
    memset(sp.acc, 0, sizeof(double) * (size_t)threads * (size_t)K);
    memset(sp.mark, 0, sizeof(int) * (size_t)threads * (size_t)K);
    spp = &sp;
  } else if (want && U < INT_MAX / 2) {
    plan.R = threads < x.D ? threads : (x.D > 1 ? x.D : 1);
    plan.rdoc = (int *)arena_take(&arena, (size_t)plan.R + 1, sizeof(int));
    plan.dest = (int *)arena_take(&arena, (size_t)nnz, sizeof(int));
    plan.xptr = (int *)arena_take(&arena, (size_t)U + 1, sizeof(int));
    plan.xslot = (int *)arena_take(&arena, (size_t)(nnz - U), sizeof(int));
    int *first = (int *)arena_take(&arena, (size_t)U + 1, sizeof(int));
    /* writing a slot and adding it later costs a thread about twice what
     * adding an entry to its column does (memory, not arithmetic): when
     * more than CVB0_SLOT_SHARE of the entries need one (long documents
     * over a small vocabulary: nips_f20 0.46, poliblog5k 0.45 at two
     * threads), the threads gain nothing, and one thread runs the
     * documents (the same bits either way; the threads still build the
     * topic columns) */
    int n_extra = cvb0_summary_plan(&x, ecol, U, plan.R, (int)(CVB0_SLOT_SHARE * (double)nnz),
                                    plan.rdoc, plan.dest, plan.xptr, plan.xslot, first);
    if (n_extra < 0) {
      /* one range (one thread runs the documents): no slots */
      plan.R = 1;
      n_extra = cvb0_summary_plan(&x, ecol, U, 1, 0, plan.rdoc, plan.dest, plan.xptr,
                                  plan.xslot, first);
    }
    /* (one range, as on one thread, has no slots: each column is written
     * by its first entry and added to by the others, in document order,
     * with no pass zeroing the K x U summary first: at K = 1000 a
     * minibatch of 100 Wikipedia paragraphs has a 23 MB summary) */
    plan.extra = n_extra > 0 ?
      (double *)arena_take(&arena, (size_t)K * (size_t)n_extra, sizeof(double)) : NULL;
    pl = &plan;
  }
  cvb0_local(&x, &tp, P, ecol, U, &cs, sd, sb, threads, th,
             (want && !sparse) ? REAL(summary) : NULL, pl, spp, tables, g_all, order_all);

  const char *names[] = {"theta", "words", "x", "p", "k", "v", "r", "need"};
  SEXP out = PROTECT(svi_named_list(8, names));
  /* the doubles of scratch this call took (R/lda-cvb0.R grows the
   * session's vector to it: an estimate cannot see a sparse summary's full
   * columns) */
  SET_VECTOR_ELT(out, 7, Rf_ScalarReal((double)(arena.used / sizeof(double) + 1)));
  n_prot++;
  SET_VECTOR_ELT(out, 0, theta);
  SET_VECTOR_ELT(out, 1, words);
  SET_VECTOR_ELT(out, 2, summary);
  if (sparse) {
    /* the sparse summary: column u (word words[u]) holds topics k[p[u] ..
     * p[u + 1]) (0-based, increasing) with sums v */
    SEXP pp = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)U + 1));
    n_prot++;
    int *p = INTEGER(pp);
    svi_len tot = 0;
    p[0] = 0;
    for (int u = 0; u < U; u++) {
      tot += sp.nz[u];
      if (tot > INT_MAX) Rf_error("internal error: SCVB0 sparse summary too large");
      p[u + 1] = (int)tot;
    }
    SEXP kk = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)tot));
    SEXP vv = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)tot));
    n_prot += 2;
    for (int u = 0; u < U; u++) {
      if (sp.nz[u] == 0) continue;
      memcpy(INTEGER(kk) + p[u], sp.ok + sp.cap[u], sizeof(int) * (size_t)sp.nz[u]);
      memcpy(REAL(vv) + p[u], sp.ov + sp.cap[u], sizeof(double) * (size_t)sp.nz[u]);
    }
    SET_VECTOR_ELT(out, 3, pp);
    SET_VECTOR_ELT(out, 4, kk);
    SET_VECTOR_ELT(out, 5, vv);
    if (sp.r) {
      SEXP rr = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)U));
      n_prot++;
      if (U > 0) memcpy(REAL(rr), sp.r, sizeof(double) * (size_t)U);
      SET_VECTOR_ELT(out, 6, rr);
    }
  }
  UNPROTECT(n_prot);
  return out;
}

/* The shape form's summary (top_rest = 2: list(words, p, k, v, r) from
 * ffi_lda_local_cvb0()) as the K x U values the global step adds, under
 * the topics lambda = shift + scale X (the store's, or a dense lambda with
 * affine c(0, 1)) with totals tot: column u is r[u] times the word's
 * topic column normalised over k, plus its values (cvb0_shape_columns()).
 * Returns the K x U values: buf itself (longer than K x U: readers take
 * the first K x U) when the package owns it and it is long enough. */
int svi_check_shape_summary(SEXP S, int K, int V) {
  const SEXP words = svi_opt(S, "words"), p_ = svi_opt(S, "p"), k_ = svi_opt(S, "k"),
             v_ = svi_opt(S, "v"), r_ = svi_opt(S, "r");
  if (TYPEOF(words) != INTSXP || TYPEOF(p_) != INTSXP || TYPEOF(k_) != INTSXP ||
      TYPEOF(v_) != REALSXP || TYPEOF(r_) != REALSXP)
    Rf_error("internal error: malformed SCVB0 shape summary");
  const int U = (int)XLENGTH(words);
  const int *w = INTEGER(words), *pp = INTEGER(p_), *kk = INTEGER(k_);
  if (XLENGTH(p_) != (R_xlen_t)U + 1 || XLENGTH(r_) != U || pp[0] != 0 ||
      XLENGTH(k_) != XLENGTH(v_) || pp[U] != XLENGTH(k_))
    Rf_error("internal error: malformed SCVB0 shape summary");
  for (int u = 0; u < U; u++) {
    if (w[u] < 0 || w[u] >= V || (u > 0 && w[u] <= w[u - 1]) || pp[u + 1] < pp[u])
      Rf_error("internal error: malformed SCVB0 shape summary");
    for (int i = pp[u]; i < pp[u + 1]; i++)
      if (kk[i] < 0 || kk[i] >= K) Rf_error("internal error: malformed SCVB0 shape summary");
  }
  return U;
}

SEXP ffi_lda_cvb0_shape_columns(SEXP X, SEXP affine, SEXP tot, SEXP S, SEXP threads_,
                                SEXP buf) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  const int K = Rf_nrows(X), V = Rf_ncols(X);
  if (TYPEOF(affine) != REALSXP || XLENGTH(affine) != 2 || Rf_isNull(tot))
    Rf_error("internal error: malformed SCVB0 shape summary");
  const int U = svi_check_shape_summary(S, K, V);
  const int *w = INTEGER(svi_opt(S, "words")), *pp = INTEGER(svi_opt(S, "p")),
            *kk = INTEGER(svi_opt(S, "k"));
  const SEXP v_ = svi_opt(S, "v"), r_ = svi_opt(S, "r");
  const double *inv_tot = inv_totals(X, tot, K, V);
  const cvb0_topics tp = {REAL(X), REAL(affine)[0], REAL(affine)[1], inv_tot, w, 1};
  /* written into buf when the package owns it and it holds K x U values
   * (the session's buffer, R/lda-cvb0.R: a fresh 24 MB vector per
   * minibatch at K = 1000 cost collections), else into a new vector */
  SEXP out = buf;
  if (TYPEOF(buf) != REALSXP || !svi_owns(buf) || XLENGTH(buf) < (R_xlen_t)K * U)
    out = Rf_allocVector(REALSXP, (R_xlen_t)K * U);
  PROTECT(out);
  cvb0_shape_columns(K, &tp, U, pp, kk, REAL(v_), REAL(r_), REAL(out),
                     svi_threads_from_r(threads_));
  UNPROTECT(1);
  return out;
}

/* Global step of SCVB0 (eqs. 7-8) on a dense lambda; the summary is given by
 * its words and K x U values. Returns list(lambda, tot). */
SEXP ffi_lda_global_cvb0(SEXP lambda, SEXP tot, SEXP eta, SEXP rho, SEXP scale,
                         SEXP words, SEXP xv, SEXP threads_) {
  int n_prot = 0;
  svi_need_matrix(lambda, REALSXP, -1, -1, "lambda");
  const int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  if (TYPEOF(tot) != REALSXP || XLENGTH(tot) != K)
    Rf_error("internal error: malformed SCVB0 global step input");
  const int U = svi_check_summary(words, xv, K, V);
  SEXP lam_new = PROTECT(Rf_allocMatrix(REALSXP, K, V));
  n_prot++;
  Rf_setAttrib(lam_new, R_DimNamesSymbol, Rf_getAttrib(lambda, R_DimNamesSymbol));
  SEXP tot_new = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  cvb0_global(K, V, REAL(lambda), REAL(tot), Rf_asReal(eta), Rf_asReal(rho),
              Rf_asReal(scale), U, INTEGER(words), REAL(xv),
              svi_threads_from_r(threads_), REAL(lam_new), REAL(tot_new));
  const char *names[] = {"lambda", "tot"};
  SEXP out = PROTECT(svi_named_list(2, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, lam_new);
  SET_VECTOR_ELT(out, 1, tot_new);
  UNPROTECT(n_prot);
  return out;
}

/* The kernel width the local step would use when asked for `want` (0: the
 * widest the processor runs); for tests and benchmarks. */
SEXP ffi_lda_cvb0_kernel_width(SEXP want) {
  return Rf_ScalarInteger(cvb0_kernel_width(Rf_asInteger(want)));
}
