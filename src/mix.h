/* Mixture models with L-sparse posteriors (Hughes & Sudderth): the shared
 * types of the local step (mix-local.c), the initialisation (mix-init.c) and
 * the observation models (obs-gauss.c, obs-diag.c, obs-mult.c).
 * Plain C: no R API. */
#ifndef SPARSEVI_MIX_H
#define SPARSEVI_MIX_H

#include "svi.h"
#include "linalg.h"

enum { MIX_GAUSS = 0, MIX_ZM = 1, MIX_DIAG = 2, MIX_MULT = 3, MIX_TIED = 4, MIX_SPH = 5 };
/* The largest MIX_* code. */
#define MIX_LIK_MAX MIX_SPH
enum { MIX_DIRICHLET = 0, MIX_DP = 1 };

/* Random stream offset of the mixture engine ("MIX" in ASCII, shifted). */
#define MIX_STREAM_OFFSET 0x4d49580000ULL

typedef struct mix_obs mix_obs;

/* Data: numeric points (X column-major N x D) or documents (dtm, D = V). */
typedef struct {
  const mix_obs *obs; /* the observation model (below) */
  svi_len N;
  int D;
  const double *X;
  svi_dtm dtm;
} mix_data;

/* Prior hyperparameters. Full covariances: Wishart(nu0, B0^-1) on the
 * precision, B0 packed lower triangle; Normal-Wishart adds m0, kappa0.
 * Diagonal: per dimension Gamma(nu0 / 2, b0[d]) on the precision and
 * N(m0, 1 / (kappa0 lambda)) on the mean. Multinomial: Dirichlet(eta). */
typedef struct {
  int lik, prior;
  const mix_obs *obs; /* mix_obs_of(lik); NULL for Fast-VDP, which needs none */
  double conc;        /* alpha (Dirichlet) or gamma (DP) */
  double kappa0, nu0, eta;
  const double *m0; /* D */
  const double *B0; /* D (D + 1) / 2 */
  const double *b0; /* D */
  double logdet_B0; /* ln |B0|, set by the caller */
  /* a model whose components share a parameter (the tied model's common
   * precision): its posterior, computed from every component's summary by
   * the table's `prepare` before a component is used (mix-ffi.c), and its
   * part of the ELBO, added once; NULL and 0 for the other models */
  const double *shared;
  double shared_objective;
} mix_prior;

/* Evaluator of log-weights W_nk = c_k + (observation term of x_n):
 * full:  - 1/2 || R_k^-1 (x - m_k) ||^2, R_k^-1 a packed lower triangle;
 * diag:  - 1/2 sum_d (f_kd (x_d - m_kd))^2;
 * mult:  sum_v n_v logb[v K + k] (word-major table).
 * Built either from expectations under q (the VB local step) or from point
 * estimates (held-out density). */
typedef struct {
  const mix_obs *obs;
  int K, D;
  double *c;        /* K */
  double *mean;     /* K x D, NULL for the zero-mean model */
  double *fac;      /* full: K x D(D+1)/2 packed inverse factors; diag: K x D */
  double *inv_diag; /* full: K x D reciprocals of the factors' diagonals */
  double *shift;    /* gaussian: K x D, R_k^-1 m_k */
  double *logb;     /* mult: V x K */
} mix_eval;

/* ---- the observation models (obs-gauss.c, obs-diag.c, obs-mult.c) ----
 * Each likelihood is one table of functions, chosen once from the prior's
 * `lik` (mix_obs_of) and carried by the prior, the data and the evaluator;
 * the local step, the summaries, the objective, the point estimates and the
 * seeding call through it, and never ask which likelihood they run. */
