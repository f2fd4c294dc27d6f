/* Tied-covariance Gaussian observation model (fit_mixture(covariance =
 * "tied"), mclust's EEE): every component has its own mean and all share
 * one precision Lambda. Prior: Lambda ~ Wishart(nu0, B0^-1) and, given
 * Lambda, mu_k ~ N(m0, (kappa0 Lambda)^-1) independently. The statistic of
 * a component is the full model's: [sum r x (D), sum r x x^T (packed, P)].
 *
 * Conjugate (variational) posterior from the summaries (N_k, s_k, S_k):
 *   kappa_k = kappa0 + N_k,  m_k = (kappa0 m0 + s_k) / kappa_k,
 *   nu = nu0 + sum_k N_k,
 *   B = B0 + sum_k (S_k + kappa0 m0 m0^T - kappa_k m_k m_k^T),
 * q(Lambda) = Wishart(nu, B^-1), q(mu_k | Lambda) = N(m_k, (kappa_k Lambda)^-1).
 * B needs every component, so the table's `prepare` computes it (with its
 * Cholesky factor) once per use, before the components; the ELBO's Wishart
 * part is added once (shared_objective), each component adding its mean's
 * part. */
#include <math.h>
#include <string.h>
#include "mix.h"
#include "obs-gauss.h"

#define LN_2PI 1.8378770664093454836
#define LN_PI 1.1447298858494001741
#define LN_2 0.69314718055994530942

/* The shared buffer: [R^-1 (P, packed lower, R R^T = B) | B (P) | nu,
 * ln |B|, E ln |Lambda|, point divisor]. */
enum { TIED_NU = 0, TIED_LOGDET = 1, TIED_ELOGDET = 2, TIED_DIV = 3, TIED_NSCAL = 4 };

static svi_len tied_shared_size(int D) {
  return 2 * (svi_len)svi_packed_size(D) + TIED_NSCAL;
}

/* kappa_k and m_k of a component (m: D doubles) */
static double tied_mean(const mix_prior *pr, int D, double N, const double *Sk,
                        double *m) {
  double kappa = pr->kappa0 + N;
  for (int d = 0; d < D; d++) m[d] = (pr->kappa0 * pr->m0[d] + Sk[d]) / kappa;
  return kappa;
}

static int tied_prepare(mix_prior *pr, int K, int D, const double *Nk, const double *S,
                        double *buf) {
  svi_len P = svi_packed_size(D), SP = D + P;
  double *Rinv = buf, *B = buf + P, *sc = buf + 2 * P;
  double Ntot = 0;
  memcpy(B, pr->B0, sizeof(double) * (size_t)P);
  for (int k = 0; k < K; k++) {
    const double *Sk = S + (svi_len)k * SP;
    double N = Nk[k] > 0 ? Nk[k] : 0;
    Ntot += N;
    double kappa = pr->kappa0 + N;
    svi_len idx = 0;
    for (int i = 0; i < D; i++) {
      double mi = (pr->kappa0 * pr->m0[i] + Sk[i]) / kappa;
      for (int j = 0; j <= i; j++, idx++) {
        double mj = (pr->kappa0 * pr->m0[j] + Sk[j]) / kappa;
        B[idx] += Sk[D + idx] + pr->kappa0 * pr->m0[j] * pr->m0[i] - kappa * mj * mi;
      }
    }
  }
  memcpy(Rinv, B, sizeof(double) * (size_t)P);
  if (svi_chol_packed(Rinv, D)) return 1;
  double logdet = 0;
  for (int i = 0; i < D; i++) logdet += 2 * log(Rinv[svi_tri(i, i)]);
  svi_tri_invert(Rinv, NULL, D);
  double nu = pr->nu0 + Ntot;
  double e = D * LN_2 - logdet;
  for (int d = 1; d <= D; d++) e += svi_digamma(0.5 * (nu + 1 - d));
  sc[TIED_NU] = nu;
  sc[TIED_LOGDET] = logdet;
  sc[TIED_ELOGDET] = e;
  /* the covariance's posterior mean B / (nu - D - 1), as the full model's
   * point estimates (gauss_point_divisor in obs-gauss.c) */
  sc[TIED_DIV] = fmin(nu, fmax(nu - D - 1, 1.0));
  pr->shared = buf;
  pr->shared_objective = 0.5 * pr->nu0 * pr->logdet_B0 - 0.5 * nu * logdet +
                         svi_lmvgamma(0.5 * nu, D) - svi_lmvgamma(0.5 * pr->nu0, D);
  return 0;
}

/* ---- the evaluator: W_nk = c_k - 1/2 || F x_n - F m_k ||^2 with F =
 * sqrt(nu) R^-1 (the local step: E[Lambda] = nu B^-1) or sqrt(div) R^-1
 * (point estimates: Sigma = B / div); each component keeps m_k (mean), F m_k
 * (shift) and a copy of F (fac), which the block weights read from
 * component 0. ---- */

static svi_len tied_stat_size(int D) {
  return D + (svi_len)svi_packed_size(D);
}

static void tied_eval_sizes(int D, svi_len sz[5]) {
  sz[0] = D;                     /* mean */
  sz[1] = svi_packed_size(D);    /* fac: the shared F */
  sz[2] = 0;
  sz[3] = D;                     /* shift: F m_k */
  sz[4] = 0;
}

