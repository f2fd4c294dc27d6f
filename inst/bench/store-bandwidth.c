/* The SCVB0 store update's memory traffic outside R (issue 34; see the
 * "store" part of inst/bench/threads.R and its reading in
 * results/scale.txt). K = 1000 topics, a V = 129,289 table (2 MB pages
 * asked for, as src/table.c does), minibatches of U = 2,500 words, 20
 * different summaries in turn. Three forms of X[, w] += c S and the row sums
 * of S, each timed on 1 and 2 threads:
 *   0  one pass (src/lda-store.c's one-thread form): per word, the column,
 *      then the row sums;
 *   1  src/lda-store.c's threaded form: the columns by words (dynamic, 16),
 *      then the row sums by blocks of topics (S is read twice);
 *   2  the threads take halves of the topics, each a pass over every word
 *      (S read once; the row sums in word order, so the same bits on any
 *      number of threads).
 * Build and run from the package root, with R's flags and with the
 * machine's own:
 *   gcc -O2 -fopenmp inst/bench/store-bandwidth.c -o /tmp/sb && /tmp/sb
 *   gcc -O2 -march=native -fopenmp inst/bench/store-bandwidth.c -o /tmp/sb && /tmp/sb */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(void) {
  const int K = 1000, V = 129289, U = 2500, NB = 20, reps = 40;
  const size_t n = (size_t)K * V, page = (size_t)2 << 20;
  double *X = aligned_alloc(page, (n * sizeof(double) + page - 1) / page * page);
  madvise(X, n * sizeof(double), MADV_HUGEPAGE);
  memset(X, 0, n * sizeof(double));
  double *vals = malloc((size_t)K * U * NB * sizeof(double));
  for (size_t i = 0; i < (size_t)K * U * NB; i++) vals[i] = rand() / (double)RAND_MAX;
  int *words = malloc((size_t)U * NB * sizeof(int));
  char *used = malloc(V);
  for (int b = 0; b < NB; b++) {
    int *w = words + (size_t)b * U, c = 0;
    memset(used, 0, V);
    while (c < U) {
      int v = rand() % V;
      if (!used[v]) used[v] = 1, w[c++] = v;
    }
    qsort(w, U, sizeof(int), cmp_int);
  }
  double *ssum = malloc(K * sizeof(double));
  const double mb = 3.0 * K * U * sizeof(double) / 1e6;
  for (int th = 1; th <= 2; th++) {
    for (int form = 0; form < 3; form++) {
      double t0 = omp_get_wtime();
      for (int r = 0; r < reps; r++) {
        const int *w = words + (size_t)(r % NB) * U;
        const double *val = vals + (size_t)(r % NB) * K * U;
        if (form == 0) {
          for (int k = 0; k < K; k++) ssum[k] = 0;
          for (int u = 0; u < U; u++) {
            double *restrict col = X + (size_t)w[u] * K;
            const double *restrict sv = val + (size_t)u * K;
            for (int k = 0; k < K; k++) col[k] += 0.5 * sv[k];
            for (int k = 0; k < K; k++) ssum[k] += sv[k];
          }
        } else if (form == 1) {
          int B = (K + 2 * th - 1) / (2 * th);
          B = ((B + 7) / 8) * 8;
          if (B > 256) B = 256;
          const int nb = (K + B - 1) / B;
#pragma omp parallel num_threads(th)
          {
#pragma omp for schedule(dynamic, 16) nowait
            for (int u = 0; u < U; u++) {
              double *restrict col = X + (size_t)w[u] * K;
              const double *restrict sv = val + (size_t)u * K;
              for (int k = 0; k < K; k++) col[k] += 0.5 * sv[k];
            }
#pragma omp for schedule(dynamic, 1) nowait
            for (int b = 0; b < nb; b++) {
              const int k0 = B * b, m = k0 + B < K ? B : K - k0;
              double acc[256];
              for (int k = 0; k < m; k++) acc[k] = 0;
              for (int u = 0; u < U; u++) {
                const double *restrict sv = val + (size_t)u * K + k0;
                for (int k = 0; k < m; k++) acc[k] += sv[k];
              }
              memcpy(ssum + k0, acc, sizeof(double) * m);
            }
          }
        } else {
#pragma omp parallel num_threads(th)
          {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const int k0 = (int)((long)K * t / nt), k1 = (int)((long)K * (t + 1) / nt);
            for (int k = k0; k < k1; k++) ssum[k] = 0;
            for (int u = 0; u < U; u++) {
              double *restrict col = X + (size_t)w[u] * K;
              const double *restrict sv = val + (size_t)u * K;
              for (int k = k0; k < k1; k++) col[k] += 0.5 * sv[k];
              for (int k = k0; k < k1; k++) ssum[k] += sv[k];
            }
          }
        }
      }
      const double ms = (omp_get_wtime() - t0) / reps * 1000;
      printf("threads %d, form %d: %.2f ms an update (%.1f GB/s)\n", th, form, ms, mb / ms);
    }
  }
  return 0;
}
