/* Model-based agglomerative hierarchical clustering of points under the
 * unconstrained Gaussian model (Banfield & Raftery 1993; Fraley 1998): the
 * start mclust's EM uses by default (its hc(), model "VVV"), written from
 * the paper's criterion.
 *
 * Every point starts as its own cluster; each step merges the pair whose
 * merge raises the classification criterion least. The criterion is a sum
 * over clusters of
 *   T(n, W) = n log( |W / n| + beta (tr W + alpha) / n ),
 * W the cluster's scatter matrix (sum of outer products of the deviations
 * from its mean) and |W / n| taken as 0 while n <= D (the scatter is then
 * singular). The first term is the classification likelihood's (n log of
 * the maximum-likelihood covariance's determinant); the trace term keeps
 * small clusters' terms finite and, for clusters of D points or fewer, is
 * all there is (a spherical criterion, as Ward's). alpha scales with the
 * data (the caller passes tr(W of all points) / (N D)), beta = 1.
 *
 * Cost: O(N^2) pair costs, each O(D^3) once the merged cluster exceeds D
 * points; the pair costs live in a packed lower triangle (N (N - 1) / 2
 * doubles), and each cluster keeps the pair of lowest cost with a cluster
 * of lower index, so a merge rescans only the rows it touched: O(N D^3)
 * per merge in the usual case. Plain C, no R API; no random numbers. */
#include <math.h>
#include <string.h>
#include "mix-hc.h"

/* packed lower triangle: the pair (i, j), i > j */
static inline size_t pidx(svi_len i, svi_len j) { return (size_t)i * (i - 1) / 2 + j; }

/* log |A| of a symmetric D x D matrix (column-major; overwritten with its
 * Cholesky factor), -INFINITY when it is not positive definite. */
static double chol_logdet(double *A, int D) {
  double ld = 0;
  for (int j = 0; j < D; j++) {
    double s = A[j + (size_t)j * D];
    for (int k = 0; k < j; k++) s -= A[j + (size_t)k * D] * A[j + (size_t)k * D];
    if (!(s > 0)) return -INFINITY;
    double r = sqrt(s);
    A[j + (size_t)j * D] = r;
    ld += 2 * log(r);
    for (int i = j + 1; i < D; i++) {
      double t = A[i + (size_t)j * D];
      for (int k = 0; k < j; k++) t -= A[i + (size_t)k * D] * A[j + (size_t)k * D];
      A[i + (size_t)j * D] = t / r;
    }
  }
  return ld;
}

/* T(n, W) from n, tr W and (when n > D) W itself (overwritten). */
static double hc_term(double n, double tr, double *W, int D, double alpha, double beta) {
  double lf = log(beta * (tr + alpha) / n);
  if (n <= D || !(tr > 0)) return n * lf;
  for (int j = 0; j < D; j++)
    for (int i = j; i < D; i++) W[i + (size_t)j * D] /= n;
  double ld = chol_logdet(W, D);
  if (ld == -INFINITY) return n * lf;
  /* log(e^ld + e^lf), stably */
  return n * (ld > lf ? ld + log1p(exp(lf - ld)) : lf + log1p(exp(ld - lf)));
}

/* The cost of merging clusters a and b: T(merged) - T(a) - T(b). */
static double hc_pair(const mix_hc_work *w, svi_len a, svi_len b, double *scratch) {
  int D = w->D;
  double na = w->n[a], nb = w->n[b], nab = na + nb, c = na * nb / nab;
  const double *ma = w->mean + (size_t)a * D, *mb = w->mean + (size_t)b * D;
  double *d = scratch, *W = scratch + D;
  double dd = 0;
  for (int i = 0; i < D; i++) {
    d[i] = ma[i] - mb[i];
    dd += d[i] * d[i];
  }
  double tr = w->tr[a] + w->tr[b] + c * dd;
  if (nab > D && tr > 0) {
    const double *Wa = w->W + (size_t)a * D * D, *Wb = w->W + (size_t)b * D * D;
    for (int j = 0; j < D; j++)
      for (int i = j; i < D; i++)
        W[i + (size_t)j * D] = Wa[i + (size_t)j * D] + Wb[i + (size_t)j * D] + c * d[i] * d[j];
  }
  return hc_term(nab, tr, W, D, w->alpha, w->beta) - w->term[a] - w->term[b];
}

/* the lowest-cost pair (a, j), j < a, active; -1 when a has none */
static void hc_row_best(mix_hc_work *w, svi_len a) {
  svi_len bj = -1;
  double bc = INFINITY;
  for (svi_len j = 0; j < a; j++) {
    if (!w->active[j]) continue;
    double c = w->cost[pidx(a, j)];
    if (bj < 0 || c < bc) {
      bc = c;
      bj = j;
    }
  }
  w->best[a] = bj;
  w->best_cost[a] = bc;
}

