/* The mixture local step (Hughes & Sudderth §3): log-weights
 * W_nk = E[ln pi_k] + E[ln p(x_n | phi_k)] for blocks of SVI_BLOCK points,
 * top-L (or dense, L = K) responsibilities, and the batch summary whose cost
 * scales with L: points are bucketed by kept component and each component's
 * statistic is accumulated over its points in point order, so the result
 * does not depend on the thread count. */
#include <math.h>
#include <string.h>
#include "mix.h"
#include "mix-simd.h"

void mix_alloc_weights(const mix_prior *pr, int K, const double *Nk, int point,
                       double *out) {
  double Ntot = 0;
  for (int k = 0; k < K; k++) Ntot += Nk[k];
  if (pr->prior == MIX_DIRICHLET) {
    double a = pr->conc / K;
    if (point) {
      for (int k = 0; k < K; k++) out[k] = log((a + Nk[k]) / (pr->conc + Ntot));
    } else {
      double norm = svi_digamma(pr->conc + Ntot);
      for (int k = 0; k < K; k++) out[k] = svi_digamma(a + Nk[k]) - norm;
    }
    return;
  }
  /* DP stick-breaking truncated at K: q(v_k) = Beta(1 + N_k, gamma + N_{>k}), v_K = 1 */
  double rest = Ntot, prefix = 0;
  for (int k = 0; k < K; k++) {
    rest -= Nk[k];
    if (rest < 0) rest = 0;
    double a = 1 + Nk[k], b = pr->conc + rest;
    if (k == K - 1) {
      out[k] = prefix;
      break;
    }
    if (point) {
      out[k] = prefix + log(a / (a + b));
      prefix += log(b / (a + b));
    } else {
      double dab = svi_digamma(a + b);
      out[k] = prefix + svi_digamma(a) - dab;
      prefix += svi_digamma(b) - dab;
    }
  }
}

double mix_alloc_objective(const mix_prior *pr, int K, const double *Nk) {
  double Ntot = 0;
  for (int k = 0; k < K; k++) Ntot += Nk[k];
  if (pr->prior == MIX_DIRICHLET) {
    double a = pr->conc / K, out = svi_lgamma(pr->conc) - svi_lgamma(pr->conc + Ntot);
    double lga = svi_lgamma(a);
    for (int k = 0; k < K; k++) out += svi_lgamma(a + Nk[k]) - lga;
    return out;
  }
  /* sum_k ln B(1 + N_k, gamma + N_{>k}) - ln B(1, gamma), ln B(1, gamma) = -ln gamma */
  double rest = Ntot, out = 0, g = pr->conc;
  for (int k = 0; k < K - 1; k++) {
    rest -= Nk[k];
    if (rest < 0) rest = 0;
    double a = 1 + Nk[k], b = g + rest;
    out += svi_lgamma(a) + svi_lgamma(b) - svi_lgamma(a + b) + log(g);
  }
  return out;
}

int mix_eval_build(mix_eval *ev, const mix_prior *pr, int K, int D, const double *Nk,
                   const double *S, int point, int threads, double *scratch) {
  const mix_obs *obs = pr->obs;
  svi_len P = obs->stat_size(D);
  ev->obs = obs;
  ev->K = K;
  ev->D = D;
  int status = 0;
  double *fail = scratch + K; /* K doubles: each component's status */
  (void)threads;
  /* components are independent: any thread count gives the same tables;
   * small models are built without waking the threads */
  double work = K * obs->eval_cost(D);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (work > 2e5)
#endif
  for (int k = 0; k < K; k++)
    fail[k] = obs->eval_component(ev, pr, k, Nk[k], S + (svi_len)k * P, point);
  for (int k = 0; k < K; k++) {
    if (fail[k] != 0) {
      status = k + 1;
      break;
    }
  }
  double *aw = scratch; /* K doubles */
  mix_alloc_weights(pr, K, Nk, point, aw);
  for (int k = 0; k < K; k++) ev->c[k] += aw[k];
  return status;
}

svi_len mix_weights_scratch(const mix_obs *obs, int D, int K) {
  return obs->weights_scratch(D, K);
}

