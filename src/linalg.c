/* Small dense linear algebra (see linalg.h). */
#include <math.h>
#include <string.h>
#include "linalg.h"

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

void svi_tri_invert(double *R, const double *inv_diag, int D) {
  /* (R^-1)_ij = -(sum_{j <= l < i} R_il (R^-1)_lj) / R_ii for j < i. Rows
   * go top to bottom (rows above are already inverted); within row i, left
   * to right, entry j is overwritten only after its last use. Row l starts
   * at svi_tri(l, 0), stepped along rather than recomputed. */
  for (int i = 0; i < D; i++) {
    double *Ri = R + svi_tri(i, 0);
    double rii = Ri[i];
    for (int j = 0; j < i; j++) {
      double s = 0;
      svi_len row = svi_tri(j, 0);
      for (int l = j; l < i; row += ++l) s += Ri[l] * R[row + j];
      Ri[j] = inv_diag ? -s * inv_diag[i] : -s / rii;
    }
    Ri[i] = inv_diag ? inv_diag[i] : 1.0 / rii;
  }
}

double svi_spd_inverse(const double *A, int D, double *out, double *work) {
  double *L = work;
  memcpy(L, A, sizeof(double) * (size_t)svi_packed_size(D));
  if (svi_chol_packed(L, D)) return NAN;
  double logdet = 0.0;
  for (int j = 0; j < D; j++) logdet += 2.0 * log(L[svi_tri(j, j)]);
  svi_tri_invert(L, NULL, D);
  /* A^-1 = L^-T L^-1: entry (i, j), i >= j, sums over k >= i */
  for (int j = 0; j < D; j++) {
    for (int i = j; i < D; i++) {
      double s = 0.0;
      svi_len row = svi_tri(i, 0);
      for (int k = i; k < D; row += ++k) s += L[row + i] * L[row + j];
      out[i + (size_t)j * D] = s;
      out[j + (size_t)i * D] = s;
    }
  }
  return logdet;
}
