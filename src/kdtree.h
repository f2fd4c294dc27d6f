/* kd-tree over the data with cached sufficient statistics per node
 * (kdtree.c): the tree Fast-VDP (vdp.c) walks. It knows nothing of the
 * model: statistics are count, sum x and the packed sum x x^T of linalg.h.
 * Plain C, no SEXP. */
#ifndef SPARSEVI_KDTREE_H
#define SPARSEVI_KDTREE_H

#include "svi.h"
#include "linalg.h"

/* ---- kd-tree with cached statistics (kdtree.c) ---- */
/* Node 0 is the root; a node's two children are numbered together, after
 * it. The build reorders the columns of X in place into tree order, so a
 * node holds the consecutive points
 * X[, start .. start + count) (perm[i] is the original index of the i-th);
 * left == -1 marks a leaf (count <= leaf_size), left == VDP_UNBUILT a
 * bucket not split yet (lazy build: vdp_tree_expand makes its children).
 * Each node caches count, sum x (D) and packed sum x x^T (P). */
#define VDP_UNBUILT (-2)
typedef struct {
  int N, D, P, leaf_size, n_nodes, max_nodes; /* max_nodes: the arrays' capacity */
  int bucket; /* nodes of at most this many points may be left unbuilt below */
  double *X;  /* D x N, one point per column; reordered by the build */
  int *perm, *start, *count, *left, *right, *depth;
  double *s1, *s2;
  double *key;     /* 2 N doubles of scratch for the build */
  int root_keyed;  /* set: key[0..N) holds the root's keys already (build) */
  double *scratch; /* D^2 + 3 D doubles of scratch for the build */
} vdp_tree;

/* An upper bound on the number of nodes of the tree over n points with the
 * given leaf size (each child keeps 1/4 to 3/4 of its parent). */
int vdp_tree_count_nodes(int n, int leaf_size);
/* Builds the tree into t, whose arrays the caller allocated (perm: N ints;
 * start, count, left, right, depth: vdp_tree_count_nodes() ints; s1: that
 * many times D, s2: times P doubles; key: 2 N doubles; scratch: D^2 + 3 D
 * doubles); sets t->n_nodes to the number built. O(N log N): splits at the
 * median of a sample of the projections on the node's principal direction;
 * statistics summed bottom-up. */
void vdp_tree_build(vdp_tree *t, int lazy);
/* The root's split direction into v (D doubles), from the uncentred N x D
 * data X and its column means, exactly as the build would find it from the
 * centred transpose; returns 0 (v unset) when the build does not find the
 * root's direction that way (small trees). t needs D, leaf_size, bucket,
 * key and scratch set. With it, the pass that writes the centred transpose
 * also writes the root's keys (vdp_data_transpose_keys) and the build, with
 * t->root_keyed = 1, skips the root's own pass over the points. */
int vdp_tree_root_direction(const vdp_tree *t, int lazy, svi_len N, const double *X,
                            const double *center, double *v);
/* Builds the subtree below an unbuilt bucket (nothing otherwise). The
 * children get the numbers from t->n_nodes on; the points of the bucket are
 * reordered among themselves. Not thread-safe: call outside parallel
 * regions. */
void vdp_tree_expand(vdp_tree *t, int id);
void vdp_tree_root_cov(const vdp_tree *t, double *cov);

#endif