void mix_block_weights(const mix_eval *ev, const mix_data *x, svi_len n0, int nb,
                       double *W, double *scratch) {
  ev->obs->block_weights(ev, x, n0, nb, W, scratch);
}

/* Per-thread double scratch of mix_local: weights block, obs scratch, K,
 * and a second block for the dense full-covariance path. */
svi_len mix_local_scratch(const mix_obs *obs, int D, int K) {
  return 3 * (svi_len)SVI_BLOCK * K + mix_weights_scratch(obs, D, K) + K;
}

/* exp(x) underflows to exactly 0 below about -745.13. */
#define MIX_EXP_FLOOR (-746.0)
/* Below this, exp(x) is subnormal: left to libm. */
#define MIX_EXP_NORMAL (-708.0)

/* exp of the non-positive differences w - max of a softmax, two at a time
 * (GCC/Clang vector extensions: SSE2 on x86-64): k = round(x / ln 2) by the
 * 1.5 2^52 shift, r = x - k ln 2 in two parts (|r| <= ln(2) / 2; the
 * constants and scalar form: mix_exp_reduce() in mix-simd.h), a degree-13
 * Taylor polynomial (truncation below 1e-17), times 2^k built in the
 * exponent bits. Within 2 ulp of libm; about four times faster than a libm
 * call per value. The scalar version below is the same arithmetic. */
/* 1 / j!, j = 0..13, for Horner's rule from the top */
static const double EXP_C[14] = {1.0,
                                 1.0,
                                 1.0 / 2,
                                 1.0 / 6,
                                 1.0 / 24,
                                 1.0 / 120,
                                 1.0 / 720,
                                 1.0 / 5040,
                                 1.0 / 40320,
                                 1.0 / 362880,
                                 1.0 / 3628800,
                                 1.0 / 39916800,
                                 1.0 / 479001600,
                                 1.0 / 6227020800.0};

static inline double exp_nonpos1(double x) {
  if (x < MIX_EXP_NORMAL) return x < MIX_EXP_FLOOR ? 0.0 : exp(x);
  double r, scale = mix_exp_reduce(x, &r), p = EXP_C[13];
  for (int i = 12; i >= 0; i--) p = p * r + EXP_C[i];
  return p * scale;
}

#if defined(__GNUC__) || defined(__clang__)
#define MIX_VEC 1
typedef double mix_v2 __attribute__((vector_size(16)));
typedef long long mix_v2i __attribute__((vector_size(16)));
#endif

static void exp_nonpos(double *x, int n) {
  int j = 0;
#ifdef MIX_VEC
  const mix_v2 l2e = {EXP_LOG2E, EXP_LOG2E}, sh = {EXP_SHIFT, EXP_SHIFT},
               hi = {EXP_LN2_HI, EXP_LN2_HI}, lo = {EXP_LN2_LO, EXP_LN2_LO};
  const mix_v2i bias = {1023, 1023};
  for (; j + 2 <= n; j += 2) {
    if (x[j] < MIX_EXP_NORMAL || x[j + 1] < MIX_EXP_NORMAL) {
      x[j] = exp_nonpos1(x[j]);
      x[j + 1] = exp_nonpos1(x[j + 1]);
      continue;
    }
    mix_v2 v;
    memcpy(&v, x + j, sizeof v);
    mix_v2 t = v * l2e + sh, kd = t - sh;
    mix_v2 r = (v - kd * hi) - kd * lo;
    mix_v2i bits = ((mix_v2i)t - (mix_v2i)sh + bias) << 52;
    mix_v2 p = {EXP_C[13], EXP_C[13]};
    for (int i = 12; i >= 0; i--) p = p * r + EXP_C[i];
    mix_v2 y = p * (mix_v2)bits;
    memcpy(x + j, &y, sizeof y);
  }
#endif
  for (; j < n; j++) x[j] = exp_nonpos1(x[j]);
}

/* Softmax of w over the L indices idx into r[0..L-1], floored at
 * MIX_R_FLOOR (see mix-simd.h); returns the entropy
 * -sum_j r_j ln r_j = ln s - sum_j r_j (w_j - m), m = max, s = sum_j
 * exp(w_j - m): one log per point instead of one per kept component, and
 * accurate for confident points (both terms are then near 0). d: L doubles
 * of scratch. */
