/* Full-covariance Gaussian observation models: Normal-Wishart ("gaussian")
 * and zero-mean Wishart ("zm_gaussian"). Every quadratic form goes through a
 * Cholesky factor computed once per component per global update; the
 * per-point work is a forward substitution vectorised across a block of
 * points. */
#include <math.h>
#include <string.h>
#include <time.h>
#include "obs-gauss.h"
#include "mix-simd.h"

/* (SVI_SIMD, svi.h, on the loops over a block's points: each lane is a
 * different point, so results do not change with the vector width) */

#define LN_2PI 1.8378770664093454836
#define LN_PI 1.1447298858494001741

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

/* Point estimates (predict(), the fit's log-likelihood and covariances) use
 * the posterior mean of the covariance, E[Sigma] = B / (nu - D - 1), for
 * nu >= D + 2 (always with the default nu0 = D + 2, where nu - D - 1 =
 * N_k + 1). Below that (a smaller nu0 and a nearly empty component, where
 * the mean is huge or undefined) the divisor is min(nu, 1): continuous in
 * nu, and the covariance never below B / nu. B / nu = E[Lambda]^-1, the
 * local step's, shrinks a component of N_k points by N_k / (N_k + nu0):
 * on small data (swiss: 7 points in 6 dimensions, nu0 = 8) that moved the
 * log-likelihood far below the MLE's and ranked the starts wrongly
 * (inst/bench/results/mixture.txt, part robust). */
static double gauss_point_divisor(double nu, int D) {
  return fmin(nu, fmax(nu - D - 1, 1.0));
}

