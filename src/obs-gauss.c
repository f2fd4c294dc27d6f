/* Full-covariance Gaussian observation models: Normal-Wishart ("gaussian")
 * and zero-mean Wishart ("zm_gaussian"). Every quadratic form goes through a
 * Cholesky factor computed once per component per global update; the
 * per-point work is a forward substitution vectorised across a block of
 * points. */
#include <math.h>
#include <string.h>
#include "obs-gauss.h"

/* Ask for vectorisation of the loops over a block's points (OpenMP 4 simd;
 * ignored without OpenMP). Each lane is a different point, so results do not
 * change with the vector width. */
#ifdef _OPENMP
#define SVI_SIMD _Pragma("omp simd")
#else
#define SVI_SIMD
#endif

#define LN_2PI 1.8378770664093454836
#define LN_PI 1.1447298858494001741
/* points whose quadratic forms are accumulated together in registers */
#define GAUSS_CHUNK 8

int svi_chol_packed(double *A, int D) {
  for (int i = 0; i < D; i++) {
    double *Ri = A + svi_tri(i, 0);
    for (int j = 0; j <= i; j++) {
      const double *Rj = A + svi_tri(j, 0);
      double s = Ri[j];
      for (int k = 0; k < j; k++) s -= Ri[k] * Rj[k];
      if (j == i) {
        if (!(s > 0) || !isfinite(s)) return i + 1;
        Ri[i] = sqrt(s);
      } else {
        Ri[j] = s / Rj[j];
      }
    }
  }
  return 0;
}

double svi_lmvgamma(double a, int D) {
  double s = 0.25 * D * (D - 1) * LN_PI;
  for (int i = 0; i < D; i++) s += svi_lgamma(a - 0.5 * i);
  return s;
}

double gauss_posterior(const mix_prior *pr, int zero_mean, int D, double N,
                       const double *S, double *B, double *m, double *kappa) {
  svi_len tri = (svi_len)D * (D + 1) / 2;
  const double *Sxx = zero_mean ? S : S + D;
  for (svi_len p = 0; p < tri; p++) B[p] = pr->B0[p] + Sxx[p];
  if (!zero_mean) {
    double k0 = pr->kappa0, kn = k0 + N;
    for (int i = 0; i < D; i++) m[i] = (k0 * pr->m0[i] + S[i]) / kn;
    for (int i = 0; i < D; i++) {
      double *Bi = B + svi_tri(i, 0);
      double a = k0 * pr->m0[i], b = kn * m[i];
      for (int j = 0; j <= i; j++) Bi[j] += a * pr->m0[j] - b * m[j];
    }
    *kappa = kn;
  } else {
    *kappa = 0;
  }
  return pr->nu0 + N;
}

/* In place: the packed lower factor R becomes R^-1 (also lower), by forward
 * substitution on the columns of the identity. inv_diag holds 1 / R_ii. */
static void svi_tri_invert(double *R, const double *inv_diag, int D) {
  /* (R^-1)_ij = -(sum_{j <= l < i} R_il (R^-1)_lj) / R_ii for j < i. Rows
   * go top to bottom (rows above are already inverted); within row i, left
   * to right, entry j is overwritten only after its last use. */
  for (int i = 0; i < D; i++) {
    double *Ri = R + svi_tri(i, 0);
    for (int j = 0; j < i; j++) {
      double s = 0;
      for (int l = j; l < i; l++) s += Ri[l] * R[svi_tri(l, j)];
      Ri[j] = -s * inv_diag[i];
    }
    Ri[i] = inv_diag[i];
  }
}

int gauss_eval_component(const mix_prior *pr, int zero_mean, int D, double N,
                         const double *S, int point, double *c, double *mean, double *fac,
                         double *inv_diag, double *shift) {
  svi_len tri = (svi_len)D * (D + 1) / 2;
  double kappa;
  double nu = gauss_posterior(pr, zero_mean, D, N, S, fac, mean, &kappa);
  double inv_nu = 1.0 / nu;
  for (svi_len p = 0; p < tri; p++) fac[p] *= inv_nu;
  int st = svi_chol_packed(fac, D);
  if (st) return st;
  double half_logdet = 0; /* 1/2 ln |B / nu| */
  for (int i = 0; i < D; i++) {
    double r = fac[svi_tri(i, i)];
    half_logdet += log(r);
    inv_diag[i] = 1.0 / r;
  }
  svi_tri_invert(fac, inv_diag, D);
  if (shift) {
    for (int i = 0; i < D; i++) {
      const double *Ri = fac + svi_tri(i, 0);
      double s = 0;
      for (int j = 0; j <= i; j++) s += Ri[j] * mean[j];
      shift[i] = s;
    }
  }
  if (point) {
    *c = -0.5 * D * LN_2PI - half_logdet;
  } else {
    /* E ln |Lambda| = sum_i psi((nu + 1 - i) / 2) + D ln 2 - ln |B| */
    double elogdet = D * M_LN2 - 2 * half_logdet - D * log(nu);
    for (int i = 1; i <= D; i++) elogdet += svi_digamma(0.5 * (nu + 1 - i));
    *c = -0.5 * D * LN_2PI + 0.5 * elogdet;
    if (!zero_mean) *c -= 0.5 * D / kappa;
  }
  return 0;
}