static double mix_softmax_entropy(const double *w, const int *idx, int L, double *r,
                                  double *d) {
  double m = -INFINITY;
  if (idx) {
    for (int j = 0; j < L; j++)
      if (w[idx[j]] > m) m = w[idx[j]];
    for (int j = 0; j < L; j++) r[j] = d[j] = w[idx[j]] - m;
  } else {
    /* dense: all K weights, in order */
    for (int j = 0; j < L; j++)
      if (w[j] > m) m = w[j];
    for (int j = 0; j < L; j++) r[j] = d[j] = w[j] - m;
  }
  mix_simd_exp_floor(r, L);
  double s = 0;
  for (int j = 0; j < L; j++) s += r[j];
  double inv = 1.0 / s, h = 0;
  for (int j = 0; j < L; j++) {
    r[j] *= inv;
    if (r[j] > 0) h -= r[j] * d[j];
  }
  h += log(s);
  return h > 0 ? h : 0.0;
}

void mix_logsumexp_rows(const double *W, int nb, int K, double *out, double *d) {
  for (int i = 0; i < nb; i++) {
    const double *w = W + (svi_len)i * K;
    double m = -INFINITY, acc = 0;
    for (int k = 0; k < K; k++)
      if (w[k] > m) m = w[k];
    for (int k = 0; k < K; k++) d[k] = w[k] - m;
    exp_nonpos(d, K);
    for (int k = 0; k < K; k++) acc += d[k];
    out[i] = m + log(acc);
  }
}

