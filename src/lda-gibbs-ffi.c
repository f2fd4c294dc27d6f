/* Glue of the "gibbs" engine (Gibbs within SVI with sparse lazy updates):
 * unpack SEXPs, allocate, call the kernels in lda-gibbs.c and
 * lda-gibbs-global.c, pack the results. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include "pool.h"
#include "ffi.h"
#include "lda-gibbs.h"

static const char *store_names[] = {"p", "k", "x", "tot", "scale", "base"};

/* A K x V sparse summary in CSC form (p, k): pointers from 0,
 * non-decreasing, ending at length(k), rows in [0, K). */
static void check_csc(SEXP p, SEXP k, SEXP x, int K, const char *what) {
  if (TYPEOF(p) != INTSXP || TYPEOF(k) != INTSXP || TYPEOF(x) != REALSXP ||
      XLENGTH(p) < 2 || XLENGTH(p) > INT_MAX || XLENGTH(k) != XLENGTH(x))
    Rf_error("internal error: malformed %s", what);
  const int *pp = INTEGER(p), *pk = INTEGER(k);
  R_xlen_t V = XLENGTH(p) - 1;
  if (pp[0] != 0 || pp[V] != XLENGTH(k)) Rf_error("internal error: malformed %s", what);
  for (R_xlen_t v = 0; v < V; v++)
    if (pp[v + 1] < pp[v]) Rf_error("internal error: malformed %s", what);
  for (R_xlen_t j = 0; j < XLENGTH(k); j++)
    if (pk[j] < 0 || pk[j] >= K) Rf_error("internal error: malformed %s", what);
}

/* A view of the sparse store list(p, k, x, tot, scale, base); a store of
 * five elements (a fit saved before the base existed) has base 0. */
static gibbs_topics topics_view(SEXP store, SEXP eta) {
  if (TYPEOF(store) != VECSXP || XLENGTH(store) < 5 || XLENGTH(store) > 7)
    Rf_error("internal error: malformed gibbs store");
  SEXP p = VECTOR_ELT(store, 0), k = VECTOR_ELT(store, 1), x = VECTOR_ELT(store, 2),
       tot = VECTOR_ELT(store, 3), scale = VECTOR_ELT(store, 4);
  if (TYPEOF(tot) != REALSXP || XLENGTH(tot) < 1 || XLENGTH(tot) > INT_MAX)
    Rf_error("internal error: malformed gibbs store");
  check_csc(p, k, x, (int)XLENGTH(tot), "gibbs store");
  gibbs_topics tw;
  tw.K = (int)XLENGTH(tot);
  tw.V = (int)XLENGTH(p) - 1;
  tw.p = INTEGER(p);
  tw.k = INTEGER(k);
  tw.x = REAL(x);
  tw.tot = REAL(tot);
  tw.scale = svi_real_arg(scale, 0, DBL_MAX, "scale");
  tw.eta = svi_real_arg(eta, 0, DBL_MAX, "eta");
  tw.base =
      XLENGTH(store) >= 6 ? svi_real_arg(VECTOR_ELT(store, 5), 0, DBL_MAX, "base") : 0.0;
  /* a worker's columns of a vocabulary of `vocab` words (lda_columns_state()) */
  tw.vocab = XLENGTH(store) == 7 ? svi_real_arg(VECTOR_ELT(store, 6), tw.V, INT_MAX, "vocab")
                                 : (double)tw.V;
  if (tw.p[tw.V] != XLENGTH(k)) Rf_error("internal error: gibbs store pointers");
  return tw;
}

static void prepare(const gibbs_topics *tw, const double *alpha,
                    const unsigned char *used, int threads, gibbs_prep *pp) {
  pp->c = (double *)R_alloc(tw->K, sizeof(double));
  pp->cum_alpha = (double *)R_alloc(tw->K, sizeof(double));
  pp->d = (double *)R_alloc(tw->p[tw->V] > 0 ? tw->p[tw->V] : 1, sizeof(double));
  pp->cum_wa = (double *)R_alloc(tw->p[tw->V] > 0 ? tw->p[tw->V] : 1, sizeof(double));
  lda_gibbs_prepare(tw, alpha, used, threads, pp);
}

