/* Initialisation of mixtures (Hughes & Sudderth §6): k-means++ seeding with
 * a divergence suited to the likelihood, or uniform seeding. One random
 * stream drives the draws; the distance updates are per point, so the seeds
 * do not depend on the thread count.
 * Divergences: Gaussian and diagonal models, scaled squared Euclidean
 * distance; zero-mean model, the squared residual of x after projection on
 * the seed's axis (the zero-mean Gaussian's components are directions);
 * multinomial, KL(p_n || q_c) from the document's word distribution to the
 * seed document's smoothed distribution. */
#include <math.h>
#include <string.h>
#include "mix.h"

#define MULT_SMOOTH 0.1
#define MIX_INIT_TRIALS 3
#define INIT_CHUNK 256
/* (SVI_SIMD, svi.h: each lane is its own point, vectorising changes no
 * result) */

static int already(const svi_len *out, int c, svi_len n) {
  for (int j = 0; j < c; j++)
    if (out[j] == n) return 1;
  return 0;
}

/* work: max(D, V) doubles for the seed, plus N doubles (mult: sum p ln p). */
void mix_seed_dist_kl(const mix_data *x, svi_len cidx, const double *scale, int threads,
                      const double *cur, double *dist, double *work, int first) {
  svi_len N = x->N;
  int D = x->D;
  (void)threads;
  (void)scale;
  {
    const svi_dtm *m = &x->dtm;
    double *logq = work, *plogp = work + D;
    double tot = 0;
    for (int v = 0; v < D; v++) logq[v] = MULT_SMOOTH;
    for (int p = m->doc_ptr[cidx]; p < m->doc_ptr[cidx + 1]; p++) {
      logq[m->term[p]] += m->count[p];
      tot += m->count[p];
    }
    double lnorm = log(tot + MULT_SMOOTH * D);
    for (int v = 0; v < D; v++) logq[v] = log(logq[v]) - lnorm;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
    for (svi_len n = 0; n < N; n++) {
      double len = 0, cross = 0;
      for (int p = m->doc_ptr[n]; p < m->doc_ptr[n + 1]; p++) {
        len += m->count[p];
        cross += m->count[p] * logq[m->term[p]];
      }
      if (first) {
        double h = 0;
        for (int p = m->doc_ptr[n]; p < m->doc_ptr[n + 1]; p++)
          h += m->count[p] * log(m->count[p] / len);
        plogp[n] = len > 0 ? h / len : 0;
      }
      double d = len > 0 ? plogp[n] - cross / len : 0;
      if (d < 0) d = 0;
      dist[n] = (first || d < cur[n]) ? d : cur[n];
    }
  }
}

/* The points' divergences: scaled squared Euclidean (zm = 0) or the
 * squared residual after projection on the seed's axis (zm = 1). */
static void seed_dist_points(const mix_data *x, svi_len cidx, const double *scale,
                             int threads, const double *cur, double *dist, double *work,
                             int first, int zm) {
  svi_len N = x->N;
  int D = x->D;
  (void)threads;
  double *cx = work, cn = 0;
  for (int d = 0; d < D; d++) {
    cx[d] = x->X[(svi_len)d * N + cidx];
    cn += cx[d] * cx[d];
  }
  /* Chunks of INIT_CHUNK points, dimension by dimension (contiguous and
   * vectorisable); each point's sums still run over d in order. */
  svi_len nchunks = (N + INIT_CHUNK - 1) / INIT_CHUNK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (svi_len ch = 0; ch < nchunks; ch++) {
    svi_len s0 = ch * INIT_CHUNK;
    int m = (int)(N - s0 < INIT_CHUNK ? N - s0 : INIT_CHUNK);
    double s[INIT_CHUNK], xc[INIT_CHUNK];
    for (int i = 0; i < m; i++) s[i] = xc[i] = 0;
    for (int d = 0; d < D; d++) {
      const double *xd = x->X + (svi_len)d * N + s0;
      double c = cx[d];
      if (zm) {
        SVI_SIMD
        for (int i = 0; i < m; i++) {
          s[i] += xd[i] * xd[i];
          xc[i] += xd[i] * c;
        }
      } else {
        double sc = scale[d];
        SVI_SIMD
        for (int i = 0; i < m; i++) {
          double v = xd[i] - c;
          s[i] += sc * v * v;
        }
      }
    }
    for (int i = 0; i < m; i++) {
      double v = s[i];
      if (zm) {
        v = cn > 0 ? s[i] - xc[i] * xc[i] / cn : s[i];
        if (v < 0) v = 0;
      }
      svi_len n = s0 + i;
      dist[n] = (first || v < cur[n]) ? v : cur[n];
    }
  }
}

