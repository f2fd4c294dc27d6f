/* Kernels of the LDA engine shared by lda-vb.c, lda-global.c,
 * eval-completion.c and the glue in lda-vb-ffi.c, lda-global-ffi.c and
 * eval-ffi.c. No R API here. */
#ifndef SPARSEVI_LDA_H
#define SPARSEVI_LDA_H

#include "svi.h"

/* Settings of the "vb" local step (notes/math.md §2). */
typedef struct {
  int K;             /* topics */
  int L;             /* sparsity level; L >= K is the dense step */
  int max_iter;      /* iterations per document (100) */
  int select_every;  /* 1: select on every iteration (tests); 0: iterations
                        1-5 and every 10th; 2 (internal): restart proposal */
  int restart_max;   /* restart proposals per document; 0 = off */
  int restart_iter;  /* forward iterations of one proposal */
  int want_objective;/* compute each document's objective terms */
  double alpha;      /* document-topic smoothing */
  double background; /* b: topic 1's prior is alpha + b N_d in a document of
                        N_d words (0: none; notes/math.md §2) */
  double tol;        /* convergence: max |change of N_dk| (0.05) */
  double active_eps; /* a topic is active in a document while N_dk > eps */
  const double *warm; /* K x D: each document's start N_dk (its state of the
                         previous lap); NULL, or a document whose column is
                         all 0, starts fresh */
} lda_vb_opts;

/* The summary of an L-sparse batch kept by word, O(entries x L) memory
 * instead of a dense K x Vb accumulator: entry e of the batch (document
 * order) owns the L slots from L * slot[e], where slot[] numbers the entries
 * word by word (batch-local word order, documents in order within a word).
 * The local step writes each entry's selected topics and n_dv r_dvk there;
 * lda_vb_word_sums() then adds them up word by word in document order, the
 * order of the dense accumulator, so the sums are the same doubles. */
typedef struct {
  int *slot;     /* entries: the entry's rank in word order */
  int *word_ptr; /* Vb + 1: the first slot rank of each word */
  int *nsel;     /* entries (by slot rank): topics kept */
  int *idx;      /* entries x L: their topics */
  double *val;   /* entries x L: n_dv r_dvk */
} lda_vb_wordsum;

/* Outputs of a batch; any pointer may be NULL when not wanted. */
typedef struct {
  double *doc_topic; /* K x D: N_dk */
  double *acc;       /* K x Vb accumulator of the summary (batch-local words):
                        sparse: S itself; dense: sum_d (n_dv / Z_dv) ep_dk,
                        to be multiplied by eb afterwards */
  lda_vb_wordsum *ws; /* the sparse step's summary by word instead of acc
                         (acc must then be NULL) */
  double *doc_obj;   /* D: entropy + Dirichlet terms of the ELBO (H_d) */
  int *iters;        /* D: iterations of the accepted solution */
  int *tries;        /* D: restart proposals tried */
  int *accepts;      /* D: restart proposals accepted */
} lda_vb_out;

/* Topic weights of the words of a batch. For each batch-local word w (global
 * term words[w]), le[w*K + k] = Elogb_kv - max_k Elogb_kv and eb = exp(le).
 * le may be NULL: only the dense step's objective reads it (lda_vb_needs_le),
 * and a K x Vb table less matters at large K.
 * mode 0: Elogb from Dirichlet parameters lambda = eta + scale X (K x V,
 * word-major; lambda itself: eta = 0, scale = 1), whose row sums are
 * V eta + scale xtot (xtot NULL: summed here, as lda_topic_totals()). Only
 * the batch's words are read, so over the lazy store of the global steps
 * (R/lda-global.R) a minibatch costs O(K x its vocabulary), not O(K V).
 * mode 1: Elogb = log(X) for a topic-word matrix beta = X (K x V); eta,
 * scale and xtot are not read. */
void lda_topic_weights(const double *X, int K, int V, const int *words, int Vb, int mode,
                       double eta, double scale, const double *xtot, int threads,
                       double *le, double *eb);

/* Whether the local step reads le (the dense step's objective terms). */
static inline int lda_vb_needs_le(const lda_vb_opts *o) {
  return o->L >= o->K && o->want_objective;
}

/* Slots of the by-word summary for the entries of x (loc: their batch-local
 * words): fills ws->slot and ws->word_ptr (R_alloc'd by the caller). */
void lda_vb_wordsum_slots(const svi_dtm *x, const int *loc, int Vb, lda_vb_wordsum *ws);
/* Sums of the by-word summary of word w into row (K, zero on entry), listing
 * the topics touched in touched[] (distinct, increasing); returns their
 * number. mark is K ints, zero on entry and on return. */
int lda_vb_word_sums(const lda_vb_wordsum *ws, int L, int w, double *row, int *touched,
                     int *mark);

/* Runs the local step over every document of x. loc[e] is the batch-local
 * word index of entry e of x. Returns 0 on success. */
int lda_vb_batch(const svi_dtm *x, const int *loc, int Vb, const double *eb,
                 const double *le, const lda_vb_opts *o, int threads, lda_vb_out *out);

/* Document completion: per-document held-out log-likelihood and tokens. */
void lda_completion(const svi_dtm *obs, const svi_dtm *held, const double *beta,
                    const lda_vb_opts *o, int threads, double *ll, double *ntok);

/* Global-step kernels (lda-global.c). */
/* out = in + sign * S for a sparse K x V summary (CSC over words). */
void lda_add_sparse(double *out, int K, int V, const int *p, const int *i, const double *x,
                    double sign);
/* lambda = eta + max(S, 0) */
/* tot[k] = sum_v lambda_kv (K x V word-major), summed serially in word order
 * (the same sums for any number of threads). */
void lda_topic_totals(const double *lambda, int K, int V, double *tot);
void lda_lambda_from_stats(double *lambda, const double *S, svi_len n, double eta);
/* Topic terms of the ELBO (everything but the documents' H_d). */
/* Near-uniform random topics (lda-init.c): n entries of eta + a Gamma(100,
 * 100) quantile of a uniform of r. */
void lda_init_gamma100(double *out, svi_len n, double eta, svi_rng *r);
/* Empirical Bayes eta (lda-eb.c): Minka's fixed point on the Polya
 * likelihood of the K x V expected counts S; returns eta, sets *iters. */
double lda_eb_eta(const double *S, int K, int V, double eta, int max_iter, double tol,
                  int *iters);
double lda_elbo_topics(const double *lambda, const double *S, int K, int V, double eta,
                       int threads);

#endif
