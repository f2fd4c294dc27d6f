/* Multinomial observation model ("multinomial"): a Dirichlet(eta) prior on
 * each component's distribution over the vocabulary; clusters documents.
 * Statistic of a component: sum r n_v (V doubles). The log-weight table is
 * word-major (V x K) so a word's K values are contiguous. The multinomial
 * coefficient of a document is left out of every density and objective. */
#include <math.h>
#include "mix.h"

/* Column k of the word-major table (V x K) and c[k] = 0. */
static int mult_eval(const mix_eval *ev, const mix_prior *pr, int k, double N,
                     const double *Sk, int point) {
  int K = ev->K, V = ev->D;
  double eta = pr->eta, *logb = ev->logb;
  (void)N;
  double tot = V * eta;
  for (int v = 0; v < V; v++) tot += Sk[v];
  double norm = point ? log(tot) : svi_digamma(tot);
  for (int v = 0; v < V; v++) {
    double lam = eta + Sk[v];
    logb[(svi_len)v * K + k] = (point ? log(lam) : svi_digamma(lam)) - norm;
  }
  ev->c[k] = 0;
  return 0;
}

static double mult_objective(const mix_prior *pr, int V, const double *S) {
  double eta = pr->eta, tot = V * eta, out = 0, lg_eta = svi_lgamma(eta);
  for (int v = 0; v < V; v++) {
    if (S[v] != 0) out += svi_lgamma(eta + S[v]) - lg_eta;
    tot += S[v];
  }
  return out + svi_lgamma(V * eta) - svi_lgamma(tot);
}

static void mult_doc_weights(const mix_eval *ev, const svi_dtm *x, svi_len d, double *w) {
  int K = ev->K;
  for (int k = 0; k < K; k++) w[k] = ev->c[k];
  for (int p = x->doc_ptr[d]; p < x->doc_ptr[d + 1]; p++) {
    const double *row = ev->logb + (svi_len)x->term[p] * K;
    double n = x->count[p];
    for (int k = 0; k < K; k++) w[k] += n * row[k];
  }
}

static void mult_add_stat(const svi_dtm *x, svi_len d, double r, double *Sk) {
  for (int p = x->doc_ptr[d]; p < x->doc_ptr[d + 1]; p++)
    Sk[x->term[p]] += r * x->count[p];
}

/* ---- the table ---- */

static svi_len mult_stat_size(int V) {
  return V;
}

static void mult_eval_sizes(int V, svi_len sz[5]) {
  sz[0] = sz[1] = sz[2] = sz[3] = 0;
  sz[4] = V; /* a column of logb */
}

static double mult_eval_cost(int V) {
  (void)V;
  return 0; /* one pass over V: never worth the threads */
}

static void mult_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                         double *W, double *scratch) {
  (void)scratch;
  for (int i = 0; i < nb; i++)
    mult_doc_weights(ev, &x->dtm, n0 + i, W + (svi_len)i * ev->K);
}

static svi_len mult_weights_scratch(int V, int K) {
  (void)V;
  (void)K;
  return 0;
}

static void mult_add_pairs(const mix_data *x, const svi_len *pts, const double *r, int m,
                           double *Sk, double *xb) {
  (void)xb;
  for (int l = 0; l < m; l++) mult_add_stat(&x->dtm, pts[l], r[l], Sk);
}

static svi_len mult_summary_scratch(int V, int K) {
  (void)K;
  return V + SVI_BLOCK;
}

static double mult_obj(const mix_prior *pr, int V, double N, const double *Sk,
                       double *scratch) {
  (void)N;
  (void)scratch;
  return mult_objective(pr, V, Sk);
}

/* The word distribution E[phi]; no spread. */
static void mult_point(const mix_prior *pr, int V, double N, const double *S,
                       double *mean, double *spread, double *scratch) {
  (void)N;
  (void)spread;
  (void)scratch;
  double tot = V * pr->eta;
  for (int v = 0; v < V; v++) tot += S[v];
  for (int v = 0; v < V; v++) mean[v] = (pr->eta + S[v]) / tot;
}

const mix_obs mix_obs_mult = {
    .lik = MIX_MULT,
    .name = "multinomial",
    .documents = 1,
    .stat_size = mult_stat_size,
    .eval_sizes = mult_eval_sizes,
    .eval_cost = mult_eval_cost,
    .eval_component = mult_eval,
    .block_weights = mult_weights,
    .weights_scratch = mult_weights_scratch,
    .add_pairs = mult_add_pairs,
    .summary_scratch = mult_summary_scratch,
    .objective = mult_obj,
    .point_component = mult_point,
    .seed_dist = mix_seed_dist_kl,
};