void mix_seed_dist_sq(const mix_data *x, svi_len cidx, const double *scale, int threads,
                      const double *cur, double *dist, double *work, int first) {
  seed_dist_points(x, cidx, scale, threads, cur, dist, work, first, 0);
}

void mix_seed_dist_axis(const mix_data *x, svi_len cidx, const double *scale, int threads,
                        const double *cur, double *dist, double *work, int first) {
  seed_dist_points(x, cidx, scale, threads, cur, dist, work, first, 1);
}

void mix_init_seeds(const mix_data *x, int K, int plusplus, const double *scale,
                    uint64_t seed, int threads, svi_len *out, double *dist,
                    double *work) {
  svi_rng r;
  svi_rng_init(&r, seed, MIX_STREAM_OFFSET + 0xffffULL);
  svi_len N = x->N;
  /* greedy k-means++: each pick draws MIX_INIT_TRIALS candidates and keeps
   * the one that lowers the total divergence most */
  double *cand = dist + N, *best = dist + 2 * N;
  for (int c = 0; c < K; c++) {
    svi_len pick = -1;
    if (plusplus && c > 0) {
      double total = 0;
      for (svi_len n = 0; n < N; n++) total += dist[n];
      if (total > 0 && isfinite(total)) {
        double best_total = INFINITY;
        for (int t = 0; t < MIX_INIT_TRIALS; t++) {
          double u = svi_rng_unif(&r) * total, acc = 0;
          svi_len p = -1;
          for (svi_len n = 0; n < N; n++) {
            if (dist[n] <= 0) continue;
            acc += dist[n];
            p = n;
            if (acc >= u) break;
          }
          if (p < 0 || already(out, c, p)) continue;
          x->obs->seed_dist(x, p, scale, threads, dist, cand, work, 0);
          double tot = 0;
          for (svi_len n = 0; n < N; n++) tot += cand[n];
          if (tot < best_total) {
            best_total = tot;
            pick = p;
            double *tmp = best;
            best = cand;
            cand = tmp;
          }
        }
      }
    }
    if (pick >= 0) {
      out[c] = pick;
      memcpy(dist, best, sizeof(double) * (size_t)N);
      continue;
    }
    while (pick < 0 || already(out, c, pick))
      pick = (svi_len)svi_rng_int(&r, (uint64_t)N);
    out[c] = pick;
    if (plusplus && c + 1 < K)
      x->obs->seed_dist(x, pick, scale, threads, dist, dist, work, c == 0);
  }
}

int mix_center_columns(const double *X, svi_len N, int D, int zero_mean, int threads,
                       double *Xc, double *center, double *spread, double *range,
                       svi_len *bad) {
  int any_bad = 0;
  (void)threads;
  /* columns are independent: the same values for any thread count */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(| : any_bad)
#endif
  for (int d = 0; d < D; d++) {
    const double *x = X + (svi_len)d * N;
    double *y = Xc + (svi_len)d * N;
    bad[d] = -1;
    double lo_d = N > 0 ? x[0] : 0.0, hi_d = lo_d;
    for (svi_len n = 0; n < N; n++) {
      if (!isfinite(x[n])) {
        bad[d] = n;
        any_bad = 1;
        break;
      }
      lo_d = x[n] < lo_d ? x[n] : lo_d;
      hi_d = x[n] > hi_d ? x[n] : hi_d;
    }
    if (bad[d] >= 0) continue;
    range[2 * d] = lo_d;
    range[2 * d + 1] = hi_d;
    /* long double sums divided in long double, as R's colMeans() does */
    long double s = 0;
    if (!zero_mean)
      for (svi_len n = 0; n < N; n++) s += x[n];
    double c = zero_mean ? 0.0 : (double)(s / N);
    long double q = 0;
    for (svi_len n = 0; n < N; n++) {
      double v = zero_mean ? x[n] : x[n] - c;
      y[n] = v;
      q += v * v;
    }
    center[d] = c;
    spread[d] = (double)(q / N);
  }
  return any_bad;
}
