/* Top-L selection over a K-vector by partial quickselect (introselect with a
 * median-of-three pivot and a heap fallback), linear in K on average; and
 * the top n of every row of a K x V table in one pass (svi_top_rows()). */
#include <math.h>
#include "svi.h"

/* Strict order: larger value first; among equal values, lower index first.
 * A total order makes the selected set unique, hence deterministic. */
static inline int before(const double *w, int a, int b) {
  return w[a] > w[b] || (w[a] == w[b] && a < b);
}

static inline void swap_int(int *a, int *b) {
  int t = *a;
  *a = *b;
  *b = t;
}

/* Sift-down of h[i] in the heap h[0..n) whose root is the *last* of its
 * entries under `before`. */
static void sift_down(const double *w, int *h, int i, int n) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(w, h[c], h[c + 1])) c++;
    if (before(w, h[c], h[i])) break;
    swap_int(&h[i], &h[c]);
    i = c;
  }
}

static void heap_select(const double *w, int *idx, int lo, int hi, int L) {
  /* Keep a min-heap (under `before`) of the first L entries of idx[lo..hi),
   * then scan the rest; afterwards idx[lo..lo+L) holds the top L. */
  int *h = idx + lo;
  int n = hi - lo;
  for (int start = L / 2 - 1; start >= 0; start--) sift_down(w, h, start, L);
  for (int j = L; j < n; j++) {
    if (before(w, h[j], h[0])) {
      swap_int(&h[0], &h[j]);
      sift_down(w, h, 0, L);
    }
  }
}

void svi_sort_top(const double *w, int *idx, int L) {
  /* heapsort: the heap's root is the last under `before`, moved to the end */
  for (int start = L / 2 - 1; start >= 0; start--) sift_down(w, idx, start, L);
  for (int end = L - 1; end > 0; end--) {
    swap_int(&idx[0], &idx[end]);
    sift_down(w, idx, 0, end);
  }
}

void svi_select_top(const double *w, int K, int L, int *idx) {
  for (int k = 0; k < K; k++) idx[k] = k;
  if (L >= K) return;
  if (L <= 0) return;
  int lo = 0, hi = K; /* the L-th element (0-based L - 1) lies in [lo, hi) */
  int target = L;     /* we want idx[0..L) to be the top L */
  int budget = 2 * (int)(log2((double)K) + 1);
  while (hi - lo > 16) {
    if (budget-- == 0) {
      heap_select(w, idx, lo, hi, target - lo);
      return;
    }
    int mid = lo + (hi - lo) / 2;
    /* median of three moved to hi - 1 */
    int a = lo, b = mid, c = hi - 1;
    if (before(w, idx[b], idx[a])) swap_int(&idx[a], &idx[b]);
    if (before(w, idx[c], idx[a])) swap_int(&idx[a], &idx[c]);
    if (before(w, idx[c], idx[b])) swap_int(&idx[b], &idx[c]);
    swap_int(&idx[b], &idx[hi - 1]);
    int pivot = idx[hi - 1];
    int store = lo;
    for (int i = lo; i < hi - 1; i++) {
      if (before(w, idx[i], pivot)) swap_int(&idx[i], &idx[store++]);
    }
    swap_int(&idx[store], &idx[hi - 1]);
    /* idx[lo..store) precede the pivot, idx[store] is the pivot */
    if (store == target || store + 1 == target) return;
    if (store > target) {
      hi = store;
    } else {
      lo = store + 1;
    }
  }
  /* small range: insertion sort, then the first target entries are the top */
  for (int i = lo + 1; i < hi; i++) {
    int v = idx[i], j = i;
    while (j > lo && before(w, v, idx[j - 1])) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = v;
  }
}

