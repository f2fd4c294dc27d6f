/* Bregman k-means++ over documents (Hughes & Sudderth section 6), the pick
 * of every Bregman-seeded LDA start. Kernel only: no R API here. */
#ifndef SPARSEVI_LDA_PICK_H
#define SPARSEVI_LDA_PICK_H

#include "svi.h"

/* The K documents Bregman k-means++ picks, in topic order, 1-based, into
 * chosen (K): the documents R/lda-start.R's pure-R form lda_bregman_pick_r()
 * picks (its sums and cumulative sums in long double as R's sum() and
 * cumsum(), findInterval()'s count of cumulative weights <= the target),
 * but each document's cross term sum_j p_j log mu_j read through an
 * inverted index as l0 sum_j p_j + sum over the words it shares with the
 * chosen document (log mu_j - l0): O(D + shared entries) per topic, not
 * O(nnz). The KL values may differ from the R form's in the last bits.
 * p holds each entry's count over its document's length, self each
 * document's sum_j p_j log p_j, lens the documents' lengths, u the K
 * uniforms. Scratch: tp (V + 1 ints), tdoc (nnz ints), tval (nnz doubles),
 * psum, cross, mind, w (D doubles each), flag (D chars). */
void lda_bregman_pick(const svi_dtm *x, int K, double eta, const double *p,
                      const double *self, const double *lens, const double *u,
                      int *chosen, int *tp, int *tdoc, double *tval, double *psum,
                      double *cross, double *mind, double *w, unsigned char *flag);

#endif
