/* Gaussian observations with a Normal-Wishart prior, over sufficient
 * statistics (count, sum x, packed sum x x^T). Written for Fast-VDP but with
 * general names so the mixture engine can share it.
 *
 * Prior:  Lambda ~ Wishart(nu0, W0), mu | Lambda ~ N(m0, (beta0 Lambda)^-1).
 * Symmetric D x D matrices of statistics are packed upper triangles, column by
 * column: entry (i, j), i <= j, sits at j (j + 1) / 2 + i; P = D (D + 1) / 2. */
#ifndef SPARSEVI_VDP_GAUSS_H
#define SPARSEVI_VDP_GAUSS_H

#include <stddef.h>

/* A Normal-Wishart distribution with the expectations a score needs. */
typedef struct {
  int D, P;
  double beta, nu;
  double *m;  /* D */
  double *W;  /* D x D, full */
  double *Wp; /* P, packed W with off-diagonal entries doubled (for traces) */
  double *Wm; /* D, W m */
  double mWm, logdet_W, e_logdet_L;
  double cst; /* 1/2 E ln|Lambda| - D/2 ln 2 pi - D / (2 beta) */
} gw_nw;

typedef struct {
  int D, P;
  double beta0, nu0;
  const double *m0;    /* D */
  const double *W0inv; /* D x D, full */
  double logdet_W0;
  double lnB0;  /* log normaliser of Wishart(W0, nu0) */
  gw_nw as_q;   /* the prior itself, used to score the infinite tail */
} gw_prior;

static inline int gw_packed_size(int D) { return D * (D + 1) / 2; }
/* Doubles of storage one gw_nw needs. */
size_t gw_nw_doubles(int D);
/* Points g's arrays into mem (gw_nw_doubles(D) doubles). */
void gw_nw_bind(gw_nw *g, int D, double *mem);
/* Fills p from (m0, beta0, nu0, W0inv); mem holds gw_nw_doubles(D) doubles,
 * work 2 D^2. Returns 0, or 1 when W0inv is not positive definite. */
int gw_prior_init(gw_prior *p, int D, const double *m0, double beta0, double nu0,
                  const double *W0inv, double *mem, double *work);
/* Posterior given statistics (N, s1 = sum x, s2 = packed sum x x^T).
 * work holds 2 D^2 doubles. Returns 0, or 1 when the scale matrix is not
 * positive definite (then g is left as the prior). */
int gw_posterior(gw_nw *g, const gw_prior *p, double N, const double *s1,
                 const double *s2, double *work);
/* KL(g || prior). */
double gw_kl(const gw_nw *g, const gw_prior *p);
/* sum over the data behind (N, s1, s2) of E_g[ln N(x | mu, Lambda^-1)]. */
double gw_expected_loglik(const gw_nw *g, double N, const double *s1, const double *s2);
/* Packed outer product x x^T. */
void gw_pack_outer(const double *x, int D, double *out);
/* In-place Cholesky A = L L^T (lower triangle of the column-major A);
 * returns 0, or 1 when A is not positive definite. */
int gw_chol(double *A, int D);

/* Average over the data behind (n, s1, s2) of E_g[ln N(x | mu, Lambda^-1)]:
 * cst - nu/2 (tr(W s2)/n - 2 (W m).s1/n + m'W m). */
static inline double gw_score(const gw_nw *g, double n, const double *s1,
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