/* The local step on one batch. ctl = c(burnin, samples). Returns
 * list(p, k, x) of the K x V summary (average of the saved sweeps),
 * doc_topic (K x D average topic counts, list(p, k, x) of its CSC slots)
 * and stats (draws from the
 * word-document, word-alpha, document and alpha parts; entries visited for
 * the word-document part; tokens). */
/* The Gibbs local step over a batch (x: a sparsevi_dtm) given the sparse
 * topic store; options by name (R/lda-gibbs.R): eta, alpha (K), burnin,
 * samples, stream0. */
SEXP ffi_lda_local_gibbs(SEXP x_, SEXP V_, SEXP store, SEXP opts, SEXP seed,
                         SEXP threads_) {
  int n_prot = 0;
  svi_dtm x = svi_dtm_list(x_, V_);
  gibbs_topics tw = topics_view(store, svi_opt(opts, "eta"));
  int K = tw.K, V = tw.V, threads = svi_threads_from_r(threads_);
  if (threads > 1) svi_pool_wake(); /* they wake while this call sets up */
  SEXP alpha = svi_opt(opts, "alpha");
  svi_need_real(alpha, K, "alpha");
  if (x.V != V) Rf_error("internal error: dimensions");
  int burnin = svi_opt_int(opts, "burnin", 0, 10000000),
      samples = svi_opt_int(opts, "samples", 1, 100000);
  uint64_t s = svi_seed_from_r(seed), st = svi_stream_from_r(svi_opt(opts, "stream0"));

  /* token offsets, words used by the batch */
  svi_len *tok_off = (svi_len *)R_alloc((size_t)x.D + 1, sizeof(svi_len));
  unsigned char *used = (unsigned char *)R_alloc(V, 1);
  for (int v = 0; v < V; v++) used[v] = 0;
  tok_off[0] = 0;
  for (int d = 0; d < x.D; d++) {
    svi_len n = 0;
    for (int e = x.doc_ptr[d]; e < x.doc_ptr[d + 1]; e++) {
      n += (svi_len)floor(x.count[e] + 0.5);
      used[x.term[e]] = 1;
    }
    tok_off[d + 1] = tok_off[d] + n;
  }
  svi_len n_tok = tok_off[x.D];
  if ((double)n_tok * samples > 2147483647.0)
    Rf_error(
        "internal error: batch too large for the gibbs summary; use smaller batches");
  gibbs_prep pp;
  prepare(&tw, REAL(alpha), used, threads, &pp);
  pp.background = svi_opt_real_or(opts, "background", 0, DBL_MAX, 0);

  svi_len nt1 = n_tok > 0 ? n_tok : 1;
  int *tok_word = (int *)R_alloc(nt1, sizeof(int));
  int *zcur = (int *)R_alloc(nt1, sizeof(int));
  int *tok_z = (int *)R_alloc(nt1 * samples, sizeof(int));
  int *iscr = (int *)R_alloc((size_t)4 * K * threads, sizeof(int));
  double *dscr = (double *)R_alloc((size_t)K * threads, sizeof(double));
  double *stats =
      (double *)R_alloc((size_t)GIBBS_NSTAT * (x.D > 0 ? x.D : 1), sizeof(double));

  const char *names[] = {"p", "k", "x", "doc_topic", "stats"};
  SEXP out = PROTECT(svi_named_list(5, names));
  n_prot++;
  svi_len nd1 = x.D > 0 ? x.D : 1;
  svi_rng *doc_rng = (svi_rng *)R_alloc(2 * nd1, sizeof(svi_rng));
  if (lda_gibbs_local(&x, &tw, &pp, burnin, samples, s, st, threads, tok_off, tok_word,
                      zcur, tok_z, iscr, dscr, stats, doc_rng, doc_rng + nd1) != 0)
    Rf_error("internal error: the sampler drew another number of uniforms than planned");

  /* the documents' topic counts, sparse (serially: the draws are fixed) */
  {
    svi_len room = nt1 * samples;
    if (room > (svi_len)K * nd1) room = (svi_len)K * nd1;
    int *dp = (int *)R_alloc((size_t)x.D + 1, sizeof(int));
    int *dk = (int *)R_alloc(room, sizeof(int));
    double *dx = (double *)R_alloc(room, sizeof(double));
    svi_len dnz = lda_gibbs_doc_topic(K, x.D, n_tok, samples, tok_off, tok_z, dp, dk, dx,
                                      iscr, iscr + K);
    const char *dnames[] = {"p", "k", "x"};
    SEXP dt = PROTECT(svi_named_list(3, dnames));
    n_prot++;
    SEXP dtp = SET_VECTOR_ELT(dt, 0, Rf_allocVector(INTSXP, (R_xlen_t)x.D + 1));
    SEXP dtk = SET_VECTOR_ELT(dt, 1, Rf_allocVector(INTSXP, dnz));
    SEXP dtx = SET_VECTOR_ELT(dt, 2, Rf_allocVector(REALSXP, dnz));
    for (int d = 0; d <= x.D; d++) INTEGER(dtp)[d] = dp[d];
    for (svi_len j = 0; j < dnz; j++) {
      INTEGER(dtk)[j] = dk[j];
      REAL(dtx)[j] = dx[j];
    }
    SET_VECTOR_ELT(out, 3, dt);
  }

  /* summary, reduced serially (counts are integers: order-free) */
  int *pw = (int *)R_alloc((size_t)V + 1, sizeof(int));
  int *kw = (int *)R_alloc(nt1 * samples, sizeof(int));
  double *xw = (double *)R_alloc(nt1 * samples, sizeof(double));
  int *bucket = (int *)R_alloc(nt1 * samples, sizeof(int));
  svi_len nnz = lda_gibbs_summary(K, V, n_tok, samples, tok_word, tok_z, pw, kw, xw, iscr,
                                  iscr + K, bucket);
  SEXP sp = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)V + 1));
  n_prot++;
  SEXP sk = PROTECT(Rf_allocVector(INTSXP, nnz));
  n_prot++;
  SEXP sx = PROTECT(Rf_allocVector(REALSXP, nnz));
  n_prot++;
  for (int v = 0; v <= V; v++) INTEGER(sp)[v] = pw[v];
  for (svi_len j = 0; j < nnz; j++) {
    INTEGER(sk)[j] = kw[j];
    REAL(sx)[j] = xw[j];
  }
  SET_VECTOR_ELT(out, 0, sp);
  SET_VECTOR_ELT(out, 1, sk);
  SET_VECTOR_ELT(out, 2, sx);

  SEXP st_out = PROTECT(Rf_allocVector(REALSXP, GIBBS_NSTAT + 1));
  n_prot++;
  double *so = REAL(st_out);
  for (int i = 0; i < GIBBS_NSTAT; i++) so[i] = 0.0;
  for (int d = 0; d < x.D; d++)
    for (int i = 0; i < GIBBS_NSTAT; i++) so[i] += stats[GIBBS_NSTAT * (svi_len)d + i];
  so[GIBBS_NSTAT] = (double)n_tok;
  SET_VECTOR_ELT(out, 4, st_out);
  UNPROTECT(n_prot);
  return out;
}