double gauss_objective(const mix_prior *pr, int zero_mean, int D, double N,
                       const double *S, double *scratch) {
  double kappa;
  double *m = scratch + (svi_len)D * (D + 1) / 2;
  double nu = gauss_posterior(pr, zero_mean, D, N, S, scratch, m, &kappa);
  if (svi_chol_packed(scratch, D)) return NAN;
  double logdet = 0;
  for (int i = 0; i < D; i++) logdet += 2 * log(scratch[svi_tri(i, i)]);
  double out = -0.5 * N * D * LN_PI + 0.5 * pr->nu0 * pr->logdet_B0 - 0.5 * nu * logdet +
               svi_lmvgamma(0.5 * nu, D) - svi_lmvgamma(0.5 * pr->nu0, D);
  if (!zero_mean) out += 0.5 * D * log(pr->kappa0 / kappa);
  return out;
}

void gauss_block_weights(const mix_eval *ev, const double *X, svi_len N, svi_len n0,
                         int nb, double *W, double *scratch) {
  int K = ev->K, D = ev->D;
  svi_len tri = (svi_len)D * (D + 1) / 2;
  /* The block's points, padded to SVI_BLOCK lanes, dimension-major. */
  double *restrict xb = scratch;
  for (int i = 0; i < D; i++) {
    const double *xi = X + (svi_len)i * N + n0;
    double *xbi = xb + (svi_len)i * SVI_BLOCK;
    for (int n = 0; n < nb; n++) xbi[n] = xi[n];
    for (int n = nb; n < SVI_BLOCK; n++) xbi[n] = 0;
  }
  for (int k = 0; k < K; k++) {
    const double *Rinv = ev->fac + (svi_len)k * tri;
    const double *sh = ev->shift ? ev->shift + (svi_len)k * D : NULL;
    double ck = ev->c[k];
    /* z = R^-1 x - R^-1 m, accumulated in registers for GAUSS_CHUNK points
     * at a time: one load per multiply-add. */
    for (int c0 = 0; c0 < nb; c0 += GAUSS_CHUNK) {
      double q[GAUSS_CHUNK], a[GAUSS_CHUNK];
      for (int l = 0; l < GAUSS_CHUNK; l++) q[l] = 0;
      for (int i = 0; i < D; i++) {
        const double *Ri = Rinv + svi_tri(i, 0);
        double s0 = sh ? -sh[i] : 0.0;
        for (int l = 0; l < GAUSS_CHUNK; l++) a[l] = s0;
        for (int j = 0; j <= i; j++) {
          const double *restrict xj = xb + (svi_len)j * SVI_BLOCK + c0;
          double r = Ri[j];
          SVI_SIMD
          for (int l = 0; l < GAUSS_CHUNK; l++) a[l] += r * xj[l];
        }
        for (int l = 0; l < GAUSS_CHUNK; l++) q[l] += a[l] * a[l];
      }
      int m = nb - c0 < GAUSS_CHUNK ? nb - c0 : GAUSS_CHUNK;
      for (int l = 0; l < m; l++) W[(svi_len)(c0 + l) * K + k] = ck - 0.5 * q[l];
    }
  }
}

void gauss_add_stat(const double *x, int D, int zero_mean, double r, double *Sk) {
  if (!zero_mean) {
    for (int i = 0; i < D; i++) Sk[i] += r * x[i];
    Sk += D;
  }
  for (int i = 0; i < D; i++) {
    double rxi = r * x[i];
    double *Si = Sk + svi_tri(i, 0);
    SVI_SIMD
    for (int j = 0; j <= i; j++) Si[j] += rxi * x[j];
  }
}
