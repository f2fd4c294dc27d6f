/* UMass topic coherence (Mimno et al. 2011; Mimno, Hoffman & Blei 2012,
 * eq. 13): for a topic's top words v_1..v_n (most probable first),
 *   C = sum_{m = 2..n} sum_{l < m} log((D(v_m, v_l) + 1) / D(v_l)),
 * D(v) the number of reference documents containing v and D(v, u) the
 * number containing both. Document frequencies come from inverted lists of
 * the top words only (sorted document ids), co-document frequencies from
 * intersecting two lists. Pairs whose higher-ranked word never occurs in
 * the reference are skipped and counted. */
#include <math.h>
#include "svi.h"

static svi_len intersect(const int *a, svi_len na, const int *b, svi_len nb) {
  svi_len i = 0, j = 0, n = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j])
      i++;
    else if (a[i] > b[j])
      j++;
    else {
      n++;
      i++;
      j++;
    }
  }
  return n;
}

/* top: n x K matrix of 0-based word ids. Scratch: slot of V ints, lptr of
 * n K + 1 ints, docs of (number of entries of the top words) ints (at most
 * nnz of x), fill of n K ints. Writes score[K] and skipped[K]. */
void eval_umass(const svi_dtm *x, const int *top, int n, int K, int *slot, svi_len *lptr,
                int *docs, svi_len *fill, double *score, int *skipped) {
  int V = x->V;
  for (int v = 0; v < V; v++) slot[v] = -1;
  int nu = 0;
  for (svi_len i = 0; i < (svi_len)n * K; i++)
    if (slot[top[i]] < 0) slot[top[i]] = nu++;
  for (int u = 0; u <= nu; u++) lptr[u] = 0;
  for (svi_len e = 0; e < x->doc_ptr[x->D]; e++) {
    int u = slot[x->term[e]];
    if (u >= 0 && x->count[e] > 0) lptr[u + 1]++;
  }
  for (int u = 0; u < nu; u++) lptr[u + 1] += lptr[u];
  for (int u = 0; u < nu; u++) fill[u] = lptr[u];
  for (int d = 0; d < x->D; d++)
    for (int e = x->doc_ptr[d]; e < x->doc_ptr[d + 1]; e++) {
      int u = slot[x->term[e]];
      if (u >= 0 && x->count[e] > 0) docs[fill[u]++] = d;
    }
  for (int k = 0; k < K; k++) {
    const int *tk = top + (svi_len)n * k;
    double c = 0.0;
    int skip = 0;
    for (int m = 1; m < n; m++) {
      int um = slot[tk[m]];
      for (int l = 0; l < m; l++) {
        int ul = slot[tk[l]];
        svi_len dl = lptr[ul + 1] - lptr[ul];
        if (dl == 0) {
          skip++;
          continue;
        }
        svi_len dml =
            intersect(docs + lptr[um], lptr[um + 1] - lptr[um], docs + lptr[ul], dl);
        c += log(((double)dml + 1.0) / (double)dl);
      }
    }
    score[k] = c;
    skipped[k] = skip;
  }
}
