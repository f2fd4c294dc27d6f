/* kd-tree over the data with cached sufficient statistics per node (count,
 * sum x, packed sum x x^T), built once in O(N log N). Nodes split at the
 * median of a sample of the points' projections on the node's principal
 * direction (a "PCA tree"): in 16 and more dimensions axis-aligned cells
 * keep straddling clusters along the coordinates they were never split on.
 * Each level costs a projection pass and one partition pass that moves the
 * points (so every node's points stay contiguous). Leaves and buckets (the
 * first nodes of at most t->bucket points from the root down) get their
 * statistics from their points, other nodes as sums of their children's.
 * Built lazily, the tree stops at the buckets and vdp_tree_expand builds a
 * bucket's subtree when the fit first asks for its children: the nodes,
 * their numbering aside, and their statistics are those of the whole build,
 * which never has to happen (at 10^6 points the fit uses outer nodes of
 * hundreds of points and builds under a tenth of the tree's nodes). */
#include <math.h>
#include <string.h>
#include "kdtree.h"

#define TREE_SAMPLE 64
#define TREE_PCA_MIN 2048
#define TREE_PIVOT_SAMPLE 255
#define TREE_EXACT_BELOW 64

/* A node of n points splits into children of at least floor(n / 4) points,
 * and of floor(n / 2) and n - floor(n / 2) when n < TREE_EXACT_BELOW
 * (build). So a leaf (n <= leaf_size, its parent more) holds at least
 * min(TREE_EXACT_BELOW / 4, floor((leaf_size + 1) / 2)) points when
 * leaf_size < TREE_EXACT_BELOW, floor((leaf_size + 1) / 4) otherwise; this
 * bounds the number of nodes. Only the nodes built are touched, so the bound
 * costs address space, not time. */
int vdp_tree_count_nodes(int n, int leaf_size) {
  if (n <= leaf_size) return 1;
  double min_leaf = leaf_size < TREE_EXACT_BELOW
                        ? fmin(TREE_EXACT_BELOW / 4, floor((leaf_size + 1.0) / 2.0))
                        : floor((leaf_size + 1.0) / 4.0);
  if (min_leaf < 1.0) min_leaf = 1.0;
  double leaves = floor(n / min_leaf);
  double nodes = 2.0 * leaves - 1.0;
  return nodes < 2.0 * n - 1.0 ? (int)nodes : 2 * n - 1;
}

/* The value of rank k among v[0..n) (v is reordered). Three-way partitions
 * keep duplicate keys linear. */
static double select_value(double *v, int n, int k) {
  int lo = 0, hi = n - 1;
  while (hi > lo) {
    double a = v[lo], b = v[(lo + hi) / 2], c = v[hi];
    double piv = (a < b) ? ((b < c) ? b : ((a < c) ? c : a))
                         : ((a < c) ? a : ((b < c) ? c : b));
    int lt = lo, i = lo, gt = hi;
    while (i <= gt) {
      double x = v[i];
      if (x < piv) {
        v[i] = v[lt]; v[lt] = x;
        lt++; i++;
      } else if (x > piv) {
        v[i] = v[gt]; v[gt] = x;
        gt--;
      } else {
        i++;
      }
    }
    if (k < lt) hi = lt - 1;
    else if (k > gt) lo = gt + 1;
    else return piv;
  }
  return v[k];
}

/* Swaps points i and j (columns of X, their keys and original indices). */
static inline void swap_points(vdp_tree *t, int i, int j) {
  const int D = t->D;
  double *xi = t->X + (size_t)i * D, *xj = t->X + (size_t)j * D;
  if (D == 16) { /* (the common case: a fixed-size swap the compiler vectorises) */
    double tmp[16];
    memcpy(tmp, xi, sizeof(tmp));
    memcpy(xi, xj, sizeof(tmp));
    memcpy(xj, tmp, sizeof(tmp));
  } else {
    for (int d = 0; d < D; d++) {
      double v = xi[d]; xi[d] = xj[d]; xj[d] = v;
    }
  }
  double k = t->key[i]; t->key[i] = t->key[j]; t->key[j] = k;
  int p = t->perm[i]; t->perm[i] = t->perm[j]; t->perm[j] = p;
}

/* Partition of the points [lo, hi): those with key < piv (less = 1) or
 * key == piv (less = 0) first; returns how many (h). The result is Hoare's
 * partition exactly: Hoare's scan from the left stops at the points of
 * [lo, lo + h) that belong right, in increasing order, the scan from the
 * right at the points of [lo + h, hi) that belong left, in decreasing
 * order, and the k-th stops of the two are swapped. Here h is counted
 * first, and the two lists of stops are collected in blocks without
 * branches on the keys (the keys are in random order, so Hoare's scans
 * mispredicted about every other point), then the pairs swapped in order:
 * the same swaps, so the same tree. */
