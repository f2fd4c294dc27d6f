/* SCVB0 kernels (lda-cvb0.c), used by the glue in lda-cvb0-ffi.c. */
#ifndef SPARSEVI_LDA_CVB0_H
#define SPARSEVI_LDA_CVB0_H
#include "svi.h"

typedef struct {
  int K;
  double alpha;
  double background;                /* topic 0's prior in document d is alpha +
                                       background N_d (0: plain LDA) */
  double doc_s, doc_tau, doc_kappa; /* document step schedule */
  int passes;                       /* burn-in passes + 1 */
  int shuffle;                      /* visit words in random order */
  int doc_start;                    /* NTheta's start: 0 random counts, 1 the topics'
                                       responsibilities, 2 uniform */
  int kernel;                       /* vector width, 0: automatic */
  int top_L;                        /* 0: dense summary; L (< K): each entry's L
                                       largest responsibilities (sparse) */
  int top_rest;                     /* sparse: 0 the L renormalised, 1 the L - 1
                                       largest and the rest on a sampled topic, 2
                                       the L largest and the rest in proportion to
                                       the word's topic column ("shape") */
} cvb0_settings;

int cvb0_kernel_width(int want);

/* The topics a local step reads: lambda = shift + scale X with X K x V
 * (shift 0, scale 1: lambda itself), 1 / tot_k, the batch's words w. */
typedef struct {
  const double *lambda;
  double shift, scale;
  const double *inv_tot;
  const int *w;
  int normalise; /* each column divided by its sum (the "topics" start) */
} cvb0_topics;
svi_len cvb0_thread_stride(int K);
svi_len cvb0_order_stride(int max_types);
void cvb0_step_table(const cvb0_settings *cs, int T, double *rho, double *log1m);
svi_len cvb0_scratch_size(const svi_dtm *x, const cvb0_settings *cs);
/* Where a batch's entries put their part of the summary (cvb0_summary_plan()). */
typedef struct {
  int R;         /* ranges of documents, one thread each */
  int *rdoc;     /* R + 1: range r holds documents rdoc[r] .. rdoc[r + 1] - 1 */
  int *dest;     /* nnz: 2 u (write column u), 2 u + 1 (add to it), else -(slot + 1) */
  int *xptr;     /* U + 1: column u's slots are xslot[xptr[u] .. xptr[u + 1]) */
  int *xslot;    /* nnz - U */
  double *extra; /* K doubles per slot */
} cvb0_plan;
/* The sparse summary (settings top_L = L < K, cvb0_sparse_plan()): each
 * entry's L topics and values (all K in a full column of the shape form),
 * then per column the sums over its entries in entry order, at most
 * min(K, L x its entries) topics each; the shape form also sums its
 * entries' tail weights per column. */
typedef struct {
  svi_len *eoff;  /* nnz + 1: entry e's topics and values at tk, tv + eoff[e] */
  int *tk;        /* eoff[nnz]: each entry's topics (-1: none) */
  double *tv;     /* eoff[nnz]: their values */
  double *tc;     /* nnz: the shape form's tail weights (else NULL) */
  double *r;      /* U: their sums per column, in entry order (else NULL) */
  int *full;      /* U: the shape form's full columns (L x entries >= K; else NULL) */
  double *fullacc; /* K x U: on one thread, the full columns' sums, added as the
                      documents run in order (their entries then hold no slots);
                      NULL on several threads (each entry holds K slots) */
  int *il;        /* threads x (L + K): scratch, the last K of each all 0 */
  int *cptr;      /* U + 1: column u's entries are cent[cptr[u] .. cptr[u + 1]) */
  int *cent;      /* nnz: entries by column, increasing */
  svi_len *cap;   /* U + 1: room of column u: ok, ov + cap[u] */
  int *ok;        /* cap[U]: each column's topics, increasing */
  double *ov;     /* cap[U]: their sums */
  int *nz;        /* U: topics of each column */
  double *acc;    /* threads x K: scratch */
  int *mark;      /* threads x K: scratch */
  int *touched;   /* threads x K: scratch */
} cvb0_sparse;
svi_len cvb0_sparse_plan(svi_len nnz, const int *ecol, int U, int K, int L, int shape,
                         int direct, int *cptr, int *cent, svi_len *cap, svi_len *eoff,
                         int *full);
void cvb0_shape_columns(int K, const cvb0_topics *tp, int U, const int *p, const int *k,
                        const double *v, const double *r, double *x, int threads);
/* One column of cvb0_shape_columns() at a time (store_update_fill()). */
typedef struct {
  int K, U;
  const cvb0_topics *tp;
  const int *p, *k;
  const double *v, *r;
} cvb0_shape_ctx;
void cvb0_shape_fill(const void *ctx, int u, double *out);
int cvb0_summary_plan(const svi_dtm *x, const int *ecol, int U, int R, int max_slots,
                      int *rdoc, int *dest, int *xptr, int *xslot, int *first);
void cvb0_local(const svi_dtm *x, const cvb0_topics *tp, double *P, const int *ecol, int U,
                const cvb0_settings *cs, uint64_t seed, uint64_t stream_base, int threads,
                double *theta, double *summary, const cvb0_plan *plan,
                const cvb0_sparse *sp, double *tables, double *g_all, int *order_all);
void cvb0_global(int K, int V, const double *lambda, const double *tot, double eta,
                 double rho, double scale, int U, const int *w, const double *val,
                 int threads, double *lambda_new, double *tot_new);
#endif
