/* Glue of the "vb" engine's local step: unpacks SEXPs, allocates outputs,
 * calls the kernels of lda-vb.c. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include "pool.h"
#include "ffi.h"
#include "lda.h"
#include "lda-vb-ffi.h"

/* The options of the vb step (and of completion, which runs it), read by
 * name from the named list built by vb_opts() in R/lda-vb.R. */
lda_vb_opts lda_vb_opts_from_r(int K, SEXP opts) {
  lda_vb_opts o;
  o.K = K;
  o.L = svi_opt_int(opts, "L", 1, K);
  o.max_iter = svi_opt_int(opts, "max_iter", 0, 10000000);
  o.select_every = svi_opt_int(opts, "select_every", 0, 2);
  o.restart_max = svi_opt_int(opts, "restart_max", 0, 100000);
  o.restart_iter = svi_opt_int(opts, "restart_iter", 0, 10000000);
  o.want_objective = 0;
  o.alpha = svi_opt_real(opts, "alpha", 0, DBL_MAX);
  o.background = svi_opt_real_or(opts, "background", 0, DBL_MAX, 0);
  o.tol = svi_opt_real(opts, "tol", R_NegInf, R_PosInf);
  o.active_eps = svi_opt_real(opts, "active_eps", R_NegInf, R_PosInf);
  o.warm = NULL;
  if (!(o.alpha > 0)) Rf_error("internal error: `alpha` must be positive");
  return o;
}

void lda_check_topics(SEXP topics, int V) {
  if (TYPEOF(topics) != REALSXP || !Rf_isMatrix(topics) || Rf_ncols(topics) != V ||
      Rf_nrows(topics) < 1)
    Rf_error("internal error: topics must be a double K x V matrix");
}

/* The vb local step over a batch (x: a sparsevi_dtm). Options by name
 * (lda_vb_opts_from_r() and: mode, objective, summary, store). mode 0: topics are
 * Dirichlet parameters lambda; mode 1: a topic-word matrix beta (fold-in
 * with fixed topics); mode 2: the store X of lambda = eta + scale X, with
 * option store = c(eta, scale, the K row sums of X). The summary comes back
 * as the parts p, i, x of a sparse K x V matrix (NULL without one). */
/* The by-word summary (lda_vb_wordsum) as a K x V dgCMatrix's slots
 * (svi_set_sparse_by_word()): each word's sums in a K row, the entries the
 * previous word touched zeroed first. The same entries as the dense
 * accumulator gives. */
typedef struct {
  const lda_vb_wordsum *ws;
  int L, n;
  double *row;
  int *touched, *mark;
} word_sums;

static const double *word_sums_column(void *ctx, int w) {
  word_sums *c = (word_sums *)ctx;
  for (int t = 0; t < c->n; t++) c->row[c->touched[t]] = 0;
  c->n = lda_vb_word_sums(c->ws, c->L, w, c->row, c->touched, c->mark);
  return c->row;
}

static void set_word_sums(SEXP out, int slot, const lda_vb_wordsum *ws, int L, int K, int V,
                          const int *words, int Vb) {
  word_sums c = {ws, L, 0, (double *)R_alloc(K, sizeof(double)),
                 (int *)R_alloc(K, sizeof(int)), (int *)R_alloc(K, sizeof(int))};
  memset(c.row, 0, sizeof(double) * (size_t)K);
  memset(c.mark, 0, sizeof(int) * (size_t)K);
  svi_set_sparse_by_word(out, slot, K, V, words, Vb, word_sums_column, &c);
}