#define PART_BLOCK 128
static inline int goes_left(double k, double piv, int less) {
  return less ? k < piv : k == piv;
}
static int partition_points(vdp_tree *t, int lo, int hi, double piv, int less) {
  const double *key = t->key;
  int h = 0;
  if (less)
    for (int i = lo; i < hi; i++) h += key[i] < piv;
  else
    for (int i = lo; i < hi; i++) h += key[i] == piv;
  const int mid = lo + h;
  int L[PART_BLOCK], R[PART_BLOCK];
  int a = lo, b = hi - 1, nl = 0, sl = 0, nr = 0, sr = 0;
  for (;;) {
    if (sl == nl) {
      sl = nl = 0;
      int stop = mid - a < PART_BLOCK ? mid : a + PART_BLOCK;
      for (; a < stop; a++) {
        L[nl] = a;
        nl += !goes_left(key[a], piv, less);
      }
    }
    if (sr == nr) {
      sr = nr = 0;
      int stop = b - mid + 1 < PART_BLOCK ? mid - 1 : b - PART_BLOCK;
      for (; b > stop; b--) {
        R[nr] = b;
        nr += goes_left(key[b], piv, less);
      }
    }
    int k = nl - sl < nr - sr ? nl - sl : nr - sr;
    if (k == 0) {
      if ((sl == nl && a >= mid) || (sr == nr && b < mid)) break;
      continue;
    }
    for (int q = 0; q < k; q++) swap_points(t, L[sl + q], R[sr + q]);
    sl += k;
    sr += k;
  }
  return h;
}

/* Squared distance with four partial sums (a single sum is latency-bound:
 * this and svi_dot4 run once per point on every level of the tree). */
static inline double dist4(const double *a, const double *b, int D) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int d = 0;
  for (; d + 4 <= D; d += 4) {
    double e0 = a[d] - b[d], e1 = a[d + 1] - b[d + 1];
    double e2 = a[d + 2] - b[d + 2], e3 = a[d + 3] - b[d + 3];
    s0 += e0 * e0;
    s1 += e1 * e1;
    s2 += e2 * e2;
    s3 += e3 * e3;
  }
  for (; d < D; d++) s0 += (a[d] - b[d]) * (a[d] - b[d]);
  return (s0 + s1) + (s2 + s3);
}

/* Split direction of the points p[0..n). Large nodes: principal direction
 * of the covariance of an evenly strided sample of TREE_SAMPLE points (power
 * iteration). Small nodes (n <= TREE_PCA_MIN): the farthest-pair heuristic
 * (a point far from the mean, then the point farthest from it), O(n D). */
static void pca_direction(const double *const *xs, int m, int D, double *v, double *C,
                          double *mu, double *u);
