/* Gibbs sampling within stochastic VI (Mimno, Hoffman & Blei 2012): the
 * sparse topic-word store and the kernels that read and update it.
 * Kernels only: no R API here. */
#ifndef SPARSEVI_LDA_GIBBS_H
#define SPARSEVI_LDA_GIBBS_H

#include "svi.h"

#define GIBBS_NSTAT 5

/* The topic-word parameters, stored sparse and word-major (the layout of a
 * K x V dgCMatrix): lambda_kv = eta + scale * (base + x_kv), where x holds
 * the non-smoothing part N*_kv divided by the running product
 * scale = prod_t (1 - rho_t), and base >= 0 is a part shared by every
 * (topic, word) pair (the uniform base of the Bregman start, issue 20; 0
 * otherwise), decayed with the stored values. Column v (word v) holds its
 * non-zero topics k[p[v] .. p[v+1]) in increasing order;
 * tot[k] = sum_v x_kv (without the base). */
typedef struct {
  int K, V;
  /* the vocabulary size the smoothing counts (V eta): V, unless the store
   * holds a cluster worker's columns of a larger vocabulary */
  double vocab;
  const int *p;
  const int *k;
  const double *x;
  const double *tot;
  double scale, eta, base;
} gibbs_topics;

/* Per-batch precomputation of the parts of the sampling normaliser. Eq. 15
 * of the paper splits (alpha_k + N_dk) exp(E log beta_kw) into a smoothing
 * part and a word part over the topics with N*_kw > 0; each is split once
 * more by alpha_k + N_dk (as in SparseLDA), so that only the parts that
 * involve N_dk change within a document:
 *     alpha_k e0 c_k      alpha part, constant per batch (binary search in K)
 *   + N_dk e0 c_k         document part, over the topics of the document
 *   + alpha_k d_kw        word-alpha part, constant per batch (binary search
 *                         in the word's non-zeros)
 *   + N_dk d_kw           word-document part, over the topics both in the
 *                         document and among the word's non-zeros
 * with c_k = exp(-psi(V eta + sum_v N*_kv)), e0 = exp(psi(eta)) and
 * d_kw = c_k (exp(psi(eta + N*_kw)) - e0) > 0 where N*_kw > 0. With a
 * shared base b (lambda = eta + scale (b + x)), eta reads eta + scale b
 * throughout: the smoothing part stays shared by all pairs, so the base
 * costs nothing per draw. */
typedef struct {
  int K;
  double e0;
  double *c;         /* K */
  double *cum_alpha; /* K: cumulative sums of alpha_k e0 c_k */
  double A;          /* sum_k alpha_k e0 c_k */
  double *d;         /* one per stored non-zero (set for words in the batch) */
  double *cum_wa;    /* one per stored non-zero: cumulative alpha_k d_kw in the word */
  const double *alpha;
  double background; /* b: topic 1's prior is alpha_1 + b N_d in a document of
                        N_d tokens (0: none), a fifth part of the conditional */
} gibbs_prep;

/* Fills pp (arrays allocated by the caller: c, cum_alpha of K; d, cum_wa
 * of nnz).
 * used[v] != 0 marks the words whose d is needed (NULL: all words). */
void lda_gibbs_prepare(const gibbs_topics *tw, const double *alpha,
                       const unsigned char *used, int threads, gibbs_prep *pp);

/* The local step on a batch. Tokens of document d occupy positions
 * tok_off[d] .. tok_off[d+1] of tok_word / zcur; saved sweep s writes its
 * topics to tok_z[s * n_tok + position]. Scratch: iscr of threads * 4K ints,
 * dscr of threads * K doubles. stats (GIBBS_NSTAT x D) per document: draws
 * from the word-document, word-alpha, document and alpha parts, and the
 * entries visited to form the word-document part. The documents of block b
 * (SVI_BLOCK documents) draw in turn from stream stream0 + b; documents run
 * in parallel. doc_rng and doc_end hold D states each (scratch). Returns 0,
 * or -1 if a document drew another number of uniforms than its token count
 * implies (an internal error). */
int lda_gibbs_local(const svi_dtm *x, const gibbs_topics *tw, const gibbs_prep *pp,
                     int burnin, int samples, uint64_t seed, uint64_t stream0,
                     int threads, const svi_len *tok_off, int *tok_word, int *zcur,
                     int *tok_z, int *iscr, double *dscr,
                     double *stats, svi_rng *doc_rng, svi_rng *doc_end);

/* The documents' topic counts averaged over the saved sweeps, from the
 * saved draws tok_z, as a sparse K x D matrix (CSC, document-major,
 * topics increasing): p (D+1), k and x with room for min(K, samples *
 * n_tok) entries. O(samples * n_tok), not O(K D): at K = 10,000 a dense
 * K x D block was 80 KB per document. Scratch: cnt and touched of K ints.
 * Returns the number of non-zeros. */