size_t mix_hc_work_doubles(svi_len N, int D) {
  return (size_t)N * (N - 1) / 2 + (size_t)N * (4 + D + (size_t)D * D) + D + (size_t)D * D;
}

/* X: N x D column-major. merges: 2 (N - 1) ints, the pairs merged in order
 * (0-based; each cluster is named by its smallest point, the name the merge
 * keeps first), costs: N - 1 doubles. mem: mix_hc_work_doubles(N, D)
 * doubles, N ints (flags) and N svi_len (best pairs). */
void mix_hc_merges(const double *X, svi_len N, int D, double alpha, double beta,
                   int *merges, double *costs, double *mem, int *flags, svi_len *best) {
  mix_hc_work w;
  w.D = D;
  w.alpha = alpha;
  w.beta = beta;
  w.cost = mem;
  mem += (size_t)N * (N - 1) / 2;
  w.n = mem;
  mem += N;
  w.tr = mem;
  mem += N;
  w.term = mem;
  mem += N;
  w.best_cost = mem;
  mem += N;
  w.mean = mem;
  mem += (size_t)N * D;
  w.W = mem;
  mem += (size_t)N * D * D;
  double *scratch = mem;
  w.active = flags;
  w.best = best;
  double t1 = log(alpha * beta); /* a single point: n = 1, tr W = 0 */
  for (svi_len i = 0; i < N; i++) {
    w.n[i] = 1;
    w.tr[i] = 0;
    w.term[i] = t1;
    w.active[i] = 1;
    for (int d = 0; d < D; d++) w.mean[(size_t)i * D + d] = X[i + (size_t)d * N];
  }
  memset(w.W, 0, sizeof(double) * (size_t)N * D * D);
  for (svi_len i = 1; i < N; i++) {
    for (svi_len j = 0; j < i; j++) w.cost[pidx(i, j)] = hc_pair(&w, i, j, scratch);
  }
  w.best[0] = -1;
  for (svi_len i = 1; i < N; i++) hc_row_best(&w, i);
  for (svi_len s = 0; s + 1 < N; s++) {
    /* the lowest cost over the rows (ties: the first row) */
    svi_len a = -1;
    for (svi_len i = 1; i < N; i++) {
      if (!w.active[i] || w.best[i] < 0) continue;
      if (a < 0 || w.best_cost[i] < w.best_cost[a]) a = i;
    }
    svi_len b = w.best[a]; /* b < a: a merges into b */
    merges[2 * s] = (int)b;
    merges[2 * s + 1] = (int)a;
    costs[s] = w.best_cost[a];
    /* the merged cluster's summaries in b's slot */
    double na = w.n[a], nb = w.n[b], nab = na + nb, c = na * nb / nab;
    double *ma = w.mean + (size_t)a * D, *mb = w.mean + (size_t)b * D;
    double *Wa = w.W + (size_t)a * D * D, *Wb = w.W + (size_t)b * D * D;
    double dd = 0;
    for (int i = 0; i < D; i++) {
      scratch[i] = ma[i] - mb[i];
      dd += scratch[i] * scratch[i];
    }
    for (int j = 0; j < D; j++)
      for (int i = j; i < D; i++)
        Wb[i + (size_t)j * D] += Wa[i + (size_t)j * D] + c * scratch[i] * scratch[j];
    for (int i = 0; i < D; i++) mb[i] = (nb * mb[i] + na * ma[i]) / nab;
    w.tr[b] += w.tr[a] + c * dd;
    w.n[b] = nab;
    {
      double *T = scratch + D;
      for (int j = 0; j < D; j++)
        for (int i = j; i < D; i++) T[i + (size_t)j * D] = Wb[i + (size_t)j * D];
      w.term[b] = hc_term(nab, w.tr[b], T, D, alpha, beta);
    }
    w.active[a] = 0;
    /* the costs of b's pairs, and the rows' best pairs they change */
    for (svi_len k = 0; k < N; k++) {
      if (!w.active[k] || k == b) continue;
      double cst = hc_pair(&w, b > k ? b : k, b > k ? k : b, scratch);
      w.cost[b > k ? pidx(b, k) : pidx(k, b)] = cst;
    }
    for (svi_len k = 1; k < N; k++) {
      if (!w.active[k]) continue;
      if (k == b || w.best[k] == a || w.best[k] == b) {
        hc_row_best(&w, k);
      } else if (k > b) {
        /* the pair (k, b) can only have become the row's best by falling
         * below it; ties keep the lower index, as a rescan would */
        double cst = w.cost[pidx(k, b)];
        if (cst < w.best_cost[k] || (cst == w.best_cost[k] && b < w.best[k])) {
          w.best[k] = b;
          w.best_cost[k] = cst;
        }
      }
    }
  }
}