struct mix_obs {
  int lik;
  const char *name; /* the likelihood's name in R (fit_mixture(likelihood =)) */
  /* the prior parameters the model reads (the FFI checks them) */
  int needs_m0, needs_B0, needs_b0;
  int documents; /* data are documents (a dtm, D = V) rather than points */
  /* zero-mean full-covariance model (the flag of obs-gauss.h's kernels) */
  int zero_mean;
  /* what the point estimates give besides the means: 0 nothing, 1 a D x D
   * covariance per component, 2 D variances per component */
  int spread;
  /* doubles of one component's sufficient statistic */
  svi_len (*stat_size)(int D);
  /* evaluator storage per component (doubles): mean, fac, inv_diag, shift,
   * and per component of the word-major table logb (V x K) */
  void (*eval_sizes)(int D, svi_len sz[5]);
  /* rough flops of eval_component (decides whether to use the threads) */
  double (*eval_cost)(int D);
  /* component k of ev from its count N and statistic Sk (point = 0:
   * expectations under q; 1: point estimates); c[k] gets the observation
   * constant only. Returns 0, or nonzero when a matrix is not positive
   * definite. */
  int (*eval_component)(const mix_eval *ev, const mix_prior *pr, int k, double N,
                        const double *Sk, int point);
  /* log-weights of points [n0, n0 + nb) into W (nb x K, point-major);
   * scratch: weights_scratch doubles */
  void (*block_weights)(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                        double *W, double *scratch);
  svi_len (*weights_scratch)(int D, int K);
  /* Sk += sum_l r[l] t(x_{pts[l]}) over m <= SVI_BLOCK points, in order;
   * scratch: summary_scratch doubles */
  void (*add_pairs)(const mix_data *x, const svi_len *pts, const double *r, int m,
                    double *Sk, double *scratch);
  svi_len (*summary_scratch)(int D, int K);
  /* the component's observation part of the ELBO at its conjugate
   * posterior; scratch: P + D doubles */
  double (*objective)(const mix_prior *pr, int D, double N, const double *Sk,
                      double *scratch);
  /* point estimates (see the note in mix-global.c below); scratch: P doubles */
  void (*point_component)(const mix_prior *pr, int D, double N, const double *Sk,
                          double *mean, double *spread, double *scratch);
  /* k-means++ divergence of every point to the seed point cidx (mix-init.c):
   * dist[n] = min(cur[n], d(n, seed)) (first: d itself); work: D + N */
  void (*seed_dist)(const mix_data *x, svi_len cidx, const double *scale, int threads,
                    const double *cur, double *dist, double *work, int first);
  /* Optional: the dense (L = K) fast path of the full-covariance models
   * (obs-gauss.c; NULL elsewhere, and then mix-local.c takes the general
   * path). With it the dense local step computes the weights with
   * mix_simd_gauss_wt(), and
   * dense_local: one thread's local step over points [n0, n1) that adds
   *   each block of points to the summary Nk, S right after its
   *   responsibilities (mix_local() with Nk: same arguments, same scratch);
   * dense_summary: mix_summary() for L = K (resp point-major (n1 - n0) x
   *   K; scratch: threads x mix_summary_scratch doubles, irows: threads x
   *   SVI_BLOCK ints). */
  void (*dense_local)(const mix_eval *ev, const mix_data *x, svi_len n0, svi_len n1,
                      double *ent, double *dscratch, double *Nk, double *S,
                      double *sscratch, int *irows, double *t_summary);
  void (*dense_summary)(const mix_data *x, svi_len n0, svi_len n1, int K,
                        const double *resp, int threads, double *Nk, double *S,
                        double *scratch, int *irows);
  /* optional (NULL for models of independent components): doubles of the
   * shared posterior, and its computation into buf from the K components'
   * counts and statistics (sets pr->shared = buf and pr->shared_objective;
   * returns 0, or nonzero when a matrix is not positive definite) */
  svi_len (*shared_size)(int D);
  int (*prepare)(mix_prior *pr, int K, int D, const double *Nk, const double *S,
                 double *buf);
};
extern const mix_obs mix_obs_gauss, mix_obs_zm, mix_obs_diag, mix_obs_mult, mix_obs_tied,
    mix_obs_sph;
/* The table of likelihood lik (MIX_GAUSS..MIX_MULT), or NULL. */
const mix_obs *mix_obs_of(int lik);

/* Number of doubles of the sufficient statistic of one component. */
static inline svi_len mix_stat_size(const mix_obs *obs, int D) {
  return obs->stat_size(D);
}

/* ---- mix-local.c ---- */
/* E[ln pi_k] (point = 0) or ln E[pi_k] (point = 1) into out[K]. */
void mix_alloc_weights(const mix_prior *pr, int K, const double *Nk, int point,
                       double *out);
/* The allocation part of the ELBO at the optimal q(pi) for counts Nk. */
double mix_alloc_objective(const mix_prior *pr, int K, const double *Nk);
/* Fill ev (arrays allocated by the caller) from summaries. Returns 0, or
 * k + 1 for the first component k whose scale matrix is not positive
 * definite. Components are built in parallel. scratch: 2 K doubles. */
int mix_eval_build(mix_eval *ev, const mix_prior *pr, int K, int D, const double *Nk,
                   const double *S, int point, int threads, double *scratch);
/* Log-weights of points [n0, n0 + nb) into W (nb x K, point-major). */
void mix_block_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                       double *W, double *scratch);
/* Per-thread scratch doubles needed by mix_block_weights. */
svi_len mix_weights_scratch(const mix_obs *obs, int D, int K);

svi_len mix_local_scratch(const mix_obs *obs, int D, int K);
/* out[i] = ln sum_k exp(W[i K + k]) for nb rows of K log-weights.
 * d: K doubles of scratch. */