void mix_local(const mix_eval *ev, const mix_data *x, svi_len n0, svi_len n1, int L,
               int threads, int *resp_idx, double *resp_r, double *ent, double *dscratch,
               int *iscratch, double *Nk, double *S, double *sscratch, int *irows,
               double *t_summary) {
  int K = ev->K;
  svi_len n = n1 - n0, nblocks = svi_n_blocks(n);
  const mix_obs *obs = ev->obs;
  svi_len dper = mix_local_scratch(obs, ev->D, K);
  int D = ev->D, dense_gauss = L == K && obs->dense_local != NULL;
  (void)threads;
  (void)mix_simd_wide(); /* settled before the threads start */
  if (Nk) {
    /* one thread, dense full-covariance: the model's fused step */
    obs->dense_local(ev, x, n0, n1, ent, dscratch, Nk, S, sscratch, irows, t_summary);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (svi_len b = 0; b < nblocks; b++) {
    int t = svi_thread_id();
    double *W = dscratch + (svi_len)t * dper;
    if (dense_gauss) {
      /* dense full-covariance: weights component-major, softmax across
       * components with the block's points in vector lanes */
      double *xb = W + (svi_len)SVI_BLOCK * K, *Et = xb + mix_weights_scratch(obs, D, K);
      svi_len s = n0 + b * SVI_BLOCK;
      int nb = (int)((s + SVI_BLOCK <= n1) ? SVI_BLOCK : n1 - s);
      mix_gather_block(x, s, nb, xb);
      mix_simd_gauss_wt(ev, xb, nb, W);
      mix_simd_softmax(W, nb, K, resp_r + (s - n0) * K, ent + (s - n0), Et);
      continue;
    }
    double *wsc = W + (svi_len)SVI_BLOCK * K;
    double *dbuf = wsc + mix_weights_scratch(obs, ev->D, K);
    int *idx = iscratch + (svi_len)t * K;
    svi_len s = n0 + b * SVI_BLOCK;
    int nb = (int)((s + SVI_BLOCK <= n1) ? SVI_BLOCK : n1 - s);
    mix_block_weights(ev, x, s, nb, W, wsc);
    for (int i = 0; i < nb; i++) {
      const double *w = W + (svi_len)i * K;
      svi_len pt = s - n0 + i;
      if (L == K) {
        /* dense: component j is entry j; resp_idx is not written */
        ent[pt] = mix_softmax_entropy(w, NULL, K, resp_r + pt * K, dbuf);
        continue;
      }
      svi_select_top(w, K, L, idx);
      ent[pt] = mix_softmax_entropy(w, idx, L, resp_r + pt * L, dbuf);
      for (int j = 0; j < L; j++) resp_idx[pt * L + j] = idx[j];
    }
  }
}

void mix_summary(const mix_data *x, svi_len n0, svi_len n1, int K, int L,
                 const int *resp_idx, const double *resp_r, int threads, double *Nk,
                 double *S, svi_len *start, svi_len *cnt, svi_len *list_n, double *list_r,
                 double *xbuf, svi_len *pbuf) {
  const mix_obs *obs = x->obs;
  svi_len n = n1 - n0, P = obs->stat_size(x->D);
  svi_len per = mix_summary_scratch(obs, x->D, K);
  (void)threads;
  if (L == K && obs->dense_summary != NULL) {
    /* pbuf (threads x SVI_BLOCK svi_len) doubles as the row lists */
    obs->dense_summary(x, n0, n1, K, resp_r, threads, Nk, S, xbuf, (int *)pbuf);
    return;
  }
  memset(S, 0, sizeof(double) * (size_t)(P * K));
  if (L == K) {
    /* Dense: component k's responsibilities are column k of resp_r (the
     * top-K selection keeps components in order); each component gathers
     * its nonzero pairs in point order, in chunks of SVI_BLOCK, exactly as
     * the bucketed path below does. No buckets to build. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
    for (int k = 0; k < K; k++) {
      int t = svi_thread_id();
      double *xb = xbuf + (svi_len)t * per, *rb = xb + per - SVI_BLOCK;
      svi_len *pb = pbuf + (svi_len)t * SVI_BLOCK;
      double *Sk = S + (svi_len)k * P, nk = 0;
      int m = 0;
      for (svi_len i = 0; i < n; i++) {
        double r = resp_r[i * K + k];
        if (!(r > 0)) continue;
        nk += r;
        pb[m] = n0 + i;
        rb[m++] = r;
        if (m == SVI_BLOCK) {
          obs->add_pairs(x, pb, rb, m, Sk, xb);
          m = 0;
        }
      }
      if (m) obs->add_pairs(x, pb, rb, m, Sk, xb);
      Nk[k] = nk;
    }
    return;
  }
  const int CH = MIX_BUCKET_CHUNKS;
  /* Bucket the (point, r) pairs by component, in point order: count per
   * chunk of points (a fixed split, whatever the thread count), turn the
   * counts into each chunk's write cursors, then fill. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int c = 0; c < CH; c++) {
    svi_len *ck = cnt + (svi_len)c * K;
    for (int k = 0; k < K; k++) ck[k] = 0;
    for (svi_len e = n * c / CH * L; e < n * (c + 1) / CH * L; e++)
      if (resp_r[e] > 0) ck[resp_idx[e]]++;
  }
  svi_len pos = 0;
  for (int k = 0; k < K; k++) {
    start[k] = pos;
    for (int c = 0; c < CH; c++) {
      svi_len t = cnt[(svi_len)c * K + k];
      cnt[(svi_len)c * K + k] = pos;
      pos += t;
    }
  }
  start[K] = pos;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int c = 0; c < CH; c++) {
    svi_len *ck = cnt + (svi_len)c * K;
    for (svi_len i = n * c / CH; i < n * (c + 1) / CH; i++) {
      for (int j = 0; j < L; j++) {
        svi_len e = i * L + j;
        if (!(resp_r[e] > 0)) continue;
        svi_len p = ck[resp_idx[e]]++;
        list_n[p] = n0 + i;
        list_r[p] = resp_r[e];
      }
    }
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
  for (int k = 0; k < K; k++) {
    double *xb = xbuf + (svi_len)svi_thread_id() * per;
    double *Sk = S + (svi_len)k * P, nk = 0;
    for (svi_len e = start[k]; e < start[k + 1]; e++) nk += list_r[e];
    Nk[k] = nk;
    /* chunks of a component's points, in point order */
    for (svi_len e = start[k]; e < start[k + 1]; e += SVI_BLOCK) {
      int m = (int)(start[k + 1] - e < SVI_BLOCK ? start[k + 1] - e : SVI_BLOCK);
      obs->add_pairs(x, list_n + e, list_r + e, m, Sk, xb);
    }
  }
}

svi_len mix_summary_scratch(const mix_obs *obs, int D, int K) {
  return obs->summary_scratch(D, K);
}
