/* Diagonal Gaussian observation model ("diag_gaussian"): independent
 * Normal-Gamma priors per dimension. Statistic of a component:
 * [sum r x (D), sum r x^2 (D)]. */
#include <math.h>
#include "mix.h"

#define LN_2PI 1.8378770664093454836

/* Posterior of dimension d: writes kappa, m, a, b. */
static void diag_post(const mix_prior *pr, int D, int d, double N, const double *S,
                      double *kappa, double *m, double *a, double *b) {
  double k0 = pr->kappa0, m0 = pr->m0[d];
  *kappa = k0 + N;
  *m = (k0 * m0 + S[d]) / *kappa;
  *a = 0.5 * pr->nu0 + 0.5 * N;
  double bb = pr->b0[d] + 0.5 * (S[D + d] + k0 * m0 * m0 - *kappa * *m * *m);
  /* exact arithmetic gives b >= b0; guard against cancellation */
  *b = bb > pr->b0[d] ? bb : pr->b0[d];
}

/* The point estimate of a variance is its posterior mean, b / (a - 1), for
 * a >= 2 (always with the default nu0 = 3 once a component holds a point);
 * below that b / min(a, 1), continuous in a and never below b / a, the
 * inverse of the precision's mean that the local step uses (as the full
 * model's gauss_point_divisor in obs-gauss.c). */
static double diag_point_divisor(double a) {
  return fmin(a, fmax(a - 1, 1.0));
}

static void diag_eval_component(const mix_prior *pr, int D, double N, const double *S,
                                int point, double *c, double *mean, double *fac) {
  double cc = 0;
  for (int d = 0; d < D; d++) {
    double kappa, m, a, b;
    diag_post(pr, D, d, N, S, &kappa, &m, &a, &b);
    mean[d] = m;
    if (point) a = diag_point_divisor(a);
    fac[d] = sqrt(a / b);
    if (point)
      cc += -0.5 * LN_2PI + 0.5 * log(a / b);
    else
      cc += -0.5 * LN_2PI + 0.5 * (svi_digamma(a) - log(b)) - 0.5 / kappa;
  }
  *c = cc;
}

static void diag_point_component(const mix_prior *pr, int D, double N, const double *S,
                                 double *m, double *var) {
  for (int d = 0; d < D; d++) {
    double kappa, a, b;
    diag_post(pr, D, d, N, S, &kappa, m + d, &a, &b);
    var[d] = b / diag_point_divisor(a);
  }
}

static double diag_objective(const mix_prior *pr, int D, double N, const double *S) {
  double out = 0, a0 = 0.5 * pr->nu0;
  for (int d = 0; d < D; d++) {
    double kappa, m, a, b;
    diag_post(pr, D, d, N, S, &kappa, &m, &a, &b);
    out += -0.5 * N * LN_2PI + 0.5 * log(pr->kappa0 / kappa) + a0 * log(pr->b0[d]) -
           a * log(b) + svi_lgamma(a) - svi_lgamma(a0);
  }
  return out;
}

static void diag_block_weights(const mix_eval *ev, const double *X, svi_len N, svi_len n0,
                               int nb, double *W, double *q) {
  int K = ev->K, D = ev->D;
  for (int k = 0; k < K; k++) {
    const double *m = ev->mean + (svi_len)k * D, *f = ev->fac + (svi_len)k * D;
    for (int n = 0; n < nb; n++) q[n] = 0;
    for (int d = 0; d < D; d++) {
      const double *xd = X + (svi_len)d * N + n0;
      double md = m[d], fd = f[d];
      for (int n = 0; n < nb; n++) {
        double t = (xd[n] - md) * fd;
        q[n] += t * t;
      }
    }
    double ck = ev->c[k];
    for (int n = 0; n < nb; n++) W[(svi_len)n * K + k] = ck - 0.5 * q[n];
  }
}

static void diag_add_stat(const double *x, int D, double r, double *Sk) {
  for (int d = 0; d < D; d++) {
    Sk[d] += r * x[d];
    Sk[D + d] += r * x[d] * x[d];
  }
}

/* ---- the table ---- */

static svi_len diag_stat_size(int D) {
  return 2 * (svi_len)D;
}

static void diag_eval_sizes(int D, svi_len sz[5]) {
  sz[0] = D; /* mean */
  sz[1] = D; /* fac */
  sz[2] = sz[3] = sz[4] = 0;
}

static double diag_eval_cost(int D) {
  return (double)D * D * (D + 1);
}

static int diag_eval(const mix_eval *ev, const mix_prior *pr, int k, double N,
                     const double *Sk, int point) {
  int D = ev->D;
  diag_eval_component(pr, D, N, Sk, point, ev->c + k, ev->mean + (svi_len)k * D,
                      ev->fac + (svi_len)k * D);
  return 0;
}

static void diag_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                         double *W, double *scratch) {
  diag_block_weights(ev, x->X, x->N, n0, nb, W, scratch);
}

static svi_len diag_weights_scratch(int D, int K) {
  (void)K;
  return (svi_len)SVI_BLOCK * (D + 1);
}

static void diag_add_pairs(const mix_data *x, const svi_len *pts, const double *r, int m,
                           double *Sk, double *xb) {
  for (int l = 0; l < m; l++) {
    for (int d = 0; d < x->D; d++) xb[d] = x->X[(svi_len)d * x->N + pts[l]];
    diag_add_stat(xb, x->D, r[l], Sk);
  }
}

static svi_len diag_summary_scratch(int D, int K) {
  (void)K;
  return D + SVI_BLOCK;
}

static double diag_obj(const mix_prior *pr, int D, double N, const double *Sk,
                       double *scratch) {
  (void)scratch;
  return diag_objective(pr, D, N, Sk);
}

static void diag_point(const mix_prior *pr, int D, double N, const double *Sk,
                       double *mean, double *spread, double *scratch) {
  (void)scratch;
  diag_point_component(pr, D, N, Sk, mean, spread);
}

const mix_obs mix_obs_diag = {
    .lik = MIX_DIAG,
    .name = "diag_gaussian",
    .needs_m0 = 1,
    .needs_b0 = 1,
    .spread = 2,
    .stat_size = diag_stat_size,
    .eval_sizes = diag_eval_sizes,
    .eval_cost = diag_eval_cost,
    .eval_component = diag_eval,
    .block_weights = diag_weights,
    .weights_scratch = diag_weights_scratch,
    .add_pairs = diag_add_pairs,
    .summary_scratch = diag_summary_scratch,
    .objective = diag_obj,
    .point_component = diag_point,
    .seed_dist = mix_seed_dist_sq,
};