static double tied_eval_cost(int D) {
  return (double)D * D;
}

static int tied_eval(const mix_eval *ev, const mix_prior *pr, int k, double N,
                     const double *Sk, int point) {
  int D = ev->D;
  svi_len P = svi_packed_size(D);
  const double *Rinv = pr->shared, *sc = pr->shared + 2 * P;
  double *m = ev->mean + (svi_len)k * D, *F = ev->fac + (svi_len)k * P,
         *z = ev->shift + (svi_len)k * D;
  double kappa = tied_mean(pr, D, N > 0 ? N : 0, Sk, m);
  double f = sqrt(point ? sc[TIED_DIV] : sc[TIED_NU]);
  for (svi_len i = 0; i < P; i++) F[i] = f * Rinv[i];
  for (int i = 0; i < D; i++) {
    double s = 0;
    for (int j = 0; j <= i; j++) s += F[svi_tri(i, j)] * m[j];
    z[i] = s;
  }
  if (point)
    ev->c[k] = 0.5 * (D * log(sc[TIED_DIV]) - sc[TIED_LOGDET]) - 0.5 * D * LN_2PI;
  else
    ev->c[k] = 0.5 * sc[TIED_ELOGDET] - 0.5 * D * LN_2PI - 0.5 * D / kappa;
  return 0;
}

static void tied_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                         double *W, double *z) {
  int K = ev->K, D = ev->D;
  const double *F = ev->fac, *X = x->X;
  svi_len N = x->N;
  /* z = F x for the block's points, dimension-major with SVI_BLOCK lanes */
  for (int i = 0; i < D; i++) {
    double *zi = z + (svi_len)i * SVI_BLOCK;
    for (int n = 0; n < nb; n++) zi[n] = 0;
    for (int j = 0; j <= i; j++) {
      double f = F[svi_tri(i, j)];
      const double *xj = X + (svi_len)j * N + n0;
      for (int n = 0; n < nb; n++) zi[n] += f * xj[n];
    }
  }
  double *q = z + (svi_len)D * SVI_BLOCK;
  for (int k = 0; k < K; k++) {
    const double *zk = ev->shift + (svi_len)k * D;
    for (int n = 0; n < nb; n++) q[n] = 0;
    for (int i = 0; i < D; i++) {
      const double *zi = z + (svi_len)i * SVI_BLOCK;
      double c = zk[i];
      for (int n = 0; n < nb; n++) {
        double t = zi[n] - c;
        q[n] += t * t;
      }
    }
    double ck = ev->c[k];
    for (int n = 0; n < nb; n++) W[(svi_len)n * K + k] = ck - 0.5 * q[n];
  }
}

static svi_len tied_weights_scratch(int D, int K) {
  (void)K;
  return (svi_len)SVI_BLOCK * (D + 1);
}

static void tied_add_pairs(const mix_data *x, const svi_len *pts, const double *r, int m,
                           double *Sk, double *xb) {
  int D = x->D;
  for (int l = 0; l < m; l++) {
    for (int d = 0; d < D; d++) xb[d] = x->X[(svi_len)d * x->N + pts[l]];
    double rl = r[l];
    svi_len idx = D;
    for (int i = 0; i < D; i++) {
      double ri = rl * xb[i];
      Sk[i] += ri;
      for (int j = 0; j <= i; j++) Sk[idx++] += ri * xb[j];
    }
  }
}

static svi_len tied_summary_scratch(int D, int K) {
  (void)K;
  return D + SVI_BLOCK;
}

/* A component's part of the ELBO: its points' share of the normaliser and
 * its mean's (the Wishart part is the shared_objective). */
static double tied_obj(const mix_prior *pr, int D, double N, const double *Sk,
                       double *scratch) {
  (void)Sk;
  (void)scratch;
  if (N < 0) N = 0;
  return -0.5 * N * D * LN_PI + 0.5 * D * log(pr->kappa0 / (pr->kappa0 + N));
}

static void tied_point(const mix_prior *pr, int D, double N, const double *Sk,
                       double *mean, double *spread, double *scratch) {
  (void)scratch;
  svi_len P = svi_packed_size(D);
  const double *B = pr->shared + P, *sc = pr->shared + 2 * P;
  tied_mean(pr, D, N > 0 ? N : 0, Sk, mean);
  double div = sc[TIED_DIV];
  for (int i = 0; i < D; i++)
    for (int j = 0; j <= i; j++) {
      double v = B[svi_tri(i, j)] / div;
      spread[i + (svi_len)j * D] = v;
      spread[j + (svi_len)i * D] = v;
    }
}

const mix_obs mix_obs_tied = {
    .lik = MIX_TIED,
    .name = "tied_gaussian",
    .needs_m0 = 1,
    .needs_B0 = 1,
    .spread = 1,
    .stat_size = tied_stat_size,
    .eval_sizes = tied_eval_sizes,
    .eval_cost = tied_eval_cost,
    .eval_component = tied_eval,
    .block_weights = tied_weights,
    .weights_scratch = tied_weights_scratch,
    .add_pairs = tied_add_pairs,
    .summary_scratch = tied_summary_scratch,
    .objective = tied_obj,
    .point_component = tied_point,
    .seed_dist = mix_seed_dist_sq,
    .shared_size = tied_shared_size,
    .prepare = tied_prepare,
};