/* The sparse lazy global step. batch = list(p, k, x) (K x V summary, not
 * yet scaled); rho the step size; mult = D / |B|; rescale_below the
 * threshold on the running product. Returns the new store. */
SEXP ffi_lda_global_gibbs(SEXP store, SEXP batch, SEXP rho_, SEXP mult_,
                          SEXP rescale_below_) {
  int n_prot = 0;
  SEXP eta0 = PROTECT(Rf_ScalarReal(1.0));
  n_prot++;
  gibbs_topics tw = topics_view(store, eta0);
  int K = tw.K, V = tw.V;
  svi_need_list(batch, 3, "batch");
  check_csc(VECTOR_ELT(batch, 0), VECTOR_ELT(batch, 1), VECTOR_ELT(batch, 2), K,
            "batch summary");
  const int *p1 = INTEGER(VECTOR_ELT(batch, 0)), *k1 = INTEGER(VECTOR_ELT(batch, 1));
  const double *x1 = REAL(VECTOR_ELT(batch, 2));
  if (XLENGTH(VECTOR_ELT(batch, 0)) != (R_xlen_t)V + 1)
    Rf_error("internal error: batch summary dimensions");
  double rho = svi_real_arg(rho_, 0, DBL_MAX, "rho"), mult = svi_real_arg(mult_, 0, DBL_MAX, "mult"),
         below = svi_real_arg(rescale_below_, 0, DBL_MAX, "rescale_below");
  double new_scale = tw.scale * (1.0 - rho);
  double a0, a1, out_scale;
  int keep_old;
  if (new_scale < below || !(new_scale > 0.0)) {
    /* rescale: store the true N* and reset the running product to 1 */
    a0 = new_scale;
    a1 = rho * mult;
    out_scale = 1.0;
    keep_old = new_scale > 0.0;
  } else {
    a0 = 1.0;
    a1 = rho * mult / new_scale;
    out_scale = new_scale;
    keep_old = 1;
  }
  svi_len nnz = lda_gibbs_merge_nnz(V, tw.p, tw.k, p1, k1, keep_old);
  if (nnz > 2147483647) Rf_error("internal error: too many topic-word non-zeros");
  SEXP out = PROTECT(svi_named_list(6, store_names));
  n_prot++;
  SEXP p = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)V + 1));
  n_prot++;
  SEXP k = PROTECT(Rf_allocVector(INTSXP, nnz));
  n_prot++;
  SEXP x = PROTECT(Rf_allocVector(REALSXP, nnz));
  n_prot++;
  SEXP tot = PROTECT(Rf_allocVector(REALSXP, K));
  n_prot++;
  lda_gibbs_merge(V, tw.p, tw.k, tw.x, a0, p1, k1, x1, a1, keep_old, INTEGER(p),
                  INTEGER(k), REAL(x));
  lda_gibbs_totals(K, V, INTEGER(p), INTEGER(k), REAL(x), REAL(tot));
  SET_VECTOR_ELT(out, 0, p);
  SET_VECTOR_ELT(out, 1, k);
  SET_VECTOR_ELT(out, 2, x);
  SET_VECTOR_ELT(out, 3, tot);
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(out_scale));
  /* the shared base decays with the stored values: folded like them on a
   * rescale (a0), dropped with them when rho = 1 */
  SET_VECTOR_ELT(out, 5, Rf_ScalarReal(keep_old ? a0 * tw.base : 0.0));
  UNPROTECT(n_prot);
  return out;
}