SEXP ffi_lda_local_vb(SEXP x_, SEXP V_, SEXP topics, SEXP opts, SEXP threads_,
                      SEXP warm) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_list(x_, V_);
  lda_check_topics(topics, x.V);
  int K = Rf_nrows(topics), V = x.V, D = x.D;
  int mode = svi_opt_int(opts, "mode", 0, 2), threads = svi_threads_from_r(threads_);
  if (threads > 1) svi_pool_wake(); /* they wake while this call sets up */
  lda_vb_opts o = lda_vb_opts_from_r(K, opts);
  const double *store = NULL;
  if (mode == 2) {
    SEXP st = svi_opt(opts, "store");
    if (TYPEOF(st) != REALSXP || XLENGTH(st) != 2 + (R_xlen_t)K)
      Rf_error("internal error: the vb step on a store needs eta, scale and row sums");
    store = REAL(st);
  }
  /* warm: NULL, or a K x D double matrix of start counts (previous lap) */
  if (!Rf_isNull(warm)) {
    if (TYPEOF(warm) != REALSXP || XLENGTH(warm) != (R_xlen_t)K * D)
      Rf_error("internal error: the warm start of the vb step must be K x D doubles");
    o.warm = REAL(warm);
  }
  int want_obj = svi_opt_flag(opts, "objective"),
      want_sum = svi_opt_flag(opts, "summary");
  o.want_objective = want_obj;
  svi_len nnz = x.doc_ptr[D];
  int *words = (int *)R_alloc(V, sizeof(int));
  int *loc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  int Vb = svi_batch_words(x.term, nnz, x.V, NULL, loc, words);
  size_t kvb = (size_t)K * (size_t)(Vb > 0 ? Vb : 1);
  /* le, a second K x Vb table, only for the dense step's objective */
  double *le = lda_vb_needs_le(&o) ? (double *)R_alloc(kvb, sizeof(double)) : NULL;
  double *eb = (double *)R_alloc(kvb, sizeof(double));
  if (mode == 2) {
    /* vocab_size: the vocabulary of the row sums when `topics` holds only
     * some of its columns (a cluster worker receives the columns of its
     * batches' words, R/executor.R); else all of them */
    int Vs = svi_opt_int_or(opts, "vocab_size", 1, INT_MAX, V);
    lda_topic_weights(REAL(topics), K, Vs, words, Vb, 0, store[0], store[1], store + 2,
                      threads, le, eb);
  } else {
    lda_topic_weights(REAL(topics), K, V, words, Vb, mode, 0.0, 1.0, NULL, threads, le, eb);
  }

  SEXP doc_topic = PROTECT(Rf_allocMatrix(REALSXP, K, D));
  n_prot++;
  SEXP doc_obj = PROTECT(Rf_allocVector(REALSXP, D));
  n_prot++;
  SEXP iters = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  SEXP tries = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  SEXP accepts = PROTECT(Rf_allocVector(INTSXP, D));
  n_prot++;
  lda_vb_out out;
  out.doc_topic = REAL(doc_topic);
  out.doc_obj = want_obj ? REAL(doc_obj) : NULL;
  if (!want_obj)
    for (int d = 0; d < D; d++) REAL(doc_obj)[d] = NA_REAL;
  out.iters = INTEGER(iters);
  out.tries = INTEGER(tries);
  out.accepts = INTEGER(accepts);
  out.acc = NULL;
  out.ws = NULL;
  /* The sparse step's summary by word (12 bytes per entry and kept topic)
   * where that is smaller than a dense K x Vb accumulator (8 bytes per
   * entry of it): at large K it is many times smaller. */
  lda_vb_wordsum ws;
  int L = o.L < K ? o.L : K;
  int form = svi_opt_int(opts, "summary_form", 0, 2);
  int by_word = want_sum && o.L < K &&
                (form == 2 || (form == 0 && (double)nnz * L * 12.0 + (double)nnz * 8.0 <
                                                (double)kvb * 8.0));
  if (by_word) {
    ws.slot = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    ws.word_ptr = (int *)R_alloc((size_t)Vb + 1, sizeof(int));
    ws.nsel = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
    ws.idx = (int *)R_alloc(nnz > 0 ? (size_t)nnz * L : 1, sizeof(int));
    ws.val = (double *)R_alloc(nnz > 0 ? (size_t)nnz * L : 1, sizeof(double));
    lda_vb_wordsum_slots(&x, loc, Vb, &ws);
    out.ws = &ws;
  } else if (want_sum) {
    out.acc = (double *)R_alloc(kvb, sizeof(double));
    memset(out.acc, 0, kvb * sizeof(double));
  }
  lda_vb_batch(&x, loc, Vb, eb, le, &o, threads, &out);

  /* Dense responsibilities (L >= K) keep exp(E log theta) sums in acc and
   * are multiplied by the word's weights here; L-sparse ones are final. */
  if (want_sum && o.L >= K)
    for (int w = 0; w < Vb; w++) {
      double *a = out.acc + (svi_len)w * K;
      const double *e = eb + (svi_len)w * K;
      for (int k = 0; k < K; k++) a[k] *= e[k];
    }
  const char *names[] = {"p", "i", "x", "doc_topic", "doc_obj", "iters", "tries", "accepts"};
  SEXP res = PROTECT(svi_named_list(8, names));
  n_prot++;
  /* the batch summary as a sparse K x V matrix over the batch's words:
   * O(K x its vocabulary) however large V is */
  if (by_word)
    set_word_sums(res, 0, &ws, L, K, V, words, Vb);
  else if (want_sum)
    svi_set_sparse_columns(res, 0, out.acc, K, V, words, Vb);
  SET_VECTOR_ELT(res, 3, doc_topic);
  SET_VECTOR_ELT(res, 4, doc_obj);
  SET_VECTOR_ELT(res, 5, iters);
  SET_VECTOR_ELT(res, 6, tries);
  SET_VECTOR_ELT(res, 7, accepts);
  UNPROTECT(n_prot);
  return res;
}