void mix_logsumexp_rows(const double *W, int nb, int K, double *out, double *d);
/* Local step over points [n0, n1): top-L responsibilities (indices and
 * values, L per point; for L = K only the values, component j at entry j,
 * and resp_idx may be NULL) and each point's entropy. Scratch: threads x
 * mix_local_scratch doubles and threads x K ints. Nk non-NULL (only with
 * one thread, L = K and a model with dense_local): the batch summary Nk, S
 * is computed along the way instead (mix_summary's scratch: sscratch,
 * irows), resp_r is not written and *t_summary gets the summary's share of
 * the time. */
void mix_local(const mix_eval *ev, const mix_data *x, svi_len n0, svi_len n1, int L,
               int threads, int *resp_idx, double *resp_r, double *ent, double *dscratch,
               int *iscratch, double *Nk, double *S, double *sscratch, int *irows,
               double *t_summary);
/* Points are bucketed by component in this many fixed chunks. */
#define MIX_BUCKET_CHUNKS 64
/* Batch summary: Nk[K] and S (K x P, component-major) from the
 * responsibilities of points [n0, n1). Scratch: xbuf of threads x
 * mix_summary_scratch doubles, pbuf of threads x SVI_BLOCK; and unless L =
 * K (dense: no buckets), start[K + 1], cnt[MIX_BUCKET_CHUNKS K], list_n and
 * list_r of (n1 - n0) L entries. */
void mix_summary(const mix_data *x, svi_len n0, svi_len n1, int K, int L,
                 const int *resp_idx, const double *resp_r, int threads, double *Nk,
                 double *S, svi_len *start, svi_len *cnt, svi_len *list_n, double *list_r,
                 double *xbuf, svi_len *pbuf);
svi_len mix_summary_scratch(const mix_obs *obs, int D, int K);

/* ---- mix-global.c ---- */
/* Memoized swap of one batch's summaries: out = max(N - oN + nN, 0),
 * out S = S - oS + nS (oN, oS NULL: nothing to remove, as in lap 0). */
void mix_global_memoized(svi_len K, svi_len P, const double *N, const double *S,
                         const double *oN, const double *oS, const double *nN,
                         const double *nS, double *outN, double *outS);
/* Stochastic step: out = (1 - rho) old + (rho w) new, w = N / batch size. */
void mix_global_stochastic(svi_len K, svi_len P, const double *N, const double *S,
                           const double *nN, const double *nS, double rho, double w,
                           double *outN, double *outS);
/* Posterior-mean mixing weights E[pi_k] into w[K]. */
void mix_point_weights(const mix_prior *pr, int K, const double *Nk, double *w);
/* Point estimates of one component (the tables' point_component) from its
 * count N and statistic S: Gaussians: mean[D] and spread = the D x D
 * covariance B / nu (column-major); diagonal: mean[D] and spread =
 * variances 1 / E[lambda_d]; multinomial: mean = the word distribution
 * E[phi] (V = D). */

/* ---- mix-init.c ---- */
/* k-means++ seeding (Bregman divergence fit to the likelihood) when
 * plusplus != 0, else K distinct uniform draws. scale[D] weights the
 * squared Euclidean distance of the Gaussian models. Writes K 0-based
 * indices into out. dist: 3 N doubles of scratch; work: D + N doubles. */
void mix_init_seeds(const mix_data *x, int K, int plusplus, const double *scale,
                    uint64_t seed, int threads, svi_len *out, double *dist, double *work);
/* The divergences of the tables' seed_dist: scaled squared Euclidean
 * distance (Gaussian and diagonal models), squared residual after
 * projection on the seed's axis (zero-mean model), KL to the seed
 * document's smoothed word distribution (multinomial). */
void mix_seed_dist_sq(const mix_data *x, svi_len cidx, const double *scale, int threads,
                      const double *cur, double *dist, double *work, int first);
void mix_seed_dist_axis(const mix_data *x, svi_len cidx, const double *scale, int threads,
                        const double *cur, double *dist, double *work, int first);
void mix_seed_dist_kl(const mix_data *x, svi_len cidx, const double *scale, int threads,
                      const double *cur, double *dist, double *work, int first);

/* Centre the columns of X (N x D, column-major) into Xc (zero_mean: copy),
 * with the column means center[D] and the mean squares of Xc spread[D]
 * (sums in long double, as R's colMeans()), and each column's smallest and
 * largest value in range[2 d], range[2 d + 1] (for the magnitude check).
 * bad[d] gets the first row of column d that is NA, NaN or infinite, or -1;
 * returns 1 if any is. */
int mix_center_columns(const double *X, svi_len N, int D, int zero_mean, int threads,
                       double *Xc, double *center, double *spread, double *range,
                       svi_len *bad);

#endif
