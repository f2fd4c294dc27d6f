/* Document co-occurrence counts for topic coherence (eval-npmi.c). */
#ifndef SPARSEVI_EVAL_NPMI_H
#define SPARSEVI_EVAL_NPMI_H

#include "svi.h"

/* The U words of interest and the P pairs among them to count.
 * word_map[v] is u in 0..U-1 for a word of interest, -1 otherwise.
 * Pairs are stored once, under their first word: word u's partners are
 * adj_partner[adj_ptr[u] .. adj_ptr[u+1]) with pair ids adj_pair[...]. */
typedef struct {
  int U, P;
  const int *word_map;
  const int *adj_ptr, *adj_partner, *adj_pair;
} npmi_pairs;

/* Counts over the documents of x: doc_freq[u] documents contain word u,
 * pair_freq[p] documents contain both words of pair p. scratch holds
 * threads * (U + P) doubles and present_scratch threads * U ints. */
void eval_npmi_counts(const svi_dtm *x, const npmi_pairs *pr, int threads,
                      double *doc_freq, double *pair_freq, double *scratch,
                      int *present_scratch);
#endif
