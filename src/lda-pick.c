/* Bregman k-means++ over documents (see lda-pick.h): the first document at
 * random, each next one with probability proportional to its smallest KL
 * divergence from the smoothed word distributions of those chosen. Each
 * topic touches the documents that share a word with its chosen document
 * (an inverted index), not the whole corpus (issue 20: the O(K nnz) form
 * was a third of a one-pass gibbs fit at K = 1000 on 1,000 kos
 * documents). */
#include <math.h>
#include "lda-pick.h"

/* The number of cum[0..D) <= t (cum non-decreasing): findInterval(t, cum). */
static int count_le(const double *cum, int D, double t) {
  int lo = 0, hi = D;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (cum[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The draw weights of the next pick, as running sums: w[d] = the sum of
 * the weights of documents 0..d, added in long double in document order;
 * returns their total (0 for D = 0). Bit 2 of flag[d] is set when document
 * d's weight is positive (the draw never lands on a document of weight 0),
 * bit 1 (chosen) is kept. */
enum { PICK_UNCHOSEN_NONEMPTY, PICK_DIVERGENCE, PICK_UNCHOSEN, PICK_ALL };
static double pick_weights(int D, int mode, const double *lens, const double *mind,
                           unsigned char *flag, double *w) {
  long double acc = 0.0L;
  for (int d = 0; d < D; d++) {
    const int chosen = flag[d] & 1;
    double wd;
    switch (mode) {
    case PICK_UNCHOSEN_NONEMPTY: wd = (lens[d] > 0 && !chosen) ? 1.0 : 0.0; break;
    case PICK_DIVERGENCE: wd = isfinite(mind[d]) ? mind[d] : 0.0; break;
    case PICK_UNCHOSEN: wd = chosen ? 0.0 : 1.0; break;
    default: wd = 1.0;
    }
    flag[d] = (unsigned char)(chosen | (wd > 0 ? 2 : 0));
    acc += wd;
    w[d] = (double)acc;
  }
  return D > 0 ? w[D - 1] : 0.0;
}

void lda_bregman_pick(const svi_dtm *x, int K, double eta, const double *p,
                      const double *self, const double *lens, const double *u,
                      int *chosen, int *tp, int *tdoc, double *tval, double *psum,
                      double *cross, double *mind, double *w, unsigned char *flag) {
  const int D = x->D, V = x->V;
  const double smooth = eta;
  /* inverted index: word v's documents tdoc[tp[v] .. tp[v+1]) and their p */
  for (int v = 0; v <= V; v++) tp[v] = 0;
  for (int e = 0; e < x->doc_ptr[D]; e++) tp[x->term[e] + 1]++;
  for (int v = 0; v < V; v++) tp[v + 1] += tp[v];
  for (int d = 0; d < D; d++) {
    double s = 0.0;
    for (int e = x->doc_ptr[d]; e < x->doc_ptr[d + 1]; e++) {
      int v = x->term[e], at = tp[v]++;
      tdoc[at] = d;
      tval[at] = p[e];
      s += p[e];
    }
    psum[d] = s;
  }
  for (int v = V; v > 0; v--) tp[v] = tp[v - 1];
  tp[0] = 0;

  /* flag bit 1: chosen; bit 2: positive weight this round */
  for (int d = 0; d < D; d++) {
    mind[d] = lens[d] > 0 ? INFINITY : 0.0;
    flag[d] = 0;
  }
  for (int k = 0; k < K; k++) {
    int any = 0;
    for (int d = 0; d < D && !any; d++) any = isfinite(mind[d]) && mind[d] > 0;
    /* the weights' running sums (at K = 10,000 over 60,000 documents the
     * pick's O(K D) passes were a third of a one-pass gibbs call): the
     * unchosen documents' smallest divergences, or evenly the unchosen
     * non-empty documents for the first topic (and when no divergence is
     * positive), else the unchosen ones, else all */
    double sw = pick_weights(D, (k == 0 || !any) ? PICK_UNCHOSEN_NONEMPTY : PICK_DIVERGENCE,
                             lens, mind, flag, w);
    if (sw <= 0) sw = pick_weights(D, PICK_UNCHOSEN, lens, mind, flag, w);
    if (sw <= 0) sw = pick_weights(D, PICK_ALL, lens, mind, flag, w);
    double target = u[k] * sw;
    int dd = count_le(w, D, target) + 1; /* 1-based */
    if (dd > D) dd = D;
    while (!(flag[dd - 1] & 2) && dd > 1) dd--;
    chosen[k] = dd;

    /* log mu of the chosen document's smoothed words: l0 off its words */
    int a = x->doc_ptr[dd - 1], b = x->doc_ptr[dd];
    long double nacc = 0.0L;
    for (int e = a; e < b; e++) nacc += x->count[e];
    double nc = (double)nacc, den = nc + (double)V * smooth;
    double l0 = log(smooth / den);
    for (int d = 0; d < D; d++) {
      flag[d] &= 1;
      cross[d] = l0 * psum[d];
    }
    flag[dd - 1] |= 1;
    for (int e = a; e < b; e++) {
      int v = x->term[e];
      double dl = log((smooth + x->count[e]) / den) - l0;
      for (int j = tp[v]; j < tp[v + 1]; j++) cross[tdoc[j]] += tval[j] * dl;
    }
    for (int d = 0; d < D; d++) {
      double kl = self[d] - cross[d];
      if (!isnan(kl) && !(kl > 0)) kl = 0.0; /* pmax(., 0), NaN kept */
      if (lens[d] == 0) kl = 0.0;
      double m = mind[d];
      mind[d] = (isnan(m) || isnan(kl)) ? NAN : (kl < m ? kl : m); /* pmin */
    }
    for (int j = 0; j <= k; j++) mind[chosen[j] - 1] = 0.0;
  }
}
