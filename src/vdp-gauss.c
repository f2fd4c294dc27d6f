/* Normal-Wishart maths over sufficient statistics (see vdp-gauss.h). */
#include <math.h>
#include <string.h>
#include "svi.h"
#include "vdp-gauss.h"

#define LOG_2PI 1.8378770664093454836
#define LOG_PI 1.1447298858494001741
#define LOG_2 0.69314718055994530942

size_t gw_nw_doubles(int D) {
  return (size_t)D + (size_t)D * D + (size_t)gw_packed_size(D) + (size_t)D;
}

void gw_nw_bind(gw_nw *g, int D, double *mem) {
  g->D = D;
  g->P = gw_packed_size(D);
  g->m = mem;
  g->W = mem + D;
  g->Wp = g->W + (size_t)D * D;
  g->Wm = g->Wp + g->P;
}

int gw_chol(double *A, int D) {
  for (int j = 0; j < D; j++) {
    double s = A[j + (size_t)j * D];
    for (int k = 0; k < j; k++) s -= A[j + (size_t)k * D] * A[j + (size_t)k * D];
    if (!(s > 0.0)) return 1;
    double d = sqrt(s);
    A[j + (size_t)j * D] = d;
    for (int i = j + 1; i < D; i++) {
      double t = A[i + (size_t)j * D];
      for (int k = 0; k < j; k++) t -= A[i + (size_t)k * D] * A[j + (size_t)k * D];
      A[i + (size_t)j * D] = t / d;
    }
  }
  return 0;
}

/* Inverse of the SPD matrix A (D x D) into out; returns log det A, or NAN
 * when A is not positive definite. work: D^2 doubles. */
static double spd_inverse(const double *A, int D, double *out, double *work) {
  double *L = work;
  memcpy(L, A, sizeof(double) * (size_t)D * D);
  if (gw_chol(L, D)) return NAN;
  double logdet = 0.0;
  for (int j = 0; j < D; j++) logdet += 2.0 * log(L[j + (size_t)j * D]);
  /* invert L in place (lower triangular) */
  for (int j = 0; j < D; j++) {
    L[j + (size_t)j * D] = 1.0 / L[j + (size_t)j * D];
    for (int i = j + 1; i < D; i++) {
      double s = 0.0;
      for (int k = j; k < i; k++) s += L[i + (size_t)k * D] * L[k + (size_t)j * D];
      L[i + (size_t)j * D] = -s / L[i + (size_t)i * D];
    }
  }
  /* A^-1 = L^-T L^-1 */
  for (int j = 0; j < D; j++) {
    for (int i = j; i < D; i++) {
      double s = 0.0;
      for (int k = i; k < D; k++) s += L[k + (size_t)i * D] * L[k + (size_t)j * D];
      out[i + (size_t)j * D] = s;
      out[j + (size_t)i * D] = s;
    }
  }
  return logdet;
}

void gw_pack_outer(const double *x, int D, double *out) {
  int idx = 0;
  for (int j = 0; j < D; j++)
    for (int i = 0; i <= j; i++) out[idx++] = x[i] * x[j];
}

static double wishart_lnB(double logdet_W, double nu, int D) {
  double s = -0.5 * nu * logdet_W - 0.5 * nu * D * LOG_2 - 0.25 * D * (D - 1) * LOG_PI;
  for (int d = 1; d <= D; d++) s -= svi_lgamma(0.5 * (nu + 1 - d));
  return s;
}

/* Fills the derived fields of g from beta, nu, m and the inverse scale
 * matrix Winv (destroyed). */
static int finish(gw_nw *g, double *Winv, double *work) {
  const int D = g->D;
  double logdet_inv = spd_inverse(Winv, D, g->W, work);
  if (isnan(logdet_inv)) return 1;
  g->logdet_W = -logdet_inv;
  double e = D * LOG_2 + g->logdet_W;
  for (int d = 1; d <= D; d++) e += svi_digamma(0.5 * (g->nu + 1 - d));
  g->e_logdet_L = e;
  g->cst = 0.5 * e - 0.5 * D * LOG_2PI - 0.5 * D / g->beta;
  int idx = 0;
  for (int j = 0; j < D; j++)
    for (int i = 0; i <= j; i++)
      g->Wp[idx++] = (i == j ? 1.0 : 2.0) * g->W[i + (size_t)j * D];
  double mWm = 0.0;
  for (int i = 0; i < D; i++) {
    double s = 0.0;
    for (int k = 0; k < D; k++) s += g->W[i + (size_t)k * D] * g->m[k];
    g->Wm[i] = s;
    mWm += s * g->m[i];
  }
  g->mWm = mWm;
  return 0;
}

