/* Spherical Gaussian observation model (fit_mixture(covariance =
 * "spherical"), mclust's VII): component k has covariance I / lambda_k.
 * Prior: lambda_k ~ Gamma(a0, b0) with a0 = nu0 D / 2 and b0 = sum_d b0[d]
 * (the diagonal model's per-dimension Gamma(nu0 / 2, b0[d]) pooled over the
 * D dimensions: the same prior strength per dimension and a prior variance
 * of the data's mean variance times `scale`), and mu_k ~ N(m0, (kappa0
 * lambda_k)^-1 I). Statistic of a component: [sum r x (D), sum r ||x||^2].
 *
 * Posterior: kappa = kappa0 + N, m = (kappa0 m0 + s) / kappa,
 * a = a0 + N D / 2, b = b0 + (q + kappa0 ||m0||^2 - kappa ||m||^2) / 2. */
#include <math.h>
#include "mix.h"

#define LN_2PI 1.8378770664093454836

static void sph_post(const mix_prior *pr, int D, double N, const double *S, double *kappa,
                     double *m, double *a, double *b, double *a0, double *b0) {
  double k0 = pr->kappa0, mm0 = 0, mm = 0, bb0 = 0;
  if (N < 0) N = 0;
  *kappa = k0 + N;
  for (int d = 0; d < D; d++) {
    m[d] = (k0 * pr->m0[d] + S[d]) / *kappa;
    mm0 += pr->m0[d] * pr->m0[d];
    mm += m[d] * m[d];
    bb0 += pr->b0[d];
  }
  *a0 = 0.5 * pr->nu0 * D;
  *b0 = bb0;
  *a = *a0 + 0.5 * N * D;
  double bb = bb0 + 0.5 * (S[D] + k0 * mm0 - *kappa * mm);
  /* exact arithmetic gives b >= b0; guard against cancellation */
  *b = bb > bb0 ? bb : bb0;
}

/* The variance's posterior mean b / (a - 1), as the diagonal model's
 * (diag_point_divisor in obs-diag.c). */
static double sph_point_divisor(double a) {
  return fmin(a, fmax(a - 1, 1.0));
}

static svi_len sph_stat_size(int D) {
  return (svi_len)D + 1;
}

static void sph_eval_sizes(int D, svi_len sz[5]) {
  sz[0] = D; /* mean */
  sz[1] = 1; /* fac: sqrt(E[lambda]) or the point estimate's */
  sz[2] = sz[3] = sz[4] = 0;
}

static double sph_eval_cost(int D) {
  return (double)D * 4;
}

static int sph_eval(const mix_eval *ev, const mix_prior *pr, int k, double N,
                    const double *Sk, int point) {
  int D = ev->D;
  double kappa, a, b, a0, b0;
  sph_post(pr, D, N, Sk, &kappa, ev->mean + (svi_len)k * D, &a, &b, &a0, &b0);
  if (point) {
    double ap = sph_point_divisor(a);
    ev->fac[k] = sqrt(ap / b);
    ev->c[k] = 0.5 * D * (log(ap / b) - LN_2PI);
  } else {
    ev->fac[k] = sqrt(a / b);
    ev->c[k] = 0.5 * D * (svi_digamma(a) - log(b) - LN_2PI) - 0.5 * D / kappa;
  }
  return 0;
}

static void sph_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                        double *W, double *q) {
  int K = ev->K, D = ev->D;
  svi_len N = x->N;
  for (int k = 0; k < K; k++) {
    const double *m = ev->mean + (svi_len)k * D;
    for (int n = 0; n < nb; n++) q[n] = 0;
    for (int d = 0; d < D; d++) {
      const double *xd = x->X + (svi_len)d * N + n0;
      double md = m[d];
      for (int n = 0; n < nb; n++) {
        double t = xd[n] - md;
        q[n] += t * t;
      }
    }
    double ck = ev->c[k], f2 = ev->fac[k] * ev->fac[k];
    for (int n = 0; n < nb; n++) W[(svi_len)n * K + k] = ck - 0.5 * f2 * q[n];
  }
}

static svi_len sph_weights_scratch(int D, int K) {
  (void)D;
  (void)K;
  return SVI_BLOCK;
}

static void sph_add_pairs(const mix_data *x, const svi_len *pts, const double *r, int m,
                          double *Sk, double *scratch) {
  (void)scratch;
  int D = x->D;
  for (int l = 0; l < m; l++) {
    double q = 0, rl = r[l];
    for (int d = 0; d < D; d++) {
      double v = x->X[(svi_len)d * x->N + pts[l]];
      Sk[d] += rl * v;
      q += v * v;
    }
    Sk[D] += rl * q;
  }
}

/* (the dense summary keeps the block's responsibilities in the last
 * SVI_BLOCK doubles) */
static svi_len sph_summary_scratch(int D, int K) {
  (void)K;
  return D + SVI_BLOCK;
}

static double sph_obj(const mix_prior *pr, int D, double N, const double *Sk,
                      double *scratch) {
  double kappa, a, b, a0, b0;
  sph_post(pr, D, N, Sk, &kappa, scratch, &a, &b, &a0, &b0);
  if (N < 0) N = 0;
  return -0.5 * N * D * LN_2PI + 0.5 * D * log(pr->kappa0 / kappa) + a0 * log(b0) -
         a * log(b) + svi_lgamma(a) - svi_lgamma(a0);
}

static void sph_point(const mix_prior *pr, int D, double N, const double *Sk,
                      double *mean, double *spread, double *scratch) {
  (void)scratch;
  double kappa, a, b, a0, b0;
  sph_post(pr, D, N, Sk, &kappa, mean, &a, &b, &a0, &b0);
  double v = b / sph_point_divisor(a);
  for (int d = 0; d < D; d++) spread[d] = v;
}

const mix_obs mix_obs_sph = {
    .lik = MIX_SPH,
    .name = "spherical_gaussian",
    .needs_m0 = 1,
    .needs_b0 = 1,
    .spread = 2,
    .stat_size = sph_stat_size,
    .eval_sizes = sph_eval_sizes,
    .eval_cost = sph_eval_cost,
    .eval_component = sph_eval,
    .block_weights = sph_weights,
    .weights_scratch = sph_weights_scratch,
    .add_pairs = sph_add_pairs,
    .summary_scratch = sph_summary_scratch,
    .objective = sph_obj,
    .point_component = sph_point,
    .seed_dist = mix_seed_dist_sq,
};
