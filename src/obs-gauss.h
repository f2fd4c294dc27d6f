/* Full-covariance Gaussian observation models, reusable by every engine that
 * needs them (mixtures here, the Fast-VDP engine later):
 * "gaussian" (Normal-Wishart prior on mean and precision) and
 * "zm_gaussian" (zero mean, Wishart prior on the precision).
 * Statistics of a component: gaussian [sum r x (D), sum r x x^T (packed)],
 * zm_gaussian [sum r x x^T (packed)]. Plain C: no R API. */
#ifndef SPARSEVI_OBS_GAUSS_H
#define SPARSEVI_OBS_GAUSS_H

#include "mix.h"

/* In-place Cholesky A = R R^T of a packed lower triangle (D x D). Returns 0,
 * or i + 1 when the leading minor of order i + 1 is not positive. */
int svi_chol_packed(double *A, int D);
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
/* Sk += r t(x) for one point x (D contiguous values). */
void gauss_add_stat(const double *x, int D, int zero_mean, double r, double *Sk);

#endif
