/* The distinct words of a batch of documents, one helper for every caller:
 * the vb and OPE local steps, document completion, SCVB0 and the cluster
 * executor's columns (ffi_dtm_batch_words, R/executor.R). Plain C; scratch
 * from R_alloc. */
#include <stdlib.h>
#include <string.h>
#include <R_ext/Memory.h>
#include "svi.h"

static int cmp_int(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Sorts n non-negative ints (increasing) by least-significant-digit radix,
 * 11 bits a pass, as many passes as the largest value needs; tmp holds n. */
static void radix_sort_int(int *a, int n, int *tmp) {
  int mx = 0;
  for (int i = 0; i < n; i++)
    if (a[i] > mx) mx = a[i];
  int cnt[2048];
  for (int shift = 0; shift < 31 && (mx >> shift) > 0; shift += 11) {
    memset(cnt, 0, sizeof cnt);
    for (int i = 0; i < n; i++) cnt[(a[i] >> shift) & 2047]++;
    for (int b = 0, s = 0; b < 2048; b++) {
      const int c = cnt[b];
      cnt[b] = s;
      s += c;
    }
    for (int i = 0; i < n; i++) tmp[cnt[(a[i] >> shift) & 2047]++] = a[i];
    memcpy(a, tmp, sizeof(int) * (size_t)n);
  }
}

/* The distinct words of a batch (increasing, wlist, U of them) and the column
 * of each entry's word (ecol), for the nnz entries term[] (in [0, V)). With
 * `marks` (a V-long int table that R keeps for the session) only the batch's
 * entries are visited: O(nnz), not O(V). The table needs no initialisation
 * and no cleaning: an entry counts only when it points into the list of words
 * found so far at that very word (the "sparse set" check), so whatever it
 * holds (a previous batch's columns, anything) cannot mislead it. Without it,
 * a V-long R_alloc table, or sorting when the vocabulary is very much larger
 * than the batch. Returns U. */
int svi_batch_words(const int *term, svi_len nnz, int V, int *marks, int *ecol, int *wlist) {
  int U = 0;
  if (marks != NULL || (double)V <= 256.0 * (double)nnz) {
    int *col_of = marks;
    if (col_of == NULL) col_of = (int *)R_alloc(V, sizeof(int));
    for (svi_len e = 0; e < nnz; e++) {
      const int v = term[e];
      const int u = col_of[v];
      if (!(u >= 0 && u < U && wlist[u] == v)) {
        col_of[v] = U;
        wlist[U++] = v;
      }
    }
    radix_sort_int(wlist, U, ecol); /* ecol is free until filled below */
    for (int u = 0; u < U; u++) col_of[wlist[u]] = u;
    for (svi_len e = 0; e < nnz; e++) ecol[e] = col_of[term[e]];
  } else {
    if (nnz > 0) memcpy(wlist, term, sizeof(int) * (size_t)nnz);
    qsort(wlist, (size_t)nnz, sizeof(int), cmp_int);
    for (svi_len e = 0; e < nnz; e++)
      if (U == 0 || wlist[e] != wlist[U - 1]) wlist[U++] = wlist[e];
    for (svi_len e = 0; e < nnz; e++) {
      const int v = term[e];
      int lo = 0, hi = U - 1;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (wlist[mid] < v)
          lo = mid + 1;
        else
          hi = mid;
      }
      ecol[e] = lo;
    }
  }
  return U;
}