int gauss_eval_component(const mix_prior *pr, int zero_mean, int D, double N,
                         const double *S, int point, double *c, double *mean, double *fac,
                         double *inv_diag, double *shift) {
  svi_len tri = (svi_len)D * (D + 1) / 2;
  double kappa;
  double nu = gauss_posterior(pr, zero_mean, D, N, S, fac, mean, &kappa);
  /* the local step uses E[Lambda] = nu B^-1; point estimates use the
   * covariance's posterior mean (gauss_point_divisor) */
  double inv_nu = 1.0 / (point ? gauss_point_divisor(nu, D) : nu);
  for (svi_len p = 0; p < tri; p++) fac[p] *= inv_nu;
  int st = svi_chol_packed(fac, D);
  if (st) return st;
  double half_logdet = 0; /* 1/2 ln |B / nu| (point: |B / divisor|) */
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

/* Vector type of two doubles (GCC/Clang vector extensions: plain SSE2 on
 * x86-64, no -march flag needed). Lanes are different points, so the
 * scalar fallback below does exactly the same arithmetic per point. */
#if defined(__GNUC__) || defined(__clang__)
#define GAUSS_VEC 1
typedef double gauss_v2 __attribute__((vector_size(16)));
static inline gauss_v2 v2_load(const double *p) {
  gauss_v2 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline gauss_v2 v2_set1(double a) {
  gauss_v2 v = {a, a};
  return v;
}
#endif

/* The 2 x 4 dot products of rows a0, a1 with rows b0..b3 over m (even)
 * entries, each in two lanes (even and odd entries) added at the end. */
static void gauss_dot24(const double *restrict a0, const double *restrict a1,
                        const double *restrict b, int m, double *out) {
  const double *b0 = b, *b1 = b + SVI_BLOCK, *b2 = b + 2 * SVI_BLOCK,
               *b3 = b + 3 * SVI_BLOCK;
#ifdef GAUSS_VEC
  gauss_v2 s00 = v2_set1(0), s01 = s00, s02 = s00, s03 = s00;
  gauss_v2 s10 = s00, s11 = s00, s12 = s00, s13 = s00;
  for (int l = 0; l < m; l += 2) {
    gauss_v2 u = v2_load(a0 + l), v = v2_load(a1 + l);
    gauss_v2 x0 = v2_load(b0 + l), x1 = v2_load(b1 + l), x2 = v2_load(b2 + l),
             x3 = v2_load(b3 + l);
    s00 += u * x0;
    s01 += u * x1;
    s02 += u * x2;
    s03 += u * x3;
    s10 += v * x0;
    s11 += v * x1;
    s12 += v * x2;
    s13 += v * x3;
  }
  out[0] = s00[0] + s00[1];
  out[1] = s01[0] + s01[1];
  out[2] = s02[0] + s02[1];
  out[3] = s03[0] + s03[1];
  out[4] = s10[0] + s10[1];
  out[5] = s11[0] + s11[1];
  out[6] = s12[0] + s12[1];
  out[7] = s13[0] + s13[1];
#else
  double e[8] = {0}, o[8] = {0};
  const double *a[2] = {a0, a1}, *bb[4] = {b0, b1, b2, b3};
  for (int l = 0; l < m; l += 2) {
    for (int r = 0; r < 2; r++) {
      for (int t = 0; t < 4; t++) {
        e[4 * r + t] += a[r][l] * bb[t][l];
        o[4 * r + t] += a[r][l + 1] * bb[t][l + 1];
      }
    }
  }
  for (int t = 0; t < 8; t++) out[t] = e[t] + o[t];
#endif
}

svi_len gauss_stat_scratch(int D) {
  return 2 * (svi_len)(D + 4) * SVI_BLOCK;
}

void gauss_chunk_stat(const double *X, svi_len N, int D, int zero_mean,
                      const svi_len *pts, const double *r, int m, double *Sk,
                      double *scratch) {
  /* Gather the points (dimension-major, padded with zeros to an even count
   * of points and to whole groups of dimensions) and their
   * responsibility-weighted copies. */
  int mp = m + (m & 1), Dp = (D + 3) / 4 * 4;
  double *restrict xb = scratch, *restrict rx = scratch + (svi_len)(D + 4) * SVI_BLOCK;
  for (int i = 0; i < D; i++) {
    const double *Xi = X + (svi_len)i * N;
    double *xi = xb + (svi_len)i * SVI_BLOCK, *ri = rx + (svi_len)i * SVI_BLOCK;
    for (int l = 0; l < m; l++) {
      xi[l] = Xi[pts[l]];
      ri[l] = r[l] * xi[l];
    }
    if (mp > m) xi[m] = ri[m] = 0;
  }
  for (int i = D; i < Dp; i++) {
    memset(xb + (svi_len)i * SVI_BLOCK, 0, sizeof(double) * mp);
    memset(rx + (svi_len)i * SVI_BLOCK, 0, sizeof(double) * mp);
  }
  if (!zero_mean) {
    for (int i = 0; i < D; i++) {
      const double *ri = rx + (svi_len)i * SVI_BLOCK;
      double s = 0;
      for (int l = 0; l < m; l++) s += ri[l];
      Sk[i] += s;
    }
    Sk += D;
  }
  /* Rows i, i + 1 against columns j..j + 3 (j <= i + 1); entries above the
   * diagonal or past D are computed on padding and dropped. Every entry is
   * its own dot product, so the grouping does not change its value. */
  for (int i = 0; i < D; i += 2) {
    const double *r0 = rx + (svi_len)i * SVI_BLOCK, *r1 = r0 + SVI_BLOCK;
    for (int j = 0; j <= i + 1 && j < D; j += 4) {
      double d8[8];
      gauss_dot24(r0, r1, xb + (svi_len)j * SVI_BLOCK, mp, d8);
      for (int t = 0; t < 4; t++) {
        if (j + t <= i) Sk[svi_tri(i, j + t)] += d8[t];
        if (i + 1 < D && j + t <= i + 1) Sk[svi_tri(i + 1, j + t)] += d8[4 + t];
      }
    }
  }
}

/* ---- dense summaries (L = K) of the full-covariance models ----
 * Two kernels, chosen by the size P of a statistic:
 * - P > 16: per chunk of points the features phi(x) = [x, packed x x^T]
 *   (zero mean: [packed x x^T]), laid out exactly as a component's
 *   statistic, are formed once; then each component adds
 *   S_k += sum_n r_nk phi(x_n) over its points with r_nk nonzero;
 * - P <= 16: every point's responsibilities for a group of components at
 *   once, the components in vector lanes (mix_simd_dense_lanes).
 * Either way each (component, feature) sum runs over the points in order,
 * whichever thread owns the component and however the points are handed in
 * (a whole batch after its local step, or block by block during it). */

/* Points per chunk: the feature rows stay within 256 KB. A power of two
 * dividing SVI_BLOCK, so chunks never straddle blocks. */
static int dense_block(int Fp) {
  int pb = 64;
  while (pb > 8 && (size_t)pb * Fp * sizeof(double) > 262144) pb /= 2;
  return pb;
}

static int dense_width(int D, int zero_mean) {
  int P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  return (P + 3 + 31) / 32 * 32; /* room for vector stores past P */
}

/* Statistics of at most this many doubles take the component-lane path. */
#define GAUSS_LANES_MAX_P 16

svi_len gauss_dense_scratch(int D, int zero_mean, int K) {
  int Fp = dense_width(D, zero_mean), P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  if (P <= GAUSS_LANES_MAX_P) return (svi_len)(P + 2) * (K + 4) + D + 8;
  svi_len PB = dense_block(Fp);
  /* phi, K x PB responsibilities, xr, nk, then K x PB + K ints */
  return PB * Fp + (svi_len)K * PB + D + 16 + K + ((svi_len)K * PB + K + 1) / 2 + 1;
}

void gauss_dense_begin(gauss_dense_acc *a, int D, int zero_mean, int K, double *Nk,
                       double *S, double *scratch0) {
  a->D = D;
  a->zero_mean = zero_mean;
  a->K = K;
  a->P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  a->Fp = dense_width(D, zero_mean);
  a->PB = dense_block(a->Fp);
  a->lanes = a->P <= GAUSS_LANES_MAX_P;
  int W = mix_simd_width(); /* also settles the kernels before any thread starts */
  a->Kp = (K + W - 1) / W * W;
  a->units = a->lanes ? a->Kp / W : K;
  a->Nk = Nk;
  a->S = S;
  /* lanes: the (P + 1) x Kp table at the start of thread 0's scratch */
  a->T = a->lanes ? scratch0 : NULL;
  if (a->lanes)
    memset(a->T, 0, sizeof(double) * (size_t)(a->P + 1) * a->Kp);
  else
    memset(S, 0, sizeof(double) * (size_t)a->P * K);
}

void gauss_dense_thread(const gauss_dense_acc *a, double *scratch, int *irows,
                        gauss_dense_thr *th) {
  memset(th, 0, sizeof(*th));
  (void)irows;
  if (a->lanes) {
    th->rr = scratch + (svi_len)(a->P + 1) * a->Kp;
    th->xr = th->rr + a->Kp;
    return;
  }
  th->phi = scratch;
  th->ra = th->phi + (svi_len)a->PB * a->Fp; /* K x PB */
  th->xr = th->ra + (svi_len)a->K * a->PB;   /* D + 4 used */
  th->nk = th->xr + a->D + 16;
  th->rows = (int *)(th->nk + a->K); /* K x PB ints, then K counts */
  th->cnt = th->rows + (svi_len)a->K * a->PB;
  for (int k = 0; k < a->K; k++) th->nk[k] = 0;
}

void gauss_dense_points(const gauss_dense_acc *a, gauss_dense_thr *th, const double *X,
                        svi_len N, svi_len first, int m, const double *resp, int u0,
                        int u1) {
  int K = a->K, P = a->P, Fp = a->Fp;
  if (u1 <= u0) return;
  if (a->lanes) {
    mix_simd_dense_lanes(X, N, a->D, a->zero_mean, first, m, K, resp, u0, u1, a->T,
                         th->rr, th->xr);
    return;
  }
  for (int c = 0; c < m; c += a->PB) {
    int mc = m - c < a->PB ? m - c : a->PB;
    const double *rc = resp + (svi_len)c * K;
    mix_simd_phi_rows(X, N, a->D, a->zero_mean, first + c, mc, th->phi, Fp, th->xr);
    /* each of the thread's components lists the chunk's points with a
     * nonzero responsibility (zeros add nothing), in order, branch-free;
     * the counts sum every responsibility, in order */
    int PB = a->PB, *restrict cnt = th->cnt, *restrict rows = th->rows;
    double *restrict nk = th->nk, *restrict rl = th->ra;
    for (int k = u0; k < u1; k++) cnt[k] = 0;
    for (int i = 0; i < mc; i++) {
      const double *ri = rc + (svi_len)i * K;
      for (int k = u0; k < u1; k++) {
        double r = ri[k];
        int c2 = cnt[k];
        nk[k] += r;
        rows[(svi_len)k * PB + c2] = i;
        rl[(svi_len)k * PB + c2] = r;
        cnt[k] = c2 + (r != 0);
      }
    }
    for (int k = u0; k < u1; k++) {
      if (th->cnt[k])
        mix_simd_dense_comp(a->S + (svi_len)k * P, P, th->phi, Fp,
                            th->rows + (svi_len)k * a->PB, th->ra + (svi_len)k * a->PB,
                            th->cnt[k]);
    }
  }
}

void gauss_dense_end(const gauss_dense_acc *a, const gauss_dense_thr *th, int u0,
                     int u1) {
  if (a->lanes) return;
  for (int k = u0; k < u1; k++) a->Nk[k] = th->nk[k];
}

void gauss_dense_finish(const gauss_dense_acc *a) {
  if (!a->lanes) return;
  int P = a->P, Kp = a->Kp;
  for (int k = 0; k < a->K; k++) {
    a->Nk[k] = a->T[(svi_len)P * Kp + k];
    for (int f = 0; f < P; f++) a->S[(svi_len)k * P + f] = a->T[(svi_len)f * Kp + k];
  }
}

void gauss_dense_summary(const double *X, svi_len N, int D, int zero_mean, svi_len n0,
                         svi_len n1, int K, const double *resp, int threads, double *Nk,
                         double *S, double *scratch, int *irows) {
  gauss_dense_acc acc;
  svi_len per = gauss_dense_scratch(D, zero_mean, K), n = n1 - n0;
  svi_len nblocks = svi_n_blocks(n);
  gauss_dense_begin(&acc, D, zero_mean, K, Nk, S, scratch);
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
  {
    int t = svi_thread_id(), nt = 1;
#ifdef _OPENMP
    nt = omp_get_num_threads();
#endif
    /* this thread's units (pairs or lane groups): a contiguous range */
    int u0 = (int)((svi_len)acc.units * t / nt),
        u1 = (int)((svi_len)acc.units * (t + 1) / nt);
    gauss_dense_thr th;
    gauss_dense_thread(&acc, scratch + (svi_len)t * per, irows + (svi_len)t * SVI_BLOCK,
                       &th);
    for (svi_len b = 0; b < nblocks; b++) {
      svi_len s = b * SVI_BLOCK;
      int m = (int)(n - s < SVI_BLOCK ? n - s : SVI_BLOCK);
      gauss_dense_points(&acc, &th, X, N, n0 + s, m, resp + s * K, u0, u1);
    }
    gauss_dense_end(&acc, &th, u0, u1);
  }
  gauss_dense_finish(&acc);
}

/* ---- the model over (N, sum x, packed sum x x^T), with full W (Fast-VDP's
 * view; see obs-gauss.h) ---- */

#define LOG_2 0.69314718055994530942

size_t gauss_nw_doubles(int D) {
  return (size_t)D + (size_t)D * D + (size_t)svi_packed_size(D) + (size_t)D;
}

void gauss_nw_bind(gauss_nw *g, int D, double *mem) {
  g->D = D;
  g->P = svi_packed_size(D);
  g->m = mem;
  g->W = mem + D;
  g->Wp = g->W + (size_t)D * D;
  g->Wm = g->Wp + g->P;
}

void gauss_pack_outer(const double *x, int D, double *out) {
  int idx = 0;
  for (int i = 0; i < D; i++)
    for (int j = 0; j <= i; j++) out[idx++] = x[j] * x[i];
}

/* ln B(W, nu), the Wishart normaliser: the multivariate gamma is the
 * mixtures' svi_lmvgamma. */
static double wishart_lnB(double logdet_W, double nu, int D) {
  return -0.5 * nu * logdet_W - 0.5 * nu * D * LOG_2 - svi_lmvgamma(0.5 * nu, D);
}

/* Fills the derived fields of g from beta, nu, m and the packed inverse
 * scale matrix Winv (P doubles; work: P more). */
static int finish(gauss_nw *g, const double *Winv, double *work) {
  const int D = g->D;
  double logdet_inv = svi_spd_inverse(Winv, D, g->W, work);
  if (isnan(logdet_inv)) return 1;
  g->logdet_W = -logdet_inv;
  double e = D * LOG_2 + g->logdet_W;
  for (int d = 1; d <= D; d++) e += svi_digamma(0.5 * (g->nu + 1 - d));
  g->e_logdet_L = e;
  g->cst = 0.5 * e - 0.5 * D * LN_2PI - 0.5 * D / g->beta;
  int idx = 0;
  for (int i = 0; i < D; i++)
    for (int j = 0; j <= i; j++)
      g->Wp[idx++] = (i == j ? 1.0 : 2.0) * g->W[j + (size_t)i * D];
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

/* The prior itself: kappa0, nu0, m0 and B0, exactly. */
static int prior_nw(gauss_nw *g, const mix_prior *pr, double *work) {
  g->beta = pr->kappa0;
  g->nu = pr->nu0;
  memcpy(g->m, pr->m0, sizeof(double) * g->D);
  if (finish(g, pr->B0, work)) return 1;
  g->lnB = wishart_lnB(g->logdet_W, g->nu, g->D);
  return 0;
}

int gauss_nw_posterior(gauss_nw *g, const mix_prior *pr, double N, const double *s1,
                       const double *s2, double *work) {
  const int D = g->D, P = g->P;
  if (!s1) return prior_nw(g, pr, work);
  g->beta = pr->kappa0 + N;
  g->nu = pr->nu0 + N;
  for (int i = 0; i < D; i++) g->m[i] = (pr->kappa0 * pr->m0[i] + s1[i]) / g->beta;
  double *Winv = work;
  int idx = 0;
  for (int i = 0; i < D; i++)
    for (int j = 0; j <= i; j++, idx++)
      Winv[idx] = pr->B0[idx] + s2[idx] + pr->kappa0 * pr->m0[j] * pr->m0[i] -
                  g->beta * g->m[j] * g->m[i];
  if (finish(g, Winv, work + P)) {
    /* fall back to the prior (keeps the fit defined; the caller reports it) */
    prior_nw(g, pr, work);
    return 1;
  }
  return 0;
}

double gauss_nw_kl(const gauss_nw *g, const mix_prior *pr, const gauss_nw *q0) {
  const int D = g->D;
  double quad = 0.0, tr = 0.0;
  for (int i = 0; i < D; i++) {
    double s = 0.0;
    for (int k = 0; k < D; k++) s += g->W[i + (size_t)k * D] * (g->m[k] - pr->m0[k]);
    quad += s * (g->m[i] - pr->m0[i]);
  }
  /* tr(B0 W) over every entry, column by column: entry (i, j) of B0 is
   * packed at svi_tri(j, i) above the diagonal, svi_tri(i, j) from it on */
  for (int j = 0; j < D; j++) {
    const double *Wj = g->W + (size_t)j * D, *above = pr->B0 + svi_tri(j, 0);
    for (int i = 0; i < j; i++) tr += above[i] * Wj[i];
    svi_len row = svi_tri(j, 0);
    for (int i = j; i < D; row += ++i) tr += pr->B0[row + j] * Wj[i];
  }
  double lnB = wishart_lnB(g->logdet_W, g->nu, D);
  return 0.5 * D * log(g->beta / pr->kappa0) - 0.5 * D + lnB - q0->lnB +
         0.5 * (g->nu - pr->nu0) * g->e_logdet_L - 0.5 * g->nu * D +
         0.5 * pr->kappa0 * (D / g->beta + g->nu * quad) + 0.5 * g->nu * tr;
}

double gauss_nw_expected_loglik(const gauss_nw *g, double N, const double *s1,
                                const double *s2) {
  if (N <= 0.0) return 0.0;
  const int P = g->P, D = g->D;
  double t = 0.0, u = 0.0;
  for (int i = 0; i < P; i++) t += g->Wp[i] * s2[i];
  for (int i = 0; i < D; i++) u += g->Wm[i] * s1[i];
  return N * g->cst - 0.5 * g->nu * (t - 2.0 * u + N * g->mWm);
}

/* ---- the mixtures' tables of the two full-covariance models ---- */

static svi_len full_stat_size(int D) {
  return (svi_len)D + svi_packed_size(D);
}
static svi_len zm_stat_size(int D) {
  return svi_packed_size(D);
}

static void full_eval_sizes(int D, svi_len sz[5]) {
  sz[0] = D;                  /* mean */
  sz[1] = svi_packed_size(D); /* fac */
  sz[2] = D;                  /* inv_diag */
  sz[3] = D;                  /* shift */
  sz[4] = 0;
}
static void zm_eval_sizes(int D, svi_len sz[5]) {
  full_eval_sizes(D, sz);
  sz[0] = sz[3] = 0; /* no mean, no shift */
}

static double full_eval_cost(int D) {
  return (double)D * D * (D + 1);
}

static int full_eval(const mix_eval *ev, const mix_prior *pr, int k, double N,
                     const double *Sk, int point) {
  int D = ev->D, zm = ev->obs->zero_mean;
  svi_len tri = svi_packed_size(D);
  return gauss_eval_component(pr, zm, D, N, Sk, point, ev->c + k,
                              zm ? NULL : ev->mean + (svi_len)k * D,
                              ev->fac + (svi_len)k * tri, ev->inv_diag + (svi_len)k * D,
                              zm ? NULL : ev->shift + (svi_len)k * D);
}

/* component-major from the vector kernel, then point-major */
static void full_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                         double *W, double *scratch) {
  int K = ev->K;
  double *xb = scratch, *Wt = scratch + (svi_len)SVI_BLOCK * (ev->D + 1);
  mix_gather_block(x, n0, nb, xb);
  mix_simd_gauss_wt(ev, xb, nb, Wt);
  for (int i = 0; i < nb; i++)
    for (int k = 0; k < K; k++) W[(svi_len)i * K + k] = Wt[(svi_len)k * SVI_BLOCK + i];
}

/* the block's points (D rows of SVI_BLOCK, one spare), then the
 * component-major weights */
static svi_len full_weights_scratch(int D, int K) {
  return (svi_len)SVI_BLOCK * (D + 1) + (svi_len)SVI_BLOCK * K;
}

static void full_add_pairs(const mix_data *x, const svi_len *pts, const double *r, int m,
                           double *Sk, double *xb) {
  gauss_chunk_stat(x->X, x->N, x->D, x->obs->zero_mean, pts, r, m, Sk, xb);
}

/* the statistic kernel's scratch, then SVI_BLOCK responsibilities; or the
 * dense summary's */
static svi_len full_summary_scratch_zm(int D, int K, int zm) {
  svi_len a = gauss_stat_scratch(D) + SVI_BLOCK, b = gauss_dense_scratch(D, zm, K);
  return a > b ? a : b;
}
static svi_len full_summary_scratch(int D, int K) {
  return full_summary_scratch_zm(D, K, 0);
}
static svi_len zm_summary_scratch(int D, int K) {
  return full_summary_scratch_zm(D, K, 1);
}

static double full_obj(const mix_prior *pr, int D, double N, const double *Sk,
                       double *scratch) {
  return gauss_objective(pr, pr->obs->zero_mean, D, N, Sk, scratch);
}

/* mean (zero for the zero-mean model) and the covariance's posterior mean
 * (B / gauss_point_divisor) */
static void full_point(const mix_prior *pr, int D, double N, const double *S,
                       double *mean, double *spread, double *scratch) {
  int zm = pr->obs->zero_mean;
  double kappa, *B = scratch;
  double nu = gauss_posterior(pr, zm, D, N, S, B, zm ? NULL : mean, &kappa);
  double den = gauss_point_divisor(nu, D);
  if (zm)
    for (int i = 0; i < D; i++) mean[i] = 0;
  for (int i = 0; i < D; i++) {
    for (int j = 0; j <= i; j++) {
      double c = B[svi_tri(i, j)] / den;
      spread[(svi_len)i * D + j] = c;
      spread[(svi_len)j * D + i] = c;
    }
  }
}

/* Monotonic seconds (the fused step's summary time). */
static double gauss_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The table's dense_local: mix_local()'s one-thread dense step with the
 * summary fused. Each block's points go into the summary right after their
 * responsibilities (read once, from cache), in block order: the arithmetic
 * of the dense summary (gauss_dense_summary). *t_summary gets the
 * summary's share of the time. */
static void full_dense_local(const mix_eval *ev, const mix_data *x, svi_len n0, svi_len n1,
                             double *ent, double *dscratch, double *Nk, double *S,
                             double *sscratch, int *irows, double *t_summary) {
  const mix_obs *obs = ev->obs;
  int K = ev->K, D = ev->D;
  svi_len nblocks = svi_n_blocks(n1 - n0);
  gauss_dense_acc acc;
  gauss_dense_thr th;
  gauss_dense_begin(&acc, D, obs->zero_mean, K, Nk, S, sscratch);
  gauss_dense_thread(&acc, sscratch, irows, &th);
  double *W = dscratch, *xb = W + (svi_len)SVI_BLOCK * K;
  double *Et = xb + obs->weights_scratch(D, K), *rp = Et + (svi_len)SVI_BLOCK * K;
  double ts = 0;
  for (svi_len b = 0; b < nblocks; b++) {
    svi_len s = n0 + b * SVI_BLOCK;
    int nb = (int)((s + SVI_BLOCK <= n1) ? SVI_BLOCK : n1 - s);
    mix_gather_block(x, s, nb, xb);
    mix_simd_gauss_wt(ev, xb, nb, W);
    mix_simd_softmax(W, nb, K, rp, ent + (s - n0), Et);
    double t0 = gauss_clock();
    gauss_dense_points(&acc, &th, xb, SVI_BLOCK, 0, nb, rp, 0, acc.units);
    ts += gauss_clock() - t0;
  }
  gauss_dense_end(&acc, &th, 0, acc.units);
  gauss_dense_finish(&acc);
  *t_summary = ts;
}

/* The table's dense_summary: gauss_dense_summary() on the data's points. */
static void full_dense_summary(const mix_data *x, svi_len n0, svi_len n1, int K,
                               const double *resp, int threads, double *Nk, double *S,
                               double *scratch, int *irows) {
  gauss_dense_summary(x->X, x->N, x->D, x->obs->zero_mean, n0, n1, K, resp, threads, Nk, S,
                      scratch, irows);
}

const mix_obs mix_obs_gauss = {
    .lik = MIX_GAUSS,
    .name = "gaussian",
    .needs_m0 = 1,
    .needs_B0 = 1,
    .spread = 1,
    .stat_size = full_stat_size,
    .eval_sizes = full_eval_sizes,
    .eval_cost = full_eval_cost,
    .eval_component = full_eval,
    .block_weights = full_weights,
    .weights_scratch = full_weights_scratch,
    .add_pairs = full_add_pairs,
    .summary_scratch = full_summary_scratch,
    .objective = full_obj,
    .point_component = full_point,
    .seed_dist = mix_seed_dist_sq,
    .dense_local = full_dense_local,
    .dense_summary = full_dense_summary,
};

const mix_obs mix_obs_zm = {
    .lik = MIX_ZM,
    .name = "zm_gaussian",
    .needs_B0 = 1,
    .zero_mean = 1,
    .spread = 1,
    .stat_size = zm_stat_size,
    .eval_sizes = zm_eval_sizes,
    .eval_cost = full_eval_cost,
    .eval_component = full_eval,
    .block_weights = full_weights,
    .weights_scratch = full_weights_scratch,
    .add_pairs = full_add_pairs,
    .summary_scratch = zm_summary_scratch,
    .objective = full_obj,
    .point_component = full_point,
    .seed_dist = mix_seed_dist_axis,
    .dense_local = full_dense_local,
    .dense_summary = full_dense_summary,
};
