/* OPE kernels (lda-ope.c): Than & Doan's online MAP estimation of topic
 * mixtures, the batch summaries of its learners and the ML-OPE update. */
#ifndef SPARSEVI_LDA_OPE_H
#define SPARSEVI_LDA_OPE_H

#include "svi.h"

typedef struct {
  int K;        /* topics */
  int T;        /* iterations of Algorithm 1 */
  double alpha; /* Dirichlet prior of the topic mixture */
  double eps;   /* interior margin of the simplex, 0 < eps < 1 / K */
  double background; /* b: topic 1's prior is alpha + b N_d in a document
                        of N_d words (0: none) */
} ope_opts;

/* One document: theta (K) from OPE; x (n) and grad (K) are scratch. Returns
 * the final objective f(theta); *f_start (if not NULL) gets f(theta_1). */
double ope_doc(const ope_opts *o, const double *beta, const double *colsum,
               const int *term, const double *count, int n, svi_rng *r, double *theta,
               double *x, double *grad, double *f_start);

/* The normalised topics at a batch's words: beta (K x Vb) with beta_kw =
 * (offset + scale X_k,words[w]) inv_tot[k], and colsum[w] = sum_k beta_kw.
 * offset 0, scale 1 and inv_tot the inverse totals of X give the rows of X
 * normalised at those words. */
void ope_batch_topics(const double *X, int K, const int *words, int Vb, double offset,
                      double scale, const double *inv_tot, double *beta, double *colsum);
/* OPE for every document of x; the documents of block b (SVI_BLOCK
 * documents) draw in turn from stream stream0 + b, and documents run in
 * parallel. theta is K x D. scratch holds threads * (max_nnz + K) doubles,
 * max_nnz the most distinct words of a document; doc_rng and doc_end hold D
 * states each. Returns 0, or -1 if a document drew another number of
 * uniforms than K + T (an internal error). */
int lda_local_ope(const svi_dtm *x, const double *beta, const double *colsum,
                  const ope_opts *o, uint64_t seed, uint64_t stream0, int threads,
                  double *theta, double *f_start, double *f_end, double *scratch,
                  int max_nnz, svi_rng *doc_rng, svi_rng *doc_end);


/* Word-major (CSC) copy of x: word v's documents are col_doc[col_ptr[v] ..
 * col_ptr[v+1]) in increasing order with counts col_count. col_ptr has V+1. */
void ope_transpose(const svi_dtm *x, int *col_ptr, int *col_doc, double *col_count);

enum { OPE_SUMMARY_THETA = 1, OPE_SUMMARY_PHI = 2 };

typedef struct {
  int K, V;
  const int *col_ptr, *col_doc;
  const double *col_count;
  const double *theta; /* K x D */
  const double *beta;  /* K x V word-major, normalised topics */
} ope_summary_in;

/* Batch summary, K x V word-major: mode THETA gives S_kv = sum_d n_dv theta_dk
 * (ML-OPE, eq. 21); mode PHI gives S_kv = sum_d n_dv phi_dvk with phi_dvk
 * proportional to theta_dk beta_kv (Online- and Streaming-OPE, eq. 22).
 * S may be in->beta itself (written over, column by column). scratch holds
 * threads * K doubles. */
void lda_summary_ope(const ope_summary_in *in, int mode, int threads, double *S,
                     double *scratch);

/* Sparse summaries (fit_lda(L = ) with L < K): each document keeps L
 * topics, in increasing topic order, with weights (ties: the lower topic
 * first). rest = 0: the topics of its L largest proportions, divided by
 * their sum. rest = 1: its L - 1 largest proportions as they are, and the
 * rest of the mass on one topic drawn from the others in proportion to
 * theta (document d draws one uniform from stream `stream` + d of `seed`):
 * the summary is unbiased. theta is K x D; top_k and top_w get L values per
 * document; taken is K ints of scratch. */
void ope_doc_top(const double *theta, int K, int D, int L, int rest, uint64_t seed,
                 uint64_t stream, int *top_k, double *top_w, int *taken);

/* The shape form of the sparse summaries (fit_lda(L = ), sparse_rest 2):
 * document d keeps its L largest proportions (ties: the lower topic first),
 * in increasing topic order, as their excess top_w over base[d], the mean
 * of its other K - L proportions: theta_d with those replaced by their mean
 * is base_d on every topic plus the excess on its L. OPE starts each
 * document at a random point and keeps 1 / (T + 1) of it, so the others are
 * that start's remnant: noise about their mean. taken is K ints of
 * scratch. */
void ope_doc_shape(const double *theta, int K, int D, int L, int *top_k, double *top_w,
                   double *base, int *taken);

/* The batch summary of lda_summary_ope() from the documents' top L topics
 * instead of all K, with weights w_dk (ope_doc_top() or ope_doc_shape()):
 * without base (NULL), mode THETA S_kv = sum_d n_dv w_dk, mode PHI S_kv =
 * sum_d n_dv phi_dvk with phi_dvk proportional to w_dk beta_kv over the
 * document's L topics. With base (the shape form, ope_doc_shape()) the
 * proportions are base_d on every topic plus w_dk on its L: word v's column
 * is then out_r[v] times a weight column plus its sparse sums, the weights
 * 1 / K on every topic in mode THETA, the word's topic column beta_kv /
 * colsum[v] in mode PHI (phi_dvk proportional to (base_d + w_dk) beta_kv
 * over all K topics): exact for those proportions. Word v's distinct
 * topics (increasing) and their sums go to out_k, out_v from cap[v]
 * (cap[v + 1] - cap[v] >= its distinct topics, e.g. min(K, L x its
 * documents)), their number to out_n[v]; out_r (V, with base only) its
 * tail weight. scratch holds threads * K doubles, marks threads * 2K ints. */
void lda_summary_ope_sparse(const ope_summary_in *in, int mode, const int *top_k,
                            const double *top_w, const double *base, const double *colsum,
                            int L, int threads, const svi_len *cap, int *out_k, double *out_v,
                            int *out_n, double *out_r, double *scratch, int *marks);

/* In place, each row of X (K x V, word-major) divided by its sum f_k:
 * r_sums = 1 sums as R's rowSums() does (long double, word after word),
 * 0 as lda_topic_totals() (double); divide = 1 gives x / f_k (R's
 * X / rowSums(X)), 0 gives x * (f_k > 0 ? 1 / f_k : 0). acc holds K long
 * doubles, f K doubles (on return: the sums, or their inverses). */
void ope_rows_normalise(double *X, int K, svi_len V, int r_sums, int divide,
                        long double *acc, double *f);

/* ML-OPE: out = (1 - rho) beta + rho beta_hat, beta_hat the rows of S
 * normalised (eq. 21). beta's rows sum to 1. rowsum_scratch holds K. */
void lda_global_ml(const double *beta, const double *S, int K, int V, double rho,
                   double *out, double *rowsum_scratch);
#endif
