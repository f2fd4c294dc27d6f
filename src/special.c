/* Special functions for inner loops: digamma, log-gamma and exp.
 * R's digammafn() is written for generality (and polygamma of any order);
 * here the recurrence to x >= 10 plus the asymptotic series, with a Taylor
 * series around the positive root of digamma where the recurrence cancels. */
#include <math.h>
#include "svi.h"

#define DIGAMMA_ROOT 1.4616321449683623

/* psi^(n)(x0) / n! at the root x0, n = 1..12. */
static const double root_taylor[12] = {
    9.67672245447621204e-01,  -4.42763168983592137e-01, 2.58499760955651081e-01,
    -1.63942705442406578e-01, 1.07824050691262399e-01,  -7.21995612564547418e-02,
    4.88042881641431378e-02,  -3.31611264748473758e-02, 2.25976482322181177e-02,
    -1.54247659049489682e-02, 1.05387916166121819e-02,  -7.20453438635687300e-03};

double svi_digamma(double x) {
  if (!(x > 0)) return NAN; /* callers only use positive arguments */
  double dx = x - DIGAMMA_ROOT;
  if (fabs(dx) < 0.05) {
    double s = 0;
    for (int n = 11; n >= 0; n--) s = (s + root_taylor[n]) * dx;
    return s;
  }
  if (x < 1e-6) {
    /* psi(x) = -1/x - gamma + zeta(2) x + O(x^2) */
    return -1.0 / x - 0.57721566490153286 + 1.6449340668482264 * x;
  }
  /* Recurrence psi(x) = psi(x + n) - sum_{i<n} 1/(x + i) up to x >= 6, with
   * the sum kept as one fraction num/den so it costs a single division. */
  double num = 0, den = 1;
  while (x < 6) {
    num = num * x + den;
    den *= x;
    x += 1.0;
  }
  double xi = 1.0 / x, x2 = xi * xi;
  /* Bernoulli terms B_2k / (2k x^2k), k = 1..8 */
  double series =
      x2 * (1.0 / 12 -
            x2 * (1.0 / 120 -
                  x2 * (1.0 / 252 -
                        x2 * (1.0 / 240 -
                              x2 * (1.0 / 132 -
                                    x2 * (691.0 / 32760 -
                                          x2 * (1.0 / 12 - x2 * (3617.0 / 8160))))))));
  return log(x) - 0.5 * xi - series - num / den;
}

double svi_lgamma(double x) {
  if (!(x > 0)) return NAN;
  if (x < 12) return lgamma(x); /* libm is exact enough and fast on this range */
  double xi = 1.0 / x, x2 = xi * xi;
  /* Stirling: B_2k / (2k (2k - 1) x^(2k-1)), k = 1..7 */
  double series =
      xi * (1.0 / 12 -
            x2 * (1.0 / 360 -
                  x2 * (1.0 / 1260 -
                        x2 * (1.0 / 1680 -
                              x2 * (1.0 / 1188 - x2 * (691.0 / 360360 - x2 * (1.0 / 156)))))));
  return (x - 0.5) * log(x) - x + 0.91893853320467274178 + series;
}

/* exp: glibc's exp() is already fast and correctly rounded in practice; a
 * hand-written Cody-Waite polynomial measured about 5x slower here (it does not
 * vectorise at -O2), so the inner loops call libm through these wrappers. */
double svi_exp(double x) { return exp(x); }

void svi_exp_inplace(double *x, svi_len n) {
  for (svi_len i = 0; i < n; i++) x[i] = exp(x[i]);
}