static void split_direction(const vdp_tree *t, int start, int n, double *v,
                            double *C, double *mu, double *u) {
  const int D = t->D;
  int m = n < TREE_SAMPLE ? n : TREE_SAMPLE;
  const double *xs[TREE_SAMPLE];
  for (int s = 0; s < m; s++) xs[s] = t->X + (size_t)D * (start + (size_t)s * n / m);
  if (n > TREE_PCA_MIN) {
    pca_direction(xs, m, D, v, C, mu, u);
    return;
  }
  /* (one register sum per coordinate: summing into mu[] through memory
   * made this loop latency-bound) */
  for (int d = 0; d < D; d++) {
    double sd = 0.0;
    for (int s = 0; s < m; s++) sd += xs[s][d];
    mu[d] = sd / m;
  }
  {
    const double *ref = mu;
    for (int pass = 0; pass < 2; pass++) {
      double best = -1.0;
      int bi = 0;
      for (int i = 0; i < n; i++) {
        const double *x = t->X + (size_t)D * (start + i);
        double d2 = dist4(x, ref, D);
        if (d2 > best) {
          best = d2;
          bi = i;
        }
      }
      const double *xb = t->X + (size_t)D * (start + bi);
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
  }
}

/* The principal direction of the covariance of the sample points xs[0..m)
 * (power iteration), for nodes of more than TREE_PCA_MIN points. */
static void pca_direction(const double *const *xs, int m, int D, double *v, double *C,
                          double *mu, double *u) {
  for (int d = 0; d < D; d++) {
    double sd = 0.0;
    for (int s = 0; s < m; s++) sd += xs[s][d];
    mu[d] = sd / m;
  }
  memset(C, 0, sizeof(double) * (size_t)D * D);
  for (int s = 0; s < m; s++) {
    const double *x = xs[s];
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
  if (svi_power_iteration(C, D, v, 20, u))
    for (int d = 0; d < D; d++) v[d] = d == widest; /* C v vanished */
}

/* Statistics of node id from its points (contiguous, in tree order): each
 * packed entry (a, b) is a register sum over the points, four entries a..a+3
 * of a column b at a time, each split over even and odd points (eight
 * independent chains: one or two chains per entry were latency-bound). */
static void direct_stats(vdp_tree *t, int id) {
  const int D = t->D, P = t->P, n = t->count[id];
  double *s1 = t->s1 + (size_t)id * D, *s2 = t->s2 + (size_t)id * P;
  const double *x0 = t->X + (size_t)D * t->start[id];
  (void)P;
  int idx = 0;
  for (int b = 0; b < D; b++) {
    double sb0 = 0.0, sb1 = 0.0;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
      sb0 += x0[(size_t)i * D + b];
      sb1 += x0[(size_t)(i + 1) * D + b];
    }
    if (i < n) sb0 += x0[(size_t)i * D + b];
    s1[b] = sb0 + sb1;
    int a = 0;
    for (; a + 4 <= b + 1; a += 4) {
      double e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
      double f0 = 0.0, f1 = 0.0, f2 = 0.0, f3 = 0.0;
      for (i = 0; i + 2 <= n; i += 2) {
        const double *x = x0 + (size_t)i * D, *y = x + D;
        const double xb = x[b], yb = y[b];
        e0 += x[a] * xb;
        e1 += x[a + 1] * xb;
        e2 += x[a + 2] * xb;
        e3 += x[a + 3] * xb;
        f0 += y[a] * yb;
        f1 += y[a + 1] * yb;
        f2 += y[a + 2] * yb;
        f3 += y[a + 3] * yb;
      }
      if (i < n) {
        const double *x = x0 + (size_t)i * D, xb = x[b];
        e0 += x[a] * xb;
        e1 += x[a + 1] * xb;
        e2 += x[a + 2] * xb;
        e3 += x[a + 3] * xb;
      }
      s2[idx++] = e0 + f0;
      s2[idx++] = e1 + f1;
      s2[idx++] = e2 + f2;
      s2[idx++] = e3 + f3;
    }
    for (; a <= b; a++) {
      double e0 = 0.0, e1 = 0.0;
      for (i = 0; i + 2 <= n; i += 2) {
        const double *x = x0 + (size_t)i * D;
        e0 += x[a] * x[b];
        e1 += x[D + a] * x[D + b];
      }
      if (i < n) e0 += x0[(size_t)i * D + a] * x0[(size_t)i * D + b];
      s2[idx++] = e0 + e1;
    }
  }
}

/* Build modes: above the buckets, leaving them unbuilt (LAZY) or not
 * (EAGER); inside a bucket (all built, statistics summed bottom-up). */
enum { BUILD_EAGER, BUILD_LAZY, BUILD_INSIDE };

static void build(vdp_tree *t, int *next, int id, int start, int n, int depth, int mode);

/* Splits node id (its start, count and depth set) in two and builds both
 * children (numbered here, together) and what is below them (see build). */
static void split_node(vdp_tree *t, int *next, int id, int mode) {
  const int D = t->D, start = t->start[id], n = t->count[id];
  /* split at the median projection on the principal direction */
  double *v = t->scratch, *C = v + D, *mu = C + (size_t)D * D, *u = mu + D;
  double *key = t->key + start, *kc = t->key + t->N;
  if (id == 0 && t->root_keyed) {
    t->root_keyed = 0; /* the keys came with the data (vdp_tree_root_direction) */
  } else {
    split_direction(t, start, n, v, C, mu, u);
    for (int i = 0; i < n; i++) {
      const double *x = t->X + (size_t)D * (start + i);
      key[i] = svi_dot4(v, x, D);
    }
  }
  /* split at the median of an evenly strided sample of the keys: one
   * partition pass, no selection over all n keys. Small nodes (n <
   * TREE_EXACT_BELOW), and nodes where the sample's median leaves a child
   * with less than a quarter of the points (ties, a skewed sample), use the
   * exact median: the h smallest keys go left, those below the median
   * value, then as many equal to it as needed. The points move, so children
   * are contiguous. */
  int h = 0;
  if (n >= TREE_EXACT_BELOW) {
    int m = n < 4096 ? 63 : TREE_PIVOT_SAMPLE;
    for (int s = 0; s < m; s++) kc[s] = key[(size_t)s * n / m + (n / m) / 2];
    double piv = select_value(kc, m, m / 2);
    h = partition_points(t, start, start + n, piv, 1);
  }
  if (h < n / 4 || h > n - n / 4 || h == 0) {
    h = n / 2;
    memcpy(kc, key, sizeof(double) * n);
    double med = select_value(kc, n, h);
    int lt = partition_points(t, start, start + n, med, 1);
    if (lt < h) partition_points(t, start + lt, start + n, med, 0);
  }
  int l = (*next)++, r = (*next)++;
  build(t, next, l, start, h, t->depth[id] + 1, mode);
  build(t, next, r, start + h, n - h, t->depth[id] + 1, mode);
  t->left[id] = l;
  t->right[id] = r;
}

/* Builds node id (numbered by its parent) over the points [start, start +
 * n). Leaves and buckets (the first nodes of at most t->bucket points on
 * the way down) take their statistics from their points, other nodes sum
 * their children's. BUILD_LAZY leaves a bucket unbuilt below (its children
 * are made by vdp_tree_expand when first asked for); BUILD_EAGER builds
 * the same nodes at once, so both trees and all statistics are identical. */
static void build(vdp_tree *t, int *next, int id, int start, int n, int depth, int mode) {
  const int D = t->D, P = t->P;
  t->start[id] = start;
  t->count[id] = n;
  t->depth[id] = depth;
  /* (the node arrays hold vdp_tree_count_nodes() nodes, which the splits
   * never exceed; a node that would is kept as a leaf all the same) */
  if (n <= t->leaf_size || *next > t->max_nodes - 2) {
    t->left[id] = t->right[id] = -1;
    direct_stats(t, id);
    return;
  }
  if (mode != BUILD_INSIDE && n <= t->bucket) { /* a bucket */
    direct_stats(t, id);
    if (mode == BUILD_LAZY) t->left[id] = t->right[id] = VDP_UNBUILT;
    else split_node(t, next, id, BUILD_INSIDE);
    return;
  }
  split_node(t, next, id, mode);
  double *s1 = t->s1 + (size_t)id * D, *s2 = t->s2 + (size_t)id * P;
  const int l = t->left[id], r = t->right[id];
  const double *l1 = t->s1 + (size_t)l * D, *r1 = t->s1 + (size_t)r * D;
  const double *l2 = t->s2 + (size_t)l * P, *r2 = t->s2 + (size_t)r * P;
  for (int d = 0; d < D; d++) s1[d] = l1[d] + r1[d];
  for (int i = 0; i < P; i++) s2[i] = l2[i] + r2[i];
}

int vdp_tree_root_direction(const vdp_tree *t, int lazy, svi_len N, const double *X,
                            const double *center, double *v) {
  const int D = t->D;
  /* the root is split (build), by the sampled PCA (split_direction) */
  if (!(N > t->leaf_size && (!lazy || N > t->bucket) && N > TREE_PCA_MIN)) return 0;
  const int m = TREE_SAMPLE;
  double *C = t->scratch + D, *mu = C + (size_t)D * D, *u = mu + D;
  double *pts = t->key; /* (free until the keys are written) */
  const double *xs[TREE_SAMPLE];
  for (int s = 0; s < m; s++) {
    size_t i = (size_t)s * N / m;
    for (int j = 0; j < D; j++) pts[(size_t)s * D + j] = X[(size_t)j * N + i] - center[j];
    xs[s] = pts + (size_t)s * D;
  }
  pca_direction(xs, m, D, v, C, mu, u);
  return 1;
}

void vdp_tree_build(vdp_tree *t, int lazy) {
  for (int i = 0; i < t->N; i++) t->perm[i] = i;
  int next = 1;
  build(t, &next, 0, 0, t->N, 0, lazy ? BUILD_LAZY : BUILD_EAGER);
  t->n_nodes = next;
}

void vdp_tree_expand(vdp_tree *t, int id) {
  if (t->left[id] != VDP_UNBUILT) return;
  if (t->n_nodes > t->max_nodes - 2) { /* (never: see vdp_tree_count_nodes) */
    t->left[id] = t->right[id] = -1;   /* a leaf: its children are its points */
    return;
  }
  int next = t->n_nodes;
  split_node(t, &next, id, BUILD_INSIDE);
  t->n_nodes = next;
}

/* The sample covariance (divisor N - 1, D x D) of the centred data from the
 * root's sum of outer products, as vdp_data_cov forms it from the points
 * (the data are centred, so the root's sum is zero up to rounding). */
void vdp_tree_root_cov(const vdp_tree *t, double *cov) {
  const int D = t->D;
  const double div = t->N > 1 ? (double)(t->N - 1) : 1.0;
  const double *s2 = t->s2; /* node 0 */
  int idx = 0;
  for (int b = 0; b < D; b++)
    for (int a = 0; a <= b; a++, idx++) {
      double v = s2[idx] / div;
      cov[a + (size_t)b * D] = v;
      cov[b + (size_t)a * D] = v;
    }
}
