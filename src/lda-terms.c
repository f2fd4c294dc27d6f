/* FREX words of a fit's topics (terms(fit, type = "frex"), R/lda-methods.R):
 * for each topic, the rank of each word by its probability and by its
 * exclusivity among the V words, the weighted harmonic mean of the two, and
 * the n words of highest mean. frex_row() in R/lda-methods.R is the
 * reference; R's rank(), twice per topic, took 33 ms a call at V = 129,289,
 * a stable radix sort of the values' bits does it in a few passes. */
#include <string.h>
#include "lda-terms.h"
#include "svi.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)

/* The bits of x as an unsigned key in the order of the values: -0 as +0,
 * negatives below positives, a larger negative below a smaller one. */
static inline uint64_t order_key(double x) {
  if (x == 0.0) x = 0.0;
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

/* Ascending ranks of the V values x, 1-based, equal values sharing their
 * mean rank (R's rank(x, ties.method = "average") for values other than
 * NaN), written to r. Scratch: key, key2 (V each), ix, ix2 (V each), cnt
 * (RADIX_SIZE). An LSD radix sort of the keys, stable, so equal keys keep
 * their order; a pass whose digit is the same for every key is skipped. */
static void average_ranks(const double *x, int V, double *r, uint64_t *key,
                          uint64_t *key2, int *ix, int *ix2, int *cnt) {
  for (int v = 0; v < V; v++) {
    key[v] = order_key(x[v]);
    ix[v] = v;
  }
  for (int shift = 0; shift < 64; shift += RADIX_BITS) {
    memset(cnt, 0, sizeof(int) * RADIX_SIZE);
    for (int v = 0; v < V; v++) cnt[(key[v] >> shift) & (RADIX_SIZE - 1)]++;
    if (V > 0 && cnt[(key[0] >> shift) & (RADIX_SIZE - 1)] == V) continue;
    int at = 0;
    for (int d = 0; d < RADIX_SIZE; d++) {
      const int c = cnt[d];
      cnt[d] = at;
      at += c;
    }
    for (int v = 0; v < V; v++) {
      const int to = cnt[(key[v] >> shift) & (RADIX_SIZE - 1)]++;
      key2[to] = key[v];
      ix2[to] = ix[v];
    }
    uint64_t *tk = key;
    key = key2;
    key2 = tk;
    int *ti = ix;
    ix = ix2;
    ix2 = ti;
  }
  /* runs of equal keys, positions i .. j (0-based): rank (i + j + 2) / 2,
   * as R's rank() computes it */
  for (int i = 0; i < V;) {
    int j = i;
    while (j + 1 < V && key[j + 1] == key[i]) j++;
    const double rk = (double)(i + j + 2) / 2.0;
    for (int s = i; s <= j; s++) r[ix[s]] = rk;
    i = j + 1;
  }
}

/* Column v's sum of the topics, sum over k of tw[k, v] / rs[k] (tw[k, v]
 * when rs is NULL), in long double, topic after topic, as R's colSums()
 * adds the columns of topic_word. */
void lda_frex_colsums(const double *tw, const double *rs, int K, int V, double *colsums) {
  for (int v = 0; v < V; v++) {
    const double *col = tw + (svi_len)v * K;
    long double acc = 0.0L;
    if (rs) {
      for (int k = 0; k < K; k++) acc += col[k] / rs[k];
    } else {
      for (int k = 0; k < K; k++) acc += col[k];
    }
    colsums[v] = (double)acc;
  }
}

/* The n FREX words (0-based, best first; among equal scores the lower word
 * first) of topics k0 .. k0 + nb - 1 (nb <= LDA_FREX_BLOCK) to out, n per
 * topic: the topics tw[k, v] / rs[k] (lambda over its row sums, the values
 * of topic_word without making it; tw itself when rs is NULL), colsums
 * their column sums (lda_frex_colsums()), w the weight of frequency.
 * Exclusivity is beta / colsums (0 where a column sums to 0: a word no
 * topic holds); the score 1 / (w / F + (1 - w) / E), F and E the average
 * ranks over V of the topic's probabilities and exclusivities, over V. The
 * block's rows are read together, a column's nb values at a time (a row
 * alone would read one value of every cache line it loads). sc: the
 * calling thread's scratch. */
void lda_frex_block(const double *tw, const double *rs, int K, int V,
                    const double *colsums, double w, int k0, int nb, int n, int *out,
                    const lda_frex_scratch *sc) {
  for (int v = 0; v < V; v++) {
    const double *col = tw + (svi_len)v * K + k0;
    if (rs) {
      for (int j = 0; j < nb; j++) sc->beta[(svi_len)j * V + v] = col[j] / rs[k0 + j];
    } else {
      for (int j = 0; j < nb; j++) sc->beta[(svi_len)j * V + v] = col[j];
    }
  }
  double *excl = sc->excl, *F = sc->F, *E = sc->E;
  const double dv = (double)V;
  for (int j = 0; j < nb; j++) {
    const double *beta = sc->beta + (svi_len)j * V;
    for (int v = 0; v < V; v++) excl[v] = colsums[v] != 0.0 ? beta[v] / colsums[v] : 0.0;
    average_ranks(beta, V, F, sc->key, sc->key2, sc->ix, sc->ix2, sc->cnt);
    average_ranks(excl, V, E, sc->key, sc->key2, sc->ix, sc->ix2, sc->cnt);
    for (int v = 0; v < V; v++) F[v] = 1.0 / (w / (F[v] / dv) + (1.0 - w) / (E[v] / dv));
    svi_top_sorted(F, V, n, sc->ix);
    memcpy(out + (svi_len)j * n, sc->ix, sizeof(int) * (size_t)n);
  }
}
