/* The near-uniform random start of LDA's topics (R: lda_init_random()):
 * lambda_kv = eta + a Gamma(100, rate 100) quantile of a uniform from the
 * fit's stream, by the Wilson-Hilferty transform of a normal quantile
 * (abs. error < 2e-3 at shape 100), filled in place in one pass: the R
 * version held the K x V uniforms, their normal quantiles and two more
 * temporaries, five dense tables at once. The same numbers in the same order
 * (column-major, as the R version's matrix()). The cube is two products,
 * not R_pow(z, 3.0): pow() was two thirds of the fill (2.0 of 3.2 s for
 * K = 1000, V = 129,289), and the R reference cubes the same way. Plain C. */
#include <math.h>
#include <Rmath.h>
#include "lda.h"

void lda_init_gamma100(double *out, svi_len n, double eta, svi_rng *r) {
  const double c9 = 1.0 / 900.0, sc = sqrt(c9);
  for (svi_len j = 0; j < n; j++) {
    double z = (1.0 - c9) + qnorm5(svi_rng_unif(r), 0.0, 1.0, 1, 0) * sc;
    if (z < 0) z = 0;
    out[j] = eta + z * z * z;
  }
}
