/* Body of the vectorised mixture kernels, included by mix-simd.c once per
 * vector width: MIX_VW doubles per vector, function names suffixed by
 * MIX_SUFFIX. No include guard on purpose. See mix-simd.h. */

#define MIX_CAT2(a, b) a##b
#define MIX_CAT(a, b) MIX_CAT2(a, b)
#define MIX_FN(name) MIX_CAT(name, MIX_SUFFIX)
#define VD MIX_CAT(mix_vd, MIX_SUFFIX)
#define VL MIX_CAT(mix_vl, MIX_SUFFIX)

/* lanes of a and b picked by index (b's lanes follow a's) */
#ifdef __clang__
#define MIX_SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define MIX_SHUF(a, b, ...) __builtin_shuffle(a, b, (VL){__VA_ARGS__})
#endif

typedef double VD __attribute__((vector_size(8 * MIX_VW)));
typedef long long VL __attribute__((vector_size(8 * MIX_VW)));

static inline VD MIX_FN(ld)(const double *p) {
  VD v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void MIX_FN(st)(double *p, VD v) {
  memcpy(p, &v, sizeof v);
}
static inline VD MIX_FN(set1)(double a) {
#if MIX_VW == 4
  VD v = {a, a, a, a};
#else
  VD v = {a, a};
#endif
  return v;
}
/* m ? a : b, lane by lane (m from a vector comparison: all ones or zero) */
static inline VD MIX_FN(sel)(VL m, VD a, VD b) {
  return (VD)((m & (VL)a) | (~m & (VL)b));
}

/* exp(x) for x >= MIX_R_FLOOR, 0 below: the arithmetic of mix_exp_floor1. */
static inline VD MIX_FN(vexp)(VD x) {
  const VD fl = MIX_FN(set1)(MIX_R_FLOOR), sh = MIX_FN(set1)(EXP_SHIFT);
  VL below = x < fl;
  x = MIX_FN(sel)(below, fl, x);
  VD t = x * MIX_FN(set1)(EXP_LOG2E) + sh, kd = t - sh;
  VD r = (x - kd * MIX_FN(set1)(EXP_LN2_HI)) - kd * MIX_FN(set1)(EXP_LN2_LO);
  VL bits = ((VL)t - (VL)sh + 1023) << 52;
  VD p;
  MIX_EXP_POLY(p, r, VD);
  VD y = p * (VD)bits;
  return (VD)((VL)y & ~below);
}

static void MIX_FN(exp_floor)(double *x, int n) {
  int j = 0;
  for (; j + MIX_VW <= n; j += MIX_VW) MIX_FN(st)(x + j, MIX_FN(vexp)(MIX_FN(ld)(x + j)));
  for (; j < n; j++) x[j] = mix_exp_floor1(x[j]);
}

/* Four vectors of points per component, two components at a time. */
#define WT_CH (4 * MIX_VW)

static void MIX_FN(gauss_wt)(const mix_eval *ev, const double *xb, int nb, double *Wt) {
  int K = ev->K, D = ev->D;
  svi_len tri = (svi_len)D * (D + 1) / 2;
  for (int k = 0; k < K; k += 2) {
    int k2 = k + 1 < K ? k + 1 : k;
    const double *Ra = ev->fac + (svi_len)k * tri, *Rb = ev->fac + (svi_len)k2 * tri;
    const double *sa = ev->shift ? ev->shift + (svi_len)k * D : NULL;
    const double *sb = ev->shift ? ev->shift + (svi_len)k2 * D : NULL;
    VD ca = MIX_FN(set1)(ev->c[k]), cb = MIX_FN(set1)(ev->c[k2]),
       half = MIX_FN(set1)(0.5);
    for (int c0 = 0; c0 < nb; c0 += WT_CH) {
      VD qa0 = MIX_FN(set1)(0), qa1 = qa0, qa2 = qa0, qa3 = qa0;
      VD qb0 = qa0, qb1 = qa0, qb2 = qa0, qb3 = qa0;
      for (int i = 0; i < D; i++) {
        const double *ra = Ra + svi_tri(i, 0), *rb = Rb + svi_tri(i, 0);
        VD a0 = MIX_FN(set1)(sa ? -sa[i] : 0.0), a1 = a0, a2 = a0, a3 = a0;
        VD b0 = MIX_FN(set1)(sb ? -sb[i] : 0.0), b1 = b0, b2 = b0, b3 = b0;
        for (int j = 0; j <= i; j++) {
          const double *xj = xb + (svi_len)j * SVI_BLOCK + c0;
          VD x0 = MIX_FN(ld)(xj), x1 = MIX_FN(ld)(xj + MIX_VW),
             x2 = MIX_FN(ld)(xj + 2 * MIX_VW), x3 = MIX_FN(ld)(xj + 3 * MIX_VW);
          VD va = MIX_FN(set1)(ra[j]), vb = MIX_FN(set1)(rb[j]);
          a0 += va * x0;
          a1 += va * x1;
          a2 += va * x2;
          a3 += va * x3;
          b0 += vb * x0;
          b1 += vb * x1;
          b2 += vb * x2;
          b3 += vb * x3;
        }
        qa0 += a0 * a0;
        qa1 += a1 * a1;
        qa2 += a2 * a2;
        qa3 += a3 * a3;
        qb0 += b0 * b0;
        qb1 += b1 * b1;
        qb2 += b2 * b2;
        qb3 += b3 * b3;
      }
      double *wa = Wt + (svi_len)k * SVI_BLOCK + c0,
             *wb = Wt + (svi_len)k2 * SVI_BLOCK + c0;
      MIX_FN(st)(wa, ca - half * qa0);
      MIX_FN(st)(wa + MIX_VW, ca - half * qa1);
      MIX_FN(st)(wa + 2 * MIX_VW, ca - half * qa2);
      MIX_FN(st)(wa + 3 * MIX_VW, ca - half * qa3);
      MIX_FN(st)(wb, cb - half * qb0);
      MIX_FN(st)(wb + MIX_VW, cb - half * qb1);
      MIX_FN(st)(wb + 2 * MIX_VW, cb - half * qb2);
      MIX_FN(st)(wb + 3 * MIX_VW, cb - half * qb3);
    }
  }
}

static void MIX_FN(softmax)(const double *Wt, int nb, int K, double *resp, double *ent,
                            double *Et) {
  const VD fl = MIX_FN(set1)(MIX_R_FLOOR), zero = MIX_FN(set1)(0);
  for (int g = 0; g < nb; g += MIX_VW) {
    VD m = MIX_FN(set1)(-INFINITY);
    for (int k = 0; k < K; k++) {
      VD w = MIX_FN(ld)(Wt + (svi_len)k * SVI_BLOCK + g);
      m = MIX_FN(sel)(w > m, w, m);
    }
    VD s = zero;
    for (int k = 0; k < K; k++) {
      VD d = MIX_FN(ld)(Wt + (svi_len)k * SVI_BLOCK + g) - m;
      /* every lane below the floor (common once components separate): the
       * exp would give exactly 0 in each */
      VL below = d < fl;
#if defined(__x86_64__) && MIX_VW == 4
      int all = __builtin_ia32_movmskpd256((VD)below) == 15;
#elif defined(__x86_64__) && MIX_VW == 2
      int all = __builtin_ia32_movmskpd((VD)below) == 3;
#else
      int all = 1;
      for (int l = 0; l < MIX_VW; l++) all &= below[l] != 0;
#endif
      VD e = all ? zero : MIX_FN(vexp)(d);
      MIX_FN(st)(Et + (svi_len)k * SVI_BLOCK + g, e);
      s += e;
    }
    VD inv = MIX_FN(set1)(1.0) / s, h = zero;
    int nl = nb - g < MIX_VW ? nb - g : MIX_VW;
    double *rp = resp + (svi_len)g * K;
    int k = 0;
    if (nl == MIX_VW) {
      /* VW components at a time, transposed in registers: one vector store
       * per point */
      for (; k + MIX_VW <= K; k += MIX_VW) {
        VD rk[MIX_VW];
        for (int j = 0; j < MIX_VW; j++) {
          VD d = MIX_FN(ld)(Wt + (svi_len)(k + j) * SVI_BLOCK + g) - m;
          VD r = MIX_FN(ld)(Et + (svi_len)(k + j) * SVI_BLOCK + g) * inv;
          h -= (VD)((VL)(r * d) & (d >= fl));
          rk[j] = r;
        }
#if MIX_VW == 4
        VD t0 = MIX_SHUF(rk[0], rk[1], 0, 4, 2, 6),
           t1 = MIX_SHUF(rk[0], rk[1], 1, 5, 3, 7);
        VD t2 = MIX_SHUF(rk[2], rk[3], 0, 4, 2, 6),
           t3 = MIX_SHUF(rk[2], rk[3], 1, 5, 3, 7);
        MIX_FN(st)(rp + k, MIX_SHUF(t0, t2, 0, 1, 4, 5));
        MIX_FN(st)(rp + K + k, MIX_SHUF(t1, t3, 0, 1, 4, 5));
        MIX_FN(st)(rp + 2 * (svi_len)K + k, MIX_SHUF(t0, t2, 2, 3, 6, 7));
        MIX_FN(st)(rp + 3 * (svi_len)K + k, MIX_SHUF(t1, t3, 2, 3, 6, 7));
#else
        MIX_FN(st)(rp + k, MIX_SHUF(rk[0], rk[1], 0, 2));
        MIX_FN(st)(rp + K + k, MIX_SHUF(rk[0], rk[1], 1, 3));
#endif
      }
    }
    for (; k < K; k++) {
      VD d = MIX_FN(ld)(Wt + (svi_len)k * SVI_BLOCK + g) - m;
      VD r = MIX_FN(ld)(Et + (svi_len)k * SVI_BLOCK + g) * inv;
      h -= (VD)((VL)(r * d) & (d >= fl));
      for (int l = 0; l < nl; l++) rp[(svi_len)l * K + k] = r[l];
    }
    for (int l = 0; l < nl; l++) {
      double hl = h[l] + log(s[l]);
      ent[g + l] = hl > 0 ? hl : 0.0;
    }
  }
}

/* DENSE_NF features of one component: eight vectors */
#define DENSE_NF (8 * MIX_VW)

static inline void MIX_FN(dense_kern)(double *restrict Sk, const double *restrict phi,
                                      int Fp, const int *rows, const double *r, int m) {
  VD a0 = MIX_FN(ld)(Sk), a1 = MIX_FN(ld)(Sk + MIX_VW), a2 = MIX_FN(ld)(Sk + 2 * MIX_VW),
     a3 = MIX_FN(ld)(Sk + 3 * MIX_VW), a4 = MIX_FN(ld)(Sk + 4 * MIX_VW),
     a5 = MIX_FN(ld)(Sk + 5 * MIX_VW), a6 = MIX_FN(ld)(Sk + 6 * MIX_VW),
     a7 = MIX_FN(ld)(Sk + 7 * MIX_VW);
  for (int n = 0; n < m; n++) {
    const double *p = phi + (svi_len)rows[n] * Fp;
    VD v = MIX_FN(set1)(r[n]);
    a0 += v * MIX_FN(ld)(p);
    a1 += v * MIX_FN(ld)(p + MIX_VW);
    a2 += v * MIX_FN(ld)(p + 2 * MIX_VW);
    a3 += v * MIX_FN(ld)(p + 3 * MIX_VW);
    a4 += v * MIX_FN(ld)(p + 4 * MIX_VW);
    a5 += v * MIX_FN(ld)(p + 5 * MIX_VW);
    a6 += v * MIX_FN(ld)(p + 6 * MIX_VW);
    a7 += v * MIX_FN(ld)(p + 7 * MIX_VW);
  }
  MIX_FN(st)(Sk, a0);
  MIX_FN(st)(Sk + MIX_VW, a1);
  MIX_FN(st)(Sk + 2 * MIX_VW, a2);
  MIX_FN(st)(Sk + 3 * MIX_VW, a3);
  MIX_FN(st)(Sk + 4 * MIX_VW, a4);
  MIX_FN(st)(Sk + 5 * MIX_VW, a5);
  MIX_FN(st)(Sk + 6 * MIX_VW, a6);
  MIX_FN(st)(Sk + 7 * MIX_VW, a7);
}

/* The same over four vectors of features (the tails). */
static inline void MIX_FN(dense_kern4)(double *restrict Sk, const double *restrict phi,
                                       int Fp, const int *rows, const double *r, int m) {
  VD a0 = MIX_FN(ld)(Sk), a1 = MIX_FN(ld)(Sk + MIX_VW), a2 = MIX_FN(ld)(Sk + 2 * MIX_VW),
     a3 = MIX_FN(ld)(Sk + 3 * MIX_VW);
  for (int n = 0; n < m; n++) {
    const double *p = phi + (svi_len)rows[n] * Fp;
    VD v = MIX_FN(set1)(r[n]);
    a0 += v * MIX_FN(ld)(p);
    a1 += v * MIX_FN(ld)(p + MIX_VW);
    a2 += v * MIX_FN(ld)(p + 2 * MIX_VW);
    a3 += v * MIX_FN(ld)(p + 3 * MIX_VW);
  }
  MIX_FN(st)(Sk, a0);
  MIX_FN(st)(Sk + MIX_VW, a1);
  MIX_FN(st)(Sk + 2 * MIX_VW, a2);
  MIX_FN(st)(Sk + 3 * MIX_VW, a3);
}

static void MIX_FN(dense_comp)(double *Sk, int P, const double *phi, int Fp,
                               const int *rows, const double *r, int m) {
  const int NF4 = DENSE_NF / 2;
  int f0 = 0;
  for (; f0 + DENSE_NF <= P; f0 += DENSE_NF)
    MIX_FN(dense_kern)(Sk + f0, phi + f0, Fp, rows, r, m);
  for (; f0 + NF4 <= P; f0 += NF4) MIX_FN(dense_kern4)(Sk + f0, phi + f0, Fp, rows, r, m);
  if (f0 < P) {
    /* the last features: through a padded copy */
    double t[DENSE_NF / 2];
    for (int f = 0; f < NF4; f++) t[f] = f0 + f < P ? Sk[f0 + f] : 0;
    MIX_FN(dense_kern4)(t, phi + f0, Fp, rows, r, m);
    for (int f = 0; f0 + f < P; f++) Sk[f0 + f] = t[f];
  }
}

/* Dense statistics with the components in vector lanes (small P): for the
 * lane groups [g0, g1) (VW components each, Kp = K rounded up to VW),
 * T[f Kp + k] += r_nk phi_f(x_n) and T[P Kp + k] += r_nk over the points
 * n0.. n0 + n - 1 in order. rr: Kp doubles of scratch. */
/* The same for a few small (D, zero_mean), known at compile time: one lane
 * group at a time with its P + 1 sums in registers, the points inner (each
 * sum still runs over the points in order, with the same products).
 * Groups whose lanes run past K are left to the general loop. */
static inline __attribute__((always_inline)) void
MIX_FN(lanes_fixed)(const double *X, svi_len N, const int D, const int zero_mean,
                    svi_len n0, svi_len n, int K, const double *resp, int g0, int g1,
                    double *T, int Kp) {
  const int P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  for (int g = g0; g < g1; g++) {
    int k = g * MIX_VW;
    VD acc[12];
#pragma GCC unroll 12
    for (int f = 0; f <= P; f++) acc[f] = MIX_FN(ld)(T + (svi_len)f * Kp + k);
    for (svi_len i = 0; i < n; i++) {
      VD rv = MIX_FN(ld)(resp + i * K + k);
      double x[4];
#pragma GCC unroll 4
      for (int d = 0; d < D; d++) x[d] = X[(svi_len)d * N + n0 + i];
      int f = 0;
      if (!zero_mean) {
#pragma GCC unroll 4
        for (int d = 0; d < D; d++, f++) acc[f] += rv * x[d];
      }
#pragma GCC unroll 4
      for (int a = 0; a < D; a++) {
#pragma GCC unroll 4
        for (int c = 0; c <= a; c++, f++) acc[f] += rv * (x[a] * x[c]);
      }
      acc[P] += rv;
    }
#pragma GCC unroll 12
    for (int f = 0; f <= P; f++) MIX_FN(st)(T + (svi_len)f * Kp + k, acc[f]);
  }
}

static void MIX_FN(dense_lanes)(const double *X, svi_len N, int D, int zero_mean,
                                svi_len n0, svi_len n, int K, const double *resp, int g0,
                                int g1, double *T, double *rr, double *x) {
  int Kp = (K + MIX_VW - 1) / MIX_VW * MIX_VW, P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  /* whole groups (lanes within K) of the specialised sizes */
  int gw = K / MIX_VW < g1 ? K / MIX_VW : g1;
  if (gw > g0) {
    int done = 1;
    switch (zero_mean ? 10 + D : D) {
    case 1:
      MIX_FN(lanes_fixed)(X, N, 1, 0, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 2:
      MIX_FN(lanes_fixed)(X, N, 2, 0, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 3:
      MIX_FN(lanes_fixed)(X, N, 3, 0, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 11:
      MIX_FN(lanes_fixed)(X, N, 1, 1, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 12:
      MIX_FN(lanes_fixed)(X, N, 2, 1, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 13:
      MIX_FN(lanes_fixed)(X, N, 3, 1, n0, n, K, resp, g0, gw, T, Kp);
      break;
    case 14:
      MIX_FN(lanes_fixed)(X, N, 4, 1, n0, n, K, resp, g0, gw, T, Kp);
      break;
    default:
      done = 0;
    }
    if (done) g0 = gw;
    if (g0 >= g1) return;
  }
  for (int k = K; k < Kp; k++) rr[k] = 0;
  for (svi_len i = 0; i < n; i++) {
    const double *r = resp + i * K;
    if (K != Kp) {
      memcpy(rr, r, sizeof(double) * (size_t)K);
      r = rr;
    }
    for (int d = 0; d < D; d++) x[d] = X[(svi_len)d * N + n0 + i];
    for (int g = g0; g < g1; g++) {
      int k = g * MIX_VW;
      VD rv = MIX_FN(ld)(r + k);
      double *t = T + k;
      int f = 0;
      if (!zero_mean) {
        for (int d = 0; d < D; d++, f++)
          MIX_FN(st)(t + (svi_len)f * Kp, MIX_FN(ld)(t + (svi_len)f * Kp) + rv * x[d]);
      }
      for (int a = 0; a < D; a++) {
        for (int c = 0; c <= a; c++, f++) {
          double pf = x[a] * x[c];
          MIX_FN(st)(t + (svi_len)f * Kp, MIX_FN(ld)(t + (svi_len)f * Kp) + rv * pf);
        }
      }
      MIX_FN(st)(t + (svi_len)P * Kp, MIX_FN(ld)(t + (svi_len)P * Kp) + rv);
    }
  }
}

/* Feature rows phi(x) = [x (unless zero_mean), packed x x^T] of the m
 * points first.. of X (N x D, column-major), row stride Fp >= P + VW - 1,
 * zero past P. xr: D + VW doubles of scratch. Each product is x_a x_c, as
 * in the scalar layout; a row's vector stores may run past its end into the
 * next row's place, which is written afterwards. */
static void MIX_FN(phi_rows)(const double *X, svi_len N, int D, int zero_mean,
                             svi_len first, int m, double *phi, int Fp, double *xr) {
  int P = D * (D + 1) / 2 + (zero_mean ? 0 : D);
  for (int d = D; d < D + MIX_VW; d++) xr[d] = 0;
  for (int i = 0; i < m; i++) {
    double *p = phi + (svi_len)i * Fp;
    for (int d = 0; d < D; d++) xr[d] = X[(svi_len)d * N + first + i];
    int f = 0;
    if (!zero_mean) {
      for (int c = 0; c < D; c += MIX_VW) MIX_FN(st)(p + c, MIX_FN(ld)(xr + c));
      f = D;
    }
    for (int a = 0; a < D; a++) {
      VD xa = MIX_FN(set1)(xr[a]);
      for (int c = 0; c <= a; c += MIX_VW) MIX_FN(st)(p + f + c, xa * MIX_FN(ld)(xr + c));
      f += a + 1;
    }
    for (f = P; f < Fp; f++) p[f] = 0;
  }
}

#undef MIX_SHUF
#undef WT_CH
#undef DENSE_NF
#undef VD
#undef VL
#undef MIX_FN
#undef MIX_CAT
#undef MIX_CAT2
