/* The one Normal-Wishart model of the package: full-covariance Gaussian
 * observations, used by the L-sparse mixtures (fit_mixture(), the gauss_*
 * evaluator and statistics below) and by Fast-VDP (fit_vdp(), the gauss_nw_*
 * posterior, KL and expected log-likelihood at the end): one prior type
 * (mix_prior), one Cholesky and one packing (linalg.h).
 * Mixtures:
 * "gaussian" (Normal-Wishart prior on mean and precision) and
 * "zm_gaussian" (zero mean, Wishart prior on the precision).
 * Statistics of a component: gaussian [sum r x (D), sum r x x^T (packed)],
 * zm_gaussian [sum r x x^T (packed)]. Plain C: no R API. */
#ifndef SPARSEVI_OBS_GAUSS_H
#define SPARSEVI_OBS_GAUSS_H

#include <stddef.h>
#include "mix.h" /* mix_prior; linalg.h: the packing, Cholesky */

/* ln Gamma_D(a), the multivariate log-gamma function. */
double svi_lmvgamma(double a, int D);

/* Posterior of one component from its count N and statistic S: writes the
 * scale matrix B (packed), the mean m (gaussian only; may be NULL for zm) and
 * returns nu; *kappa gets kappa0 + N. */
double gauss_posterior(const mix_prior *pr, int zero_mean, int D, double N,
                       const double *S, double *B, double *m, double *kappa);
/* Evaluator entries of one component: c (observation constant), mean (D,
 * unless zero_mean), fac (packed inverse R^-1 of the lower Cholesky factor R
 * of the covariance-like matrix B / nu), inv_diag (1 / R_ii) and shift
 * (R^-1 mean; NULL when zero_mean). point = 0
 * gives E_q[ln N(x | .)], point = 1 the log density at E[Lambda].
 * Returns 0 or the failed Cholesky order. */
int gauss_eval_component(const mix_prior *pr, int zero_mean, int D, double N,
                         const double *S, int point, double *c, double *mean, double *fac,
                         double *inv_diag, double *shift);
/* Observation part of the ELBO at the conjugate posterior: ln of the
 * marginal likelihood ratio Z(posterior) / Z(prior) (with the base measure).
 * Writes NaN when a matrix is not positive definite. scratch: P doubles. */
double gauss_objective(const mix_prior *pr, int zero_mean, int D, double N,
                       const double *S, double *scratch);
/* Sk += sum_l r[l] t(x_l) over the m <= SVI_BLOCK points pts[0..m) of the
 * column-major N x D matrix X (a chunk of one component's points, in
 * order). scratch: gauss_stat_scratch(D) doubles. */
void gauss_chunk_stat(const double *X, svi_len N, int D, int zero_mean,
                      const svi_len *pts, const double *r, int m, double *Sk,
                      double *scratch);
svi_len gauss_stat_scratch(int D);
/* Dense summary (every point's K responsibilities, resp point-major
 * (n1 - n0) x K) of points [n0, n1): Nk[K] and S (K x P). Components are
 * split among the threads; each one's sums run over the points in order.
 * scratch: threads x gauss_dense_scratch doubles; irows: threads x
 * SVI_BLOCK ints. */
void gauss_dense_summary(const double *X, svi_len N, int D, int zero_mean, svi_len n0,
                         svi_len n1, int K, const double *resp, int threads, double *Nk,
                         double *S, double *scratch, int *irows);
svi_len gauss_dense_scratch(int D, int zero_mean, int K);

/* The same summary fed block by block (gauss_dense_summary is built on it,
 * and a one-thread local step uses it to add each block of points right
 * after their responsibilities, with the same arithmetic): begin (zeroes
 * the outputs; scratch0 is the first thread's scratch), then per thread
 * `thread` (its scratch: gauss_dense_scratch doubles, SVI_BLOCK ints),
 * `points` for consecutive blocks of at most SVI_BLOCK points starting at
 * multiples of SVI_BLOCK from the batch's first point (rows first.. of X, N
 * x D column-major; resp m x K) for the thread's units [u0, u1) of
 * 0..units-1 (components, or groups of components in vector lanes), and
 * `end`; then `finish` once, after every thread. The thread scratch holds
 * its lists: irows is unused. */