/* Dense K x V lambda = eta + scale * (base + x) from the store. */
SEXP ffi_lda_gibbs_materialise(SEXP store, SEXP eta) {
  gibbs_topics tw = topics_view(store, eta);
  /* (svi_table_alloc() refuses a K x V beyond R's vectors) */
  SEXP out = PROTECT(svi_table_alloc(tw.K, tw.V));
  lda_gibbs_materialise(&tw, REAL(out));
  UNPROTECT(1);
  return out;
}

/* Test hook: n draws of the sampler for one token of word w (0-based)
 * given the other tokens' topic counts ndk and topic 1's extra prior bg. */
SEXP ffi_lda_gibbs_draw(SEXP store, SEXP eta, SEXP alpha, SEXP ndk, SEXP w, SEXP n,
                        SEXP bg, SEXP seed) {
  gibbs_topics tw = topics_view(store, eta);
  svi_need_real(alpha, tw.K, "alpha");
  svi_need_int(ndk, tw.K, "ndk");
  int word = svi_int_arg(w, 0, tw.V - 1, "w");
  svi_len ndraw = (svi_len)svi_real_arg(n, 0, 1e7, "n");
  gibbs_prep pp;
  prepare(&tw, REAL(alpha), NULL, 1, &pp);
  svi_rng rng;
  svi_rng_init(&rng, svi_seed_from_r(seed), 0);
  int *iscr = (int *)R_alloc((size_t)4 * tw.K, sizeof(int));
  double *dscr = (double *)R_alloc(tw.K, sizeof(double));
  SEXP out = PROTECT(Rf_allocVector(REALSXP, tw.K));
  lda_gibbs_draw_many(&tw, &pp, INTEGER(ndk), word, ndraw, svi_real_arg(bg, 0, 1e300, "bg"),
                      &rng, iscr, dscr, REAL(out));
  UNPROTECT(1);
  return out;
}

