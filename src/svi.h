/* Shared infrastructure of sparsevi: special functions, top-L selection,
 * per-block random streams and the block layout every engine uses.
 * Kernels include this header only; it pulls in no R API. */
#ifndef SPARSEVI_SVI_H
#define SPARSEVI_SVI_H

#include <stddef.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Documents (or data points) are processed in blocks of this many. A block,
 * never a thread, owns a random stream and a partial sum, and partial sums
 * are reduced in block order, so results do not depend on the thread count. */
#define SVI_BLOCK 64

/* An OpenMP simd loop (ignored without OpenMP): GCC's -O2 leaves loops of a
 * run-time length scalar. For element-wise loops and loops whose lanes are
 * independent (points, topics), so the bits do not change with the vector
 * width; never for a reduction whose order sets the result. */
#ifdef _OPENMP
#define SVI_SIMD _Pragma("omp simd")
#else
#define SVI_SIMD
#endif

/* Sizes and offsets that can exceed 2^31. */
typedef ptrdiff_t svi_len;

/* Asks for the n doubles at p (one topic column: a K x V table's columns
 * sit far apart, so the hardware does not fetch the next one) to be
 * brought into every level of cache, for reading (write 0) or writing
 * (1). Into every level: with a non-temporal hint, which fetches past the
 * caches, SCVB0's default call at K = 1000 over 60,000 wikipara paragraphs
 * took 21.1 s on one thread instead of 15.7 s (inst/bench/results/scale.txt). */
#if defined(__GNUC__) || defined(__clang__)
#define SVI_PREFETCH_COLUMN(p, n, write)                                          \
  do {                                                                            \
    const char *svi_pf_ = (const char *)(p);                                      \
    for (size_t svi_off_ = 0; svi_off_ < sizeof(double) * (size_t)(n); svi_off_ += 64) \
      __builtin_prefetch(svi_pf_ + svi_off_, (write), 3);                         \
  } while (0)
#else
#define SVI_PREFETCH_COLUMN(p, n, write) ((void)(p), (void)(n))
#endif

/* ---- special functions (special.c) ---- */
double svi_digamma(double x);
double svi_lgamma(double x);
/* exp of n values in place (libm; see special.c for why). */
void svi_exp_inplace(double *x, svi_len n);
double svi_exp(double x);

/* ---- top-L selection (select.c) ---- */
/* Writes into idx[0..L-1] the indices of the L largest of w[0..K-1], in no
 * particular order. idx must have room for K entries (it is used as scratch).
 * Ties are broken consistently (lower index first among equals at the
 * threshold), so the result is deterministic. */
void svi_select_top(const double *w, int K, int L, int *idx);
/* Orders idx[0..L-1] by decreasing w, lower index first among equals (the
 * order svi_select_top() selects by), in O(L log L) without extra memory. */
void svi_sort_top(const double *w, int *idx, int L);
/* The indices of the L largest of w[0..K-1] in that order (svi_select_top()
 * then svi_sort_top(), the same result), faster when L is small. idx must
 * have room for K entries. */
void svi_top_sorted(const double *w, int K, int L, int *idx);
/* The n largest entries of each row of the K x V column-major matrix m,
 * each divided by its row's rdiv[k] and then by its column's div[v] (when
 * not NULL), larger first and the lower column first among equal values
 * (1 <= n <= V): row k's 0-based columns in idx[k n .. k n + n). One pass
 * over m in memory order, each row keeping a heap of n; hv is K n doubles
 * of scratch. */
void svi_top_rows(const double *m, const double *rdiv, const double *div, int K,
                  svi_len V, int n, int *idx, double *hv);
/* Softmax of w over the L indices idx; writes r[0..L-1] and returns the
 * log normaliser log sum_j exp(w[idx[j]]). */
double svi_softmax_sub(const double *w, const int *idx, int L, double *r);

/* ---- random streams (rng.c) ---- */
/* xoshiro256++ seeded by splitmix64 from (seed, stream); one per block. */
typedef struct {
  uint64_t s[4];
} svi_rng;

void svi_rng_init(svi_rng *r, uint64_t seed, uint64_t stream);
/* splitmix64's finaliser: every bit of z moves every bit of the result
 * (the streams' seeding; dtm-ffi.c's corpus fingerprint). */
uint64_t svi_mix64(uint64_t z);
uint64_t svi_rng_next(svi_rng *r);
/* Uniform on the open interval (0, 1). */
double svi_rng_unif(svi_rng *r);
/* Uniform integer in 0..n-1 (n >= 1), without modulo bias. */
uint64_t svi_rng_int(svi_rng *r, uint64_t n);
/* Start state of each document in its block's stream (rng.c), the blocks
 * shared by the threads of a job of the package's threads (pool.h) through
 * the counter *next (0 before the job). And the check, after the run, that
 * the counted draws were exact (0, else -1). */
void svi_doc_stream_starts(int D, uint64_t seed, uint64_t stream0,
                           uint64_t (*draws)(int, const void *), const void *ctx,
                           svi_rng *doc_rng, int *next);
int svi_doc_streams_check(int D, const svi_rng *start, const svi_rng *end);

/* ---- the document-term view every kernel reads ---- */
/* Documents in rows, CSR: the distinct terms of document d are
 * term[doc_ptr[d] .. doc_ptr[d+1]) (0-based) with counts count[...]. */
typedef struct {
  int D, V;
  const int *doc_ptr;
  const int *term;
  const double *count;
} svi_dtm;

/* The distinct words of a batch (batch-words.c): its nnz entries' terms
 * (in [0, V)) give the U distinct words, increasing, in wlist (room for
 * min(V, nnz)) and each entry's index into them in ecol (nnz). marks: NULL
 * or a V-long int table of any content (kept by R for the session: the
 * search is then O(nnz)). Returns U. */
int svi_batch_words(const int *term, svi_len nnz, int V, int *marks, int *ecol, int *wlist);

/* ---- thread helpers ---- */
static inline int svi_thread_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* Non-jumping interrupt check (svi-ffi.c): 1 if the user asked to interrupt.
 * Main thread only, never inside an OpenMP region. Lets a kernel stop at
 * its last complete state instead of unwinding through R's longjmp. */
int svi_interrupt_pending(void);

static inline svi_len svi_n_blocks(svi_len n) { return (n + SVI_BLOCK - 1) / SVI_BLOCK; }

/* Dot product with four partial sums combined as (s0 + s1) + (s2 + s3), so
 * that several multiply-adds are in flight (a single running sum is
 * latency-bound; R builds with -O2). One fixed order: identical bits
 * wherever it is used. */
static inline double svi_dot4(const double *a, const double *b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; k++) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

#endif