typedef struct {
  int D, zero_mean, K, P, Fp, PB, lanes, Kp, units;
  double *Nk, *S, *T;
} gauss_dense_acc;
typedef struct {
  double *phi, *ra, *xr, *nk, *rr;
  int *rows, *cnt;
} gauss_dense_thr;
void gauss_dense_begin(gauss_dense_acc *a, int D, int zero_mean, int K, double *Nk,
                       double *S, double *scratch0);
void gauss_dense_thread(const gauss_dense_acc *a, double *scratch, int *irows,
                        gauss_dense_thr *th);
void gauss_dense_points(const gauss_dense_acc *a, gauss_dense_thr *th, const double *X,
                        svi_len N, svi_len first, int m, const double *resp, int u0,
                        int u1);
void gauss_dense_end(const gauss_dense_acc *a, const gauss_dense_thr *th, int u0, int u1);
void gauss_dense_finish(const gauss_dense_acc *a);

/* ---- the same model over (count, sum x, packed sum x x^T) ----
 * Fast-VDP's view (vdp.c): the prior is the mixtures' mix_prior (lik
 * MIX_GAUSS: Lambda ~ Wishart(nu0, B0^-1), mu | Lambda ~ N(m0, (kappa0
 * Lambda)^-1), B0 packed as every statistic, linalg.h); a gauss_nw is a
 * posterior (or the prior itself, from no data) with the expectations a
 * score needs. s1 = sum x (D), s2 = packed sum x x^T (P). */

typedef struct {
  int D, P;
  double beta, nu; /* kappa and nu of the posterior */
  double *m;       /* D */
  double *W;       /* D x D, full: the inverse of the posterior's scale matrix B */
  double *Wp;      /* P, packed W with off-diagonal entries doubled (for traces) */
  double *Wm;      /* D, W m */
  double mWm, logdet_W, e_logdet_L;
  double lnB; /* ln of the Wishart normaliser B(W, nu): set for the prior only */
  double cst; /* 1/2 E ln|Lambda| - D/2 ln 2 pi - D / (2 beta) */
} gauss_nw;

/* Doubles of storage one gauss_nw needs. */
size_t gauss_nw_doubles(int D);
/* Points g's arrays into mem (gauss_nw_doubles(D) doubles). */
void gauss_nw_bind(gauss_nw *g, int D, double *mem);
/* Posterior given statistics (N, s1, s2) under the prior pr (N = 0, s1 =
 * s2 = NULL: the prior itself). work holds 2 P doubles. Returns 0, or 1
 * when the scale matrix is not positive definite (then g is left as the
 * prior, or undefined when the prior itself is not). */
int gauss_nw_posterior(gauss_nw *g, const mix_prior *pr, double N, const double *s1,
                       const double *s2, double *work);
/* KL(g || prior); q0 is the prior as gauss_nw_posterior gives it. */
double gauss_nw_kl(const gauss_nw *g, const mix_prior *pr, const gauss_nw *q0);
/* sum over the data behind (N, s1, s2) of E_g[ln N(x | mu, Lambda^-1)]. */
double gauss_nw_expected_loglik(const gauss_nw *g, double N, const double *s1,
                                const double *s2);
/* Packed outer product x x^T. */
void gauss_pack_outer(const double *x, int D, double *out);

/* Average over the data behind (n, s1, s2) of E_g[ln N(x | mu, Lambda^-1)]:
 * cst - nu/2 (tr(W s2)/n - 2 (W m).s1/n + m'W m). */
static inline double gauss_nw_score(const gauss_nw *g, double n, const double *s1,
                                    const double *s2) {
  const int P = g->P, D = g->D;
  /* four independent partial sums: the dot products are latency-bound
   * otherwise (the compiler may not reassociate them) */
  double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0, u = 0.0;
  const double *w = g->Wp;
  int i = 0;
  for (; i + 4 <= P; i += 4) {
    t0 += w[i] * s2[i];
    t1 += w[i + 1] * s2[i + 1];
    t2 += w[i + 2] * s2[i + 2];
    t3 += w[i + 3] * s2[i + 3];
  }
  for (; i < P; i++) t0 += w[i] * s2[i];
  for (int d = 0; d < D; d++) u += g->Wm[d] * s1[d];
  double t = (t0 + t1) + (t2 + t3);
  return g->cst - 0.5 * g->nu * ((t - 2.0 * u) / n + g->mWm);
}

#endif
