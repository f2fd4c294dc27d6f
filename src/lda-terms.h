/* FREX words of a fit's topics (lda-terms.c). */
#ifndef SPARSEVI_LDA_TERMS_H
#define SPARSEVI_LDA_TERMS_H

#include <stdint.h>
#include "svi.h"

/* One thread's scratch for a vocabulary of V words: beta (LDA_FREX_BLOCK
 * V doubles), excl, F, E (V doubles each), key, key2 (V each), ix, ix2 (V
 * ints each), cnt (LDA_FREX_RADIX ints). */
#define LDA_FREX_RADIX 2048
#define LDA_FREX_BLOCK 8
typedef struct {
  double *beta, *excl, *F, *E;
  uint64_t *key, *key2;
  int *ix, *ix2, *cnt;
} lda_frex_scratch;

void lda_frex_colsums(const double *tw, const double *rs, int K, int V, double *colsums);
void lda_frex_block(const double *tw, const double *rs, int K, int V,
                    const double *colsums, double w, int k0, int nb, int n, int *out,
                    const lda_frex_scratch *sc);
#endif
