/* Small dense linear algebra shared by the Gaussian observation models
 * (obs-gauss.c: mixtures and Fast-VDP) and the kd-tree (kdtree.c): the one
 * Cholesky factorisation, triangular and SPD inverses, and the one power
 * iteration. Plain C: no R API.
 *
 * The one packing of symmetric D x D matrices: the lower triangle row by
 * row, entry (i, j), j <= i, at svi_tri(i, j) = i (i + 1) / 2 + j, P = D (D
 * + 1) / 2 entries. (Read as an upper triangle this is column by column:
 * entry (j, i) of the upper triangle sits at the same place.) Every packed
 * statistic (sum x x^T of a mixture component, of a kd-tree node, of a VDP
 * component) and every packed factor uses it. */
#ifndef SPARSEVI_LINALG_H
#define SPARSEVI_LINALG_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include "svi.h"

/* Index of entry (i, j), j <= i, of a packed symmetric matrix. */
static inline svi_len svi_tri(int i, int j) {
  return (svi_len)i * (i + 1) / 2 + j;
}
static inline int svi_packed_size(int D) {
  return D * (D + 1) / 2;
}

/* In-place Cholesky A = R R^T of a packed matrix (D x D): R, lower
 * triangular, overwrites A in the same packing. Returns 0, or i + 1 when
 * the leading minor of order i + 1 is not positive (or not finite). */
int svi_chol_packed(double *A, int D);
/* In place: the packed lower factor R becomes R^-1 (also lower), by forward
 * substitution. inv_diag (D reciprocals 1 / R_ii) non-NULL: the
 * off-diagonal entries are scaled by them (the mixtures' evaluator keeps
 * them); NULL: divided by R_ii (Fast-VDP's inverse). The two differ in the
 * last bit, and each caller's results are held bit for bit. */
void svi_tri_invert(double *R, const double *inv_diag, int D);
/* Inverse of the packed SPD matrix A (D x D) into out (full, column-major,
 * symmetric) through its Cholesky factor; returns ln det A, or NAN when A is
 * not positive definite. work: P doubles (A is left unchanged). */
double svi_spd_inverse(const double *A, int D, double *out, double *work);
/* Power iteration on the symmetric D x D matrix C (full, column-major): v
 * (the start on entry) becomes C^it v / ||C^it v|| after `iters` steps, u
 * is D doubles of scratch. Returns 0, or 1 as soon as C v vanishes (or is
 * not finite): v is then the last unit vector reached (the start if none). */
static inline int svi_power_iteration(const double *C, int D, double *v, int iters,
                                      double *u) {
  /* inline: the tree build runs it at every large node's split */
  for (int it = 0; it < iters; it++) {
    double nrm = 0.0;
    for (int a = 0; a < D; a++) {
      double s = 0.0;
      for (int b = 0; b < D; b++) s += C[a + (size_t)b * D] * v[b];
      u[a] = s;
      nrm += s * s;
    }
    if (!(nrm > 0) || nrm > DBL_MAX) {
      /* the squares underflowed or overflowed (data on a scale such as
       * 1e-100 or 1e100): scale u by its largest entry first, so the
       * direction does not depend on the data's units */
      double big = 0.0;
      for (int a = 0; a < D; a++) big = fabs(u[a]) > big ? fabs(u[a]) : big;
      if (!(big > 0) || big > DBL_MAX) return 1;
      nrm = 0.0;
      for (int a = 0; a < D; a++) {
        u[a] /= big;
        nrm += u[a] * u[a];
      }
    }
    nrm = sqrt(nrm);
    for (int a = 0; a < D; a++) v[a] = u[a] / nrm;
  }
  return 0;
}

#endif