/* The sparse store list(p, k, x, tot, scale = 1, base = 0) of a dense lambda, or NULL
 * when an entry is below eta (R raises the error). */
SEXP ffi_lda_gibbs_store_dense(SEXP lambda, SEXP eta_) {
  if (TYPEOF(lambda) != REALSXP || !Rf_isMatrix(lambda))
    Rf_error("internal error: lambda must be a double matrix");
  int K = Rf_nrows(lambda), V = Rf_ncols(lambda);
  double eta = Rf_asReal(eta_);
  SEXP p = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)V + 1));
  svi_len n = lda_gibbs_store_dense(REAL(lambda), K, V, eta, INTEGER(p), NULL, NULL, NULL);
  if (n < 0) {
    UNPROTECT(1);
    return R_NilValue;
  }
  if (n > INT_MAX) Rf_error("the store of lambda has more than 2^31 - 1 non-zeros");
  SEXP k = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)n));
  SEXP x = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)n));
  SEXP tot = PROTECT(Rf_allocVector(REALSXP, K));
  lda_gibbs_store_dense(REAL(lambda), K, V, eta, INTEGER(p), INTEGER(k), REAL(x), REAL(tot));
  SEXP res = PROTECT(svi_named_list(6, store_names));
  SET_VECTOR_ELT(res, 0, p);
  SET_VECTOR_ELT(res, 1, k);
  SET_VECTOR_ELT(res, 2, x);
  SET_VECTOR_ELT(res, 3, tot);
  SET_VECTOR_ELT(res, 4, Rf_ScalarReal(1.0));
  SET_VECTOR_ELT(res, 5, Rf_ScalarReal(0.0));
  UNPROTECT(5);
  return res;
}

/* The columns U (0-based words, an integer vector) of the store's topics
 * without the K x V table (the sparse kind of a fit, issue 33): mode 0
 * lambda (the values of ffi_lda_gibbs_materialise()), 1 beta = lambda over
 * its row sums, 2 the stored x alone. A fresh K x length(U) matrix. */
SEXP ffi_lda_gibbs_columns(SEXP store, SEXP eta, SEXP U, SEXP mode_) {
  gibbs_topics tw = topics_view(store, eta);
  int mode = svi_int_arg(mode_, 0, 2, "mode");
  if (TYPEOF(U) != INTSXP || XLENGTH(U) > INT_MAX) Rf_error("internal error: malformed U");
  int nU = (int)XLENGTH(U);
  const int *pu = INTEGER(U);
  for (int u = 0; u < nU; u++)
    if (pu[u] < 0 || pu[u] >= tw.V) Rf_error("internal error: word out of range");
  double *rs = (double *)R_alloc(tw.K, sizeof(double));
  lda_gibbs_row_sums(&tw, rs);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, tw.K, nU));
  lda_gibbs_columns(&tw, pu, nU, mode, rs, REAL(out));
  UNPROTECT(1);
  return out;
}

/* The n most probable words of each topic of the store (issue 33: terms()
 * of a sparse fit without its K x V table): list(word = n x K 1-based word
 * numbers, best first, ties by word order; lambda = their lambda; row_sums
 * = the K row sums of lambda). */
SEXP ffi_lda_gibbs_top(SEXP store, SEXP eta, SEXP n_) {
  gibbs_topics tw = topics_view(store, eta);
  int n = svi_int_arg(n_, 1, tw.V, "n");
  const char *names[] = {"word", "lambda", "row_sums"};
  SEXP out = PROTECT(svi_named_list(3, names));
  SEXP word = PROTECT(Rf_allocMatrix(INTSXP, n, tw.K));
  SEXP val = PROTECT(Rf_allocMatrix(REALSXP, n, tw.K));
  SEXP rs = PROTECT(Rf_allocVector(REALSXP, tw.K));
  int *fill = (int *)R_alloc(tw.K, sizeof(int));
  lda_gibbs_top(&tw, n, INTEGER(word), REAL(val), fill);
  int *pw = INTEGER(word);
  for (R_xlen_t i = 0; i < XLENGTH(word); i++) pw[i] += 1;
  lda_gibbs_row_sums(&tw, REAL(rs));
  SET_VECTOR_ELT(out, 0, word);
  SET_VECTOR_ELT(out, 1, val);
  SET_VECTOR_ELT(out, 2, rs);
  UNPROTECT(4);
  return out;
}

