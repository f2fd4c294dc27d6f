/* Mixture models with L-sparse posteriors (Hughes & Sudderth): the shared
 * types of the local step (mix-local.c), the initialisation (mix-init.c) and
 * the observation models (obs-gauss.c, obs-diag.c, obs-mult.c).
 * Plain C: no R API. */
#ifndef SPARSEVI_MIX_H
#define SPARSEVI_MIX_H

#include "svi.h"
#include "linalg.h"

enum { MIX_GAUSS = 0, MIX_ZM = 1, MIX_DIAG = 2, MIX_MULT = 3 };
enum { MIX_DIRICHLET = 0, MIX_DP = 1 };

/* Random stream offset of the mixture engine ("MIX" in ASCII, shifted). */
#define MIX_STREAM_OFFSET 0x4d49580000ULL

/* Data: numeric points (X column-major N x D) or documents (dtm, D = V). */
typedef struct {
  int lik;
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
  double conc; /* alpha (Dirichlet) or gamma (DP) */
  double kappa0, nu0, eta;
  const double *m0; /* D */
  const double *B0; /* D (D + 1) / 2 */
  const double *b0; /* D */
  double logdet_B0; /* ln |B0|, set by the caller */
} mix_prior;

/* Evaluator of log-weights W_nk = c_k + (observation term of x_n):
 * full:  - 1/2 || R_k^-1 (x - m_k) ||^2, R_k^-1 a packed lower triangle;
 * diag:  - 1/2 sum_d (f_kd (x_d - m_kd))^2;
 * mult:  sum_v n_v logb[v K + k] (word-major table).
 * Built either from expectations under q (the VB local step) or from point
 * estimates (held-out density). */
typedef struct {
  int lik, K, D;
  double *c;        /* K */
  double *mean;     /* K x D, NULL for the zero-mean model */
  double *fac;      /* full: K x D(D+1)/2 packed inverse factors; diag: K x D */
  double *inv_diag; /* full: K x D reciprocals of the factors' diagonals */
  double *shift;    /* gaussian: K x D, R_k^-1 m_k */
  double *logb;     /* mult: V x K */
} mix_eval;

/* Number of doubles of the sufficient statistic of one component. */
static inline svi_len mix_stat_size(int lik, int D) {
  svi_len tri = (svi_len)D * (D + 1) / 2;
  switch (lik) {
  case MIX_GAUSS:
    return D + tri;
  case MIX_ZM:
    return tri;
  case MIX_DIAG:
    return 2 * (svi_len)D;
  default:
    return D;
  }
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
svi_len mix_weights_scratch(int lik, int D, int K);
/* Add r * t(x_n) into the statistic S_k (P doubles) of one component. */
void mix_add_stat(const mix_data *x, svi_len n, double r, double *Sk, double *xbuf);

svi_len mix_local_scratch(int lik, int D, int K);
/* out[i] = ln sum_k exp(W[i K + k]) for nb rows of K log-weights.
 * d: K doubles of scratch. */
void mix_logsumexp_rows(const double *W, int nb, int K, double *out, double *d);
/* Local step over points [n0, n1): top-L responsibilities (indices and
 * values, L per point; for L = K only the values, component j at entry j,
 * and resp_idx may be NULL) and each point's entropy. Scratch: threads x
 * mix_local_scratch doubles and threads x K ints. Nk non-NULL (only with
 * one thread, L = K and a full-covariance model): the batch summary Nk, S
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
svi_len mix_summary_scratch(int lik, int D, int K);

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
/* Point estimates of one component from its count N and statistic S:
 * Gaussians: mean[D] and spread = the D x D covariance B / nu (column-major);
 * diagonal: mean[D] and spread = variances 1 / E[lambda_d]; multinomial:
 * mean = the word distribution E[phi] (V = D). scratch: D (D + 1) / 2
 * doubles. */
int mix_point_component(const mix_prior *pr, int D, double N, const double *S,
                        double *mean, double *spread, double *scratch);

/* ---- obs-diag.c / obs-mult.c (obs-gauss.h has the Gaussians) ---- */
void diag_eval_component(const mix_prior *pr, int D, double N, const double *S, int point,
                         double *c, double *mean, double *fac);
double diag_objective(const mix_prior *pr, int D, double N, const double *S);
/* Posterior means m[D] and variances b / a (the inverse of E[lambda]). */
void diag_point_component(const mix_prior *pr, int D, double N, const double *S,
                          double *m, double *var);
void diag_block_weights(const mix_eval *ev, const double *X, svi_len N, svi_len n0,
                        int nb, double *W, double *q);
void diag_add_stat(const double *x, int D, double r, double *Sk);

void mult_eval_table(const mix_prior *pr, int K, int V, const double *S, int point,
                     double *c, double *logb);
double mult_objective(const mix_prior *pr, int V, const double *S);
void mult_doc_weights(const mix_eval *ev, const svi_dtm *x, svi_len d, double *w);
void mult_add_stat(const svi_dtm *x, svi_len d, double r, double *Sk);

/* ---- mix-init.c ---- */
/* k-means++ seeding (Bregman divergence fit to the likelihood) when
 * plusplus != 0, else K distinct uniform draws. scale[D] weights the
 * squared Euclidean distance of the Gaussian models. Writes K 0-based
 * indices into out. dist: 3 N doubles of scratch; work: D + N doubles. */
void mix_init_seeds(const mix_data *x, int K, int plusplus, const double *scale,
                    uint64_t seed, int threads, svi_len *out, double *dist, double *work);

/* Centre the columns of X (N x D, column-major) into Xc (zero_mean: copy),
 * with the column means center[D] and the mean squares of Xc spread[D]
 * (sums in long double, as R's colMeans()). bad[d] gets the first row of
 * column d that is NA, NaN or infinite, or -1; returns 1 if any is. */
int mix_center_columns(const double *X, svi_len N, int D, int zero_mean, int threads,
                       double *Xc, double *center, double *spread, svi_len *bad);

#endif