svi_len lda_gibbs_doc_topic(int K, int D, svi_len n_tok, int samples, const svi_len *tok_off,
                            const int *tok_z, int *p, int *k, double *x, int *cnt,
                            int *touched);

/* Counts the saved draws into a sparse K x V summary (CSC, word-major):
 * p (V+1), k and x (values count / samples) with room for samples * n_tok
 * entries. Scratch: cnt and touched of K ints, bucket of samples * n_tok
 * ints. Returns the number of non-zeros. */
svi_len lda_gibbs_summary(int K, int V, svi_len n_tok, int samples, const int *tok_word,
                          const int *tok_z, int *p, int *k, double *x, int *cnt,
                          int *touched, int *bucket);

/* Test hook: n draws for one token of word w in a document whose other
 * tokens have topic counts ndk (K), topic 1's extra prior being bg;
 * counts[k] receives how often topic k was drawn. Uses the same sampler as
 * lda_gibbs_local. */
void lda_gibbs_draw_many(const gibbs_topics *tw, const gibbs_prep *pp, const int *ndk,
                         int w, svi_len n, double bg, svi_rng *rng, int *iscr, double *dscr,
                         double *counts);

/* ---- the sparse lazy global step (lda-gibbs-global.c) ---- */
/* Number of non-zeros of the union of two word-major patterns (only the
 * new pattern when keep_old is 0). */
svi_len lda_gibbs_merge_nnz(int V, const int *p0, const int *k0, const int *p1,
                            const int *k1, int keep_old);
/* x = a0 * x0 + a1 * x1 over the union pattern (only x1's pattern when
 * keep_old is 0); writes p (V+1), k, x. */
void lda_gibbs_merge(int V, const int *p0, const int *k0, const double *x0, double a0,
                     const int *p1, const int *k1, const double *x1, double a1,
                     int keep_old, int *p, int *k, double *x);
/* tot[k] = sum_v x_kv, in word order. */
void lda_gibbs_totals(int K, int V, const int *p, const int *k, const double *x,
                      double *tot);
/* Re-seeding dead topics (fit_lda(reuse_dead = TRUE)): the store (p0, k0,
 * x0) without the entries of the topics with dead[k] != 0, merged with the
 * seed entries (p1, k1, x1; word-major, topics increasing within a word,
 * only dead topics) times a1. Counts the entries when k is NULL (p unused),
 * else writes p (V+1), k and x. Returns the number of entries. */
svi_len lda_gibbs_reseed(int V, const int *p0, const int *k0, const double *x0,
                         const unsigned char *dead, const int *p1, const int *k1,
                         const double *x1, double a1, int *p, int *k, double *x);
/* The store of a dense K x V lambda (base 0). */
svi_len lda_gibbs_store_dense(const double *lambda, int K, int V, double eta, int *p, int *k,
                              double *x, double *tot);
/* Dense lambda (K x V, word-major) = eta + scale * (base + x). */
void lda_gibbs_materialise(const gibbs_topics *tw, double *lambda);

/* ---- reading the store without a dense K x V table (the sparse kind of a
 * fit's topics, issue 33; lda-gibbs-global.c) ---- */
/* rs[k] = the row sums of lambda, vocab (eta + scale base) + scale tot[k]. */
void lda_gibbs_row_sums(const gibbs_topics *tw, double *rs);
/* The columns U[0..nU) (0-based words) of lambda (mode 0, the values of
 * lda_gibbs_materialise()), of beta = lambda / rs (mode 1) or of the stored
 * x alone (mode 2), into out (K x nU, word-major). */
void lda_gibbs_columns(const gibbs_topics *tw, const int *U, int nU, int mode,
                       const double *rs, double *out);
/* The n (<= V) words of each topic with the largest lambda, best first, ties
 * by word order (as order(-lambda[k, ]) gives): word and val (n x K,
 * 0-based words, their lambda). Scratch: fill of K ints. O(nnz log n + K n^2). */
void lda_gibbs_top(const gibbs_topics *tw, int n, int *word, double *val, int *fill);

/* ---- evaluators of the same paper (eval-ltr.c, eval-umass.c) ---- */
void eval_ltr(const svi_dtm *x, const double *beta, int K, const double *alpha,
              int particles, uint64_t seed, uint64_t stream0, int threads, int *iscr,
              svi_len iscr_per_thread, double *dscr, double *doc_ll, double *doc_n);
void eval_umass(const svi_dtm *x, const int *top, int n, int K, int *slot, svi_len *lptr,
                int *docs, svi_len *fill, double *score, int *skipped);

#endif