/* fit_lda(reuse_dead = TRUE) (issue 35): the store with the topics `dead`
 * (0-based, an integer vector) re-seeded: their entries dropped and the
 * seed's entries (list(p, k, x), a K x V CSC of the seed documents' counts,
 * only dead topics) put in their place as x = count / scale, so that
 * lambda = eta + scale (base + x) holds each seed document's counts on top
 * of the smoothing every topic shares. The other entries, scale and base
 * are kept; the totals are summed again. No K x V table. */
SEXP ffi_lda_gibbs_reseed(SEXP store, SEXP dead_, SEXP seed) {
  SEXP eta0 = PROTECT(Rf_ScalarReal(1.0));
  gibbs_topics tw = topics_view(store, eta0);
  int K = tw.K, V = tw.V;
  if (TYPEOF(dead_) != INTSXP) Rf_error("internal error: malformed dead topics");
  unsigned char *dead = (unsigned char *)R_alloc(K, 1);
  memset(dead, 0, K);
  const int *pd = INTEGER(dead_);
  for (R_xlen_t i = 0; i < XLENGTH(dead_); i++) {
    if (pd[i] < 0 || pd[i] >= K) Rf_error("internal error: dead topic out of range");
    dead[pd[i]] = 1;
  }
  svi_need_list(seed, 3, "seed");
  check_csc(VECTOR_ELT(seed, 0), VECTOR_ELT(seed, 1), VECTOR_ELT(seed, 2), K, "seed");
  if (XLENGTH(VECTOR_ELT(seed, 0)) != (R_xlen_t)V + 1)
    Rf_error("internal error: seed dimensions");
  const int *p1 = INTEGER(VECTOR_ELT(seed, 0)), *k1 = INTEGER(VECTOR_ELT(seed, 1));
  const double *x1 = REAL(VECTOR_ELT(seed, 2));
  for (int v = 0; v < V; v++)
    for (int j = p1[v]; j < p1[v + 1]; j++)
      if (!dead[k1[j]] || (j > p1[v] && k1[j] <= k1[j - 1]))
        Rf_error("internal error: malformed seed");
  if (!(tw.scale > 0.0)) Rf_error("internal error: store scale");
  double a1 = 1.0 / tw.scale;
  svi_len nnz = lda_gibbs_reseed(V, tw.p, tw.k, tw.x, dead, p1, k1, x1, a1, NULL, NULL, NULL);
  if (nnz > INT_MAX) Rf_error("internal error: too many topic-word non-zeros");
  SEXP out = PROTECT(svi_named_list(6, store_names));
  SEXP p = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)V + 1));
  SEXP k = PROTECT(Rf_allocVector(INTSXP, nnz));
  SEXP x = PROTECT(Rf_allocVector(REALSXP, nnz));
  SEXP tot = PROTECT(Rf_allocVector(REALSXP, K));
  lda_gibbs_reseed(V, tw.p, tw.k, tw.x, dead, p1, k1, x1, a1, INTEGER(p), INTEGER(k), REAL(x));
  lda_gibbs_totals(K, V, INTEGER(p), INTEGER(k), REAL(x), REAL(tot));
  SET_VECTOR_ELT(out, 0, p);
  SET_VECTOR_ELT(out, 1, k);
  SET_VECTOR_ELT(out, 2, x);
  SET_VECTOR_ELT(out, 3, tot);
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(tw.scale));
  SET_VECTOR_ELT(out, 5, Rf_ScalarReal(tw.base));
  UNPROTECT(6);
  return out;
}
