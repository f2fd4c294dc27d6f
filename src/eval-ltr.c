/* Left-to-right held-out evaluation (Wallach et al. 2009; Mimno, Hoffman &
 * Blei 2012, eq. 12). Topics are fixed at a point estimate beta (K x V,
 * word-major). Each document's tokens are put in a random order (a bag of
 * words has none); then, for each position i and each particle r,
 *   p_r(w_i) = sum_k (alpha_k + N_rk) / (i + sum_k alpha_k) beta_k,w_i,
 * after which particle r samples z_i proportional to the terms of that sum.
 * The document's score is sum_i log (1/R sum_r p_r(w_i)).
 *
 * Random numbers, in the order they are drawn (the R reference in the
 * tests consumes them the same way): document d uses stream stream0 + d;
 * first n - 1 uniforms shuffle its n tokens (Fisher-Yates from the end,
 * j = floor(u (i + 1))), then one uniform per (position, particle). */
#include <math.h>
#include "svi.h"

void eval_ltr(const svi_dtm *x, const double *beta, int K, const double *alpha,
              int particles, uint64_t seed, uint64_t stream0, int threads, int *iscr,
              svi_len iscr_per_thread, double *dscr, double *doc_ll, double *doc_n) {
  double asum = 0.0;
  for (int k = 0; k < K; k++) asum += alpha[k];
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (int d = 0; d < x->D; d++) {
    int tid = svi_thread_id();
    int *ndk = iscr + iscr_per_thread * tid; /* particles x K */
    int *words = ndk + (svi_len)particles * K;
    double *t = dscr + (svi_len)K * tid;
    svi_rng rng;
    svi_rng_init(&rng, seed, stream0 + (uint64_t)d);
    svi_len n = 0;
    for (int e = x->doc_ptr[d]; e < x->doc_ptr[d + 1]; e++) {
      int m = (int)floor(x->count[e] + 0.5);
      for (int r = 0; r < m; r++) words[n++] = x->term[e];
    }
    for (svi_len i = n - 1; i > 0; i--) {
      svi_len j = (svi_len)(svi_rng_unif(&rng) * (double)(i + 1));
      if (j > i) j = i;
      int tmp = words[i];
      words[i] = words[j];
      words[j] = tmp;
    }
    for (svi_len i = 0; i < (svi_len)particles * K; i++) ndk[i] = 0;
    double ll = 0.0;
    for (svi_len i = 0; i < n; i++) {
      const double *b = beta + (svi_len)K * words[i];
      double p = 0.0;
      for (int r = 0; r < particles; r++) {
        int *nr = ndk + (svi_len)r * K;
        double s = 0.0;
        for (int k = 0; k < K; k++) {
          t[k] = (alpha[k] + nr[k]) * b[k];
          s += t[k];
        }
        p += s / ((double)i + asum);
        double u = svi_rng_unif(&rng) * s, acc = 0.0;
        int z = K - 1;
        for (int k = 0; k < K; k++) {
          acc += t[k];
          if (u < acc) {
            z = k;
            break;
          }
        }
        nr[z]++;
      }
      ll += log(p / particles);
    }
    doc_ll[d] = ll;
    doc_n[d] = (double)n;
  }
}
