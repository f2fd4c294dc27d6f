/* Document co-occurrence counts of the top words of each topic, the raw
 * material of NPMI coherence (Than & Doan App. B): how many documents of a
 * reference corpus contain word u, and how many contain both words of each
 * pair. Plain C; no R API.
 *
 * Per document, the words of interest present are flagged; each present word
 * then visits its partner list and counts the pairs whose partner is flagged.
 * Work per document is the sum of the present words' degrees, independent of
 * the corpus vocabulary. Counts are whole numbers held exactly in doubles, so
 * per-thread buffers give identical totals in any order. */
#include <string.h>
#include "svi.h"
#include "eval-npmi.h"

void eval_npmi_counts(const svi_dtm *x, const npmi_pairs *pr, int threads,
                      double *doc_freq, double *pair_freq, double *scratch,
                      int *present_scratch) {
  const int U = pr->U, P = pr->P;
  const svi_len nb = svi_n_blocks(x->D);
  /* per thread: U + P counts in scratch and U presence flags */
  memset(scratch, 0, sizeof(double) * (svi_len)threads * ((svi_len)U + P));
  for (svi_len i = 0; i < (svi_len)threads * U; i++) present_scratch[i] = 0;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
#endif
  for (svi_len blk = 0; blk < nb; blk++) {
    const int tid = svi_thread_id();
    double *df = scratch + (svi_len)tid * ((svi_len)U + P);
    double *pf = df + U;
    int *flag = present_scratch + (svi_len)tid * U;
    const int d0 = (int)(blk * SVI_BLOCK);
    const int d1 = d0 + SVI_BLOCK < x->D ? d0 + SVI_BLOCK : x->D;
    for (int d = d0; d < d1; d++) {
      const int p0 = x->doc_ptr[d], p1 = x->doc_ptr[d + 1];
      for (int i = p0; i < p1; i++) {
        const int u = pr->word_map[x->term[i]];
        if (u >= 0 && x->count[i] > 0) flag[u] = 1;
      }
      for (int i = p0; i < p1; i++) {
        const int u = pr->word_map[x->term[i]];
        if (u < 0 || !flag[u]) continue;
        df[u] += 1.0;
        for (int a = pr->adj_ptr[u]; a < pr->adj_ptr[u + 1]; a++)
          if (flag[pr->adj_partner[a]]) pf[pr->adj_pair[a]] += 1.0;
      }
      for (int i = p0; i < p1; i++) {
        const int u = pr->word_map[x->term[i]];
        if (u >= 0) flag[u] = 0;
      }
    }
  }
  memset(doc_freq, 0, sizeof(double) * U);
  memset(pair_freq, 0, sizeof(double) * P);
  for (int t = 0; t < threads; t++) {
    const double *df = scratch + (svi_len)t * ((svi_len)U + P);
    for (int u = 0; u < U; u++) doc_freq[u] += df[u];
    for (int p = 0; p < P; p++) pair_freq[p] += df[U + p];
  }
}
