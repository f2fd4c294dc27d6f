/* kd-tree over the data with cached sufficient statistics per node (count,
 * sum x, packed sum x x^T), built once in O(N log N). Nodes split at the
 * median of the points' projections on the node's principal direction (a
 * "PCA tree"): in 16 and more dimensions axis-aligned cells keep straddling
 * clusters along the coordinates they were never split on. */
#include <math.h>
#include <string.h>
#include "vdp.h"

int vdp_tree_count_nodes(int n, int leaf_size) {
  if (n <= leaf_size) return 1;
  return 1 + vdp_tree_count_nodes(n / 2, leaf_size) +
         vdp_tree_count_nodes(n - n / 2, leaf_size);
}

/* Rearranges p[0..n) so that p[k] holds the element of rank k by key[p[i]],
 * smaller keys before, larger after. Three-way partitions keep duplicate
 * keys linear. */
static void select_rank(int *p, int n, int k, const double *key) {
  int lo = 0, hi = n - 1;
  while (hi > lo) {
    double a = key[p[lo]], b = key[p[(lo + hi) / 2]], c = key[p[hi]];
    double piv = (a < b) ? ((b < c) ? b : ((a < c) ? c : a))
                         : ((a < c) ? a : ((b < c) ? c : b));
    int lt = lo, i = lo, gt = hi;
    while (i <= gt) {
      double v = key[p[i]];
      if (v < piv) {
        int t = p[lt]; p[lt] = p[i]; p[i] = t;
        lt++; i++;
      } else if (v > piv) {
        int t = p[gt]; p[gt] = p[i]; p[i] = t;
        gt--;
      } else {
        i++;
      }
    }
    if (k < lt) hi = lt - 1;
    else if (k > gt) lo = gt + 1;
    else return;
  }
}

#define TREE_SAMPLE 64
#define TREE_PCA_MIN 2048

/* Split direction of the points p[0..n). Large nodes: principal direction
 * of the covariance of an evenly strided sample of TREE_SAMPLE points (power
 * iteration). Small nodes (n <= TREE_PCA_MIN): the farthest-pair heuristic
 * (a point far from the mean, then the point farthest from it), O(n D). */
static void split_direction(const vdp_tree *t, const int *p, int n, double *v,
                            double *C, double *mu, double *u) {
  const int D = t->D;
  int m = n < TREE_SAMPLE ? n : TREE_SAMPLE;
  memset(mu, 0, sizeof(double) * D);
  for (int s = 0; s < m; s++) {
    const double *x = t->X + (size_t)D * p[(size_t)s * n / m];
    for (int d = 0; d < D; d++) mu[d] += x[d] / m;
  }
  if (n <= TREE_PCA_MIN) {
    const double *ref = mu;
    for (int pass = 0; pass < 2; pass++) {
      double best = -1.0;
      int bi = 0;
      for (int i = 0; i < n; i++) {
        const double *x = t->X + (size_t)D * p[i];
        double d2 = 0.0;
        for (int d = 0; d < D; d++) d2 += (x[d] - ref[d]) * (x[d] - ref[d]);
        if (d2 > best) {
          best = d2;
          bi = i;
        }
      }
      const double *xb = t->X + (size_t)D * p[bi];
      if (pass == 0) {
        memcpy(u, xb, sizeof(double) * D);
        ref = u;
      } else {
        double nrm = 0.0;
        for (int d = 0; d < D; d++) {
          v[d] = xb[d] - u[d];
          nrm += v[d] * v[d];
        }
        if (nrm > 0) return;
      }
    }
    for (int d = 0; d < D; d++) v[d] = d == 0; /* all points equal */
    return;
  }
  memset(C, 0, sizeof(double) * (size_t)D * D);
  for (int s = 0; s < m; s++) {
    const double *x = t->X + (size_t)D * p[(size_t)s * n / m];
    for (int b = 0; b < D; b++) {
      double eb = x[b] - mu[b];
      for (int a = 0; a <= b; a++) C[a + (size_t)b * D] += (x[a] - mu[a]) * eb;
    }
  }
  int widest = 0;
  for (int b = 0; b < D; b++) {
    for (int a = 0; a < b; a++) C[b + (size_t)a * D] = C[a + (size_t)b * D];
    if (C[b + (size_t)b * D] > C[widest + (size_t)widest * D]) widest = b;
  }
  for (int d = 0; d < D; d++) v[d] = d == widest ? 1.0 : 0.01;
  for (int it = 0; it < 20; it++) {
    double nrm = 0.0;
    for (int a = 0; a < D; a++) {
      double s = 0.0;
      for (int b = 0; b < D; b++) s += C[a + (size_t)b * D] * v[b];
      u[a] = s;
      nrm += s * s;
    }
    if (!(nrm > 0)) {
      for (int d = 0; d < D; d++) v[d] = d == widest;
      return;
    }
    nrm = sqrt(nrm);
    for (int a = 0; a < D; a++) v[a] = u[a] / nrm;
  }
}

static int build(vdp_tree *t, int *next, int start, int n, int depth) {
  const int D = t->D, P = t->P;
  int id = (*next)++;
  t->start[id] = start;
  t->count[id] = n;
  t->depth[id] = depth;
  double *s1 = t->s1 + (size_t)id * D, *s2 = t->s2 + (size_t)id * P;
  if (n <= t->leaf_size) {
    t->left[id] = t->right[id] = -1;
    memset(s1, 0, sizeof(double) * D);
    memset(s2, 0, sizeof(double) * P);
    for (int i = 0; i < n; i++) {
      const double *x = t->X + (size_t)D * t->perm[start + i];
      int idx = 0;
      for (int b = 0; b < D; b++) {
        s1[b] += x[b];
        for (int a = 0; a <= b; a++) s2[idx++] += x[a] * x[b];
      }
    }
    return id;
  }
  /* split at the median projection on the principal direction */
  double *v = t->scratch, *C = v + D, *mu = C + (size_t)D * D, *u = mu + D;
  split_direction(t, t->perm + start, n, v, C, mu, u);
  for (int i = 0; i < n; i++) {
    int p = t->perm[start + i];
    const double *x = t->X + (size_t)D * p;
    double pr = 0.0;
    for (int d = 0; d < D; d++) pr += v[d] * x[d];
    t->key[p] = pr;
  }
  int h = n / 2;
  select_rank(t->perm + start, n, h, t->key);
  int l = build(t, next, start, h, depth + 1);
  int r = build(t, next, start + h, n - h, depth + 1);
  t->left[id] = l;
  t->right[id] = r;
  const double *l1 = t->s1 + (size_t)l * D, *r1 = t->s1 + (size_t)r * D;
  const double *l2 = t->s2 + (size_t)l * P, *r2 = t->s2 + (size_t)r * P;
  for (int d = 0; d < D; d++) s1[d] = l1[d] + r1[d];
  for (int i = 0; i < P; i++) s2[i] = l2[i] + r2[i];
  return id;
}

void vdp_tree_build(vdp_tree *t) {
  for (int i = 0; i < t->N; i++) t->perm[i] = i;
  int next = 0;
  build(t, &next, 0, t->N, 0);
  t->n_nodes = next;
}
