/* Document completion (Hughes & Sudderth App. E; notes/math.md §7): fit a
 * document's topic proportions on its observed words with the topics fixed
 * at a point estimate beta (dense VB local step), then score its held-out
 * words by ln sum_k theta_k beta_kv. */
#include <math.h>
#include <string.h>
#include <R_ext/Memory.h>
#include "lda.h"

void lda_completion(const svi_dtm *obs, const svi_dtm *held, const double *beta,
                    const lda_vb_opts *o, int threads, double *ll, double *ntok) {
  int K = o->K, V = obs->V, D = obs->D;
  svi_len nnz = obs->doc_ptr[D];
  int *words = (int *)R_alloc(V > 0 ? V : 1, sizeof(int));
  int *loc = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  int Vb = svi_batch_words(obs->term, nnz, V, NULL, loc, words);
  /* le (a second K x Vb table) only if the step reads it */
  double *le = lda_vb_needs_le(o) ? (double *)R_alloc((size_t)K * (Vb > 0 ? Vb : 1), sizeof(double))
                                  : NULL;
  double *eb = (double *)R_alloc((size_t)K * (Vb > 0 ? Vb : 1), sizeof(double));
  lda_topic_weights(beta, K, V, words, Vb, 1, 0.0, 1.0, NULL, threads, le, eb);
  double *N = (double *)R_alloc((size_t)K * (D > 0 ? D : 1), sizeof(double));
  lda_vb_out out;
  memset(&out, 0, sizeof(out));
  out.doc_topic = N;
  lda_vb_batch(obs, loc, Vb, eb, le, o, threads, &out);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int d = 0; d < D; d++) {
    const double *Nd = N + (size_t)d * K;
    double tot = 0;
    for (int k = 0; k < K; k++) tot += Nd[k];
    double denom = K * o->alpha + tot;
    double s = 0, n = 0;
    for (int e = held->doc_ptr[d]; e < held->doc_ptr[d + 1]; e++) {
      const double *b = beta + (svi_len)held->term[e] * K;
      double p = 0;
      for (int k = 0; k < K; k++) p += (o->alpha + Nd[k]) * b[k];
      p /= denom;
      s += held->count[e] * log(p > 1e-300 ? p : 1e-300);
      n += held->count[e];
    }
    ll[d] = s;
    ntok[d] = n;
  }
}