int gw_prior_init(gw_prior *p, int D, const double *m0, double beta0, double nu0,
                  const double *W0inv, double *mem, double *work) {
  p->D = D;
  p->P = gw_packed_size(D);
  p->beta0 = beta0;
  p->nu0 = nu0;
  p->m0 = m0;
  p->W0inv = W0inv;
  gw_nw_bind(&p->as_q, D, mem);
  p->as_q.beta = beta0;
  p->as_q.nu = nu0;
  memcpy(p->as_q.m, m0, sizeof(double) * D);
  double *Winv = work;
  memcpy(Winv, W0inv, sizeof(double) * (size_t)D * D);
  if (finish(&p->as_q, Winv, work + (size_t)D * D)) return 1;
  p->logdet_W0 = p->as_q.logdet_W;
  p->lnB0 = wishart_lnB(p->logdet_W0, nu0, D);
  return 0;
}

int gw_posterior(gw_nw *g, const gw_prior *p, double N, const double *s1,
                 const double *s2, double *work) {
  const int D = p->D;
  g->beta = p->beta0 + N;
  g->nu = p->nu0 + N;
  for (int i = 0; i < D; i++) g->m[i] = (p->beta0 * p->m0[i] + s1[i]) / g->beta;
  double *Winv = work;
  int idx = 0;
  for (int j = 0; j < D; j++) {
    for (int i = 0; i <= j; i++, idx++) {
      double v = p->W0inv[i + (size_t)j * D] + s2[idx] +
                 p->beta0 * p->m0[i] * p->m0[j] - g->beta * g->m[i] * g->m[j];
      Winv[i + (size_t)j * D] = v;
      Winv[j + (size_t)i * D] = v;
    }
  }
  if (finish(g, Winv, work + (size_t)D * D)) {
    /* fall back to the prior (keeps the fit defined; the caller reports it) */
    g->beta = p->beta0;
    g->nu = p->nu0;
    memcpy(g->m, p->m0, sizeof(double) * D);
    memcpy(Winv, p->W0inv, sizeof(double) * (size_t)D * D);
    finish(g, Winv, work + (size_t)D * D);
    return 1;
  }
  return 0;
}

double gw_kl(const gw_nw *g, const gw_prior *p) {
  const int D = p->D;
  double quad = 0.0, tr = 0.0;
  for (int i = 0; i < D; i++) {
    double s = 0.0;
    for (int k = 0; k < D; k++) s += g->W[i + (size_t)k * D] * (g->m[k] - p->m0[k]);
    quad += s * (g->m[i] - p->m0[i]);
  }
  for (size_t i = 0; i < (size_t)D * D; i++) tr += p->W0inv[i] * g->W[i];
  double lnB = wishart_lnB(g->logdet_W, g->nu, D);
  return 0.5 * D * log(g->beta / p->beta0) - 0.5 * D + lnB - p->lnB0 +
         0.5 * (g->nu - p->nu0) * g->e_logdet_L - 0.5 * g->nu * D +
         0.5 * p->beta0 * (D / g->beta + g->nu * quad) + 0.5 * g->nu * tr;
}

double gw_expected_loglik(const gw_nw *g, double N, const double *s1, const double *s2) {
  if (N <= 0.0) return 0.0;
  const int P = g->P, D = g->D;
  double t = 0.0, u = 0.0;
  for (int i = 0; i < P; i++) t += g->Wp[i] * s2[i];
  for (int i = 0; i < D; i++) u += g->Wm[i] * s1[i];
  return N * g->cst - 0.5 * g->nu * (t - 2.0 * u + N * g->mWm);
}