/* The top L in canonical order. For a few of many (L <= 16, K >= 4 L: a
 * document's kept topics) one scan that keeps the best L so far in order,
 * each entry compared once with the L-th best: 0.8 us a document at K =
 * 1000, L = 8 (ffi_lda_top_share() from R, 100 documents a call), against
 * 8.1 us for the selection and sort below, which do the rest. The entries
 * come in index order, so an entry precedes an equal one already kept only
 * if larger: the same set and order either way. */
void svi_top_sorted(const double *w, int K, int L, int *idx) {
  if (L <= 0) return;
  if (L > 16 || K < 4 * L) {
    svi_select_top(w, K, L, idx);
    svi_sort_top(w, idx, L);
    return;
  }
  int n = 0; /* kept so far, idx[0 .. n) in order */
  for (int k = 0; k < K; k++) {
    if (n == L && !(w[k] > w[idx[L - 1]])) continue;
    int j = n < L ? n++ : L - 1; /* (a full list drops its last) */
    while (j > 0 && w[k] > w[idx[j - 1]]) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = k;
  }
}

double svi_softmax_sub(const double *w, const int *idx, int L, double *r) {
  double m = -INFINITY;
  for (int j = 0; j < L; j++)
    if (w[idx[j]] > m) m = w[idx[j]];
  double s = 0;
  for (int j = 0; j < L; j++) {
    r[j] = exp(w[idx[j]] - m);
    s += r[j];
  }
  double inv = 1.0 / s;
  for (int j = 0; j < L; j++) r[j] *= inv;
  return m + log(s);
}

/* An entry of svi_top_rows()'s table: x over its row's rdiv[k], then over
 * its column's div[v] (either skipped when NULL). */
static inline double top_rows_value(double x, const double *rdiv, const double *div,
                                    int k, svi_len v) {
  if (rdiv) x = x / rdiv[k];
  return div ? x / div[v] : x;
}

/* Row k's kept columns as a heap whose root is the worst kept: the smaller
 * value, or the larger column among equal values. */
static inline int row_worse(double a, int ia, double b, int ib) {
  return a < b || (a == b && ia > ib);
}

static void row_sift(double *hv, int *hi, int i, int n) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && row_worse(hv[c + 1], hi[c + 1], hv[c], hi[c])) c++;
    if (!row_worse(hv[c], hi[c], hv[i], hi[i])) break;
    double tv = hv[i];
    hv[i] = hv[c];
    hv[c] = tv;
    swap_int(&hi[i], &hi[c]);
    i = c;
  }
}

void svi_top_rows(const double *m, const double *rdiv, const double *div, int K,
                  svi_len V, int n, int *idx, double *hv) {
  for (int v = 0; v < n; v++)
    for (int k = 0; k < K; k++) {
      hv[(svi_len)k * n + v] = top_rows_value(m[(svi_len)v * K + k], rdiv, div, k, v);
      idx[(svi_len)k * n + v] = v;
    }
  for (int k = 0; k < K; k++)
    for (int s = n / 2 - 1; s >= 0; s--) row_sift(hv + (svi_len)k * n, idx + (svi_len)k * n, s, n);
  /* later columns have larger indices: they enter only on a larger value */
  for (svi_len v = n; v < V; v++) {
    const double *col = m + v * K;
    for (int k = 0; k < K; k++) {
      double *h = hv + (svi_len)k * n;
      const double x = top_rows_value(col[k], rdiv, div, k, v);
      if (x > h[0]) {
        int *hi = idx + (svi_len)k * n;
        h[0] = x;
        hi[0] = (int)v;
        row_sift(h, hi, 0, n);
      }
    }
  }
  /* heapsort: the worst goes last, so each row ends best first */
  for (int k = 0; k < K; k++) {
    double *h = hv + (svi_len)k * n;
    int *hi = idx + (svi_len)k * n;
    for (int end = n - 1; end > 0; end--) {
      double tv = h[0];
      h[0] = h[end];
      h[end] = tv;
      swap_int(&hi[0], &hi[end]);
      row_sift(h, hi, 0, end);
    }
  }
}
