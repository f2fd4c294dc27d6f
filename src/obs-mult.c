/* Multinomial observation model ("multinomial"): a Dirichlet(eta) prior on
 * each component's distribution over the vocabulary; clusters documents.
 * Statistic of a component: sum r n_v (V doubles). The log-weight table is
 * word-major (V x K) so a word's K values are contiguous. The multinomial
 * coefficient of a document is left out of every density and objective. */
#include <math.h>
#include "mix.h"

void mult_eval_table(const mix_prior *pr, int K, int V, const double *S, int point,
                     double *c, double *logb) {
  double eta = pr->eta;
  for (int k = 0; k < K; k++) {
    const double *Sk = S + (svi_len)k * V;
    double tot = V * eta;
    for (int v = 0; v < V; v++) tot += Sk[v];
    double norm = point ? log(tot) : svi_digamma(tot);
    for (int v = 0; v < V; v++) {
      double lam = eta + Sk[v];
      logb[(svi_len)v * K + k] = (point ? log(lam) : svi_digamma(lam)) - norm;
    }
    c[k] = 0;
  }
}

double mult_objective(const mix_prior *pr, int V, const double *S) {
  double eta = pr->eta, tot = V * eta, out = 0, lg_eta = svi_lgamma(eta);
  for (int v = 0; v < V; v++) {
    if (S[v] != 0) out += svi_lgamma(eta + S[v]) - lg_eta;
    tot += S[v];
  }
  return out + svi_lgamma(V * eta) - svi_lgamma(tot);
}

void mult_doc_weights(const mix_eval *ev, const svi_dtm *x, svi_len d, double *w) {
  int K = ev->K;
  for (int k = 0; k < K; k++) w[k] = ev->c[k];
  for (int p = x->doc_ptr[d]; p < x->doc_ptr[d + 1]; p++) {
    const double *row = ev->logb + (svi_len)x->term[p] * K;
    double n = x->count[p];
    for (int k = 0; k < K; k++) w[k] += n * row[k];
  }
}

void mult_add_stat(const svi_dtm *x, svi_len d, double r, double *Sk) {
  for (int p = x->doc_ptr[d]; p < x->doc_ptr[d + 1]; p++)
    Sk[x->term[p]] += r * x->count[p];
}
