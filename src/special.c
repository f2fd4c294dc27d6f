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
  double acc = 0;
  if (x < 1e-6) {
    /* psi(x) = -1/x - gamma + zeta(2) x + O(x^2) */
    return -1.0 / x - 0.57721566490153286 + 1.6449340668482264 * x;
  }
  while (x < 10) {
    acc -= 1.0 / x;
    x += 1.0;
  }
  double xi = 1.0 / x, x2 = xi * xi;
  /* Bernoulli terms B_2k / (2k x^2k), k = 1..7 */
  double series =
      x2 * (1.0 / 12 -
            x2 * (1.0 / 120 -
                  x2 * (1.0 / 252 -
                        x2 * (1.0 / 240 -
                              x2 * (1.0 / 132 - x2 * (691.0 / 32760 - x2 * (1.0 / 12)))))));
  return acc + log(x) - 0.5 * xi - series;
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

/* exp by Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, and a degree-12
 * Taylor polynomial of exp(r); no branches in the loop so it vectorises. */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
#define INV_LN2 1.44269504088896338700e+00

static inline double exp_core(double x) {
  if (x < -708.39) x = -708.39;
  if (x > 709.7) x = 709.7;
  double k = nearbyint(x * INV_LN2);
  double r = (x - k * LN2_HI) - k * LN2_LO;
  double p = 1.0 / 479001600;
  p = p * r + 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* scale by 2^k through the exponent bits; k is in [-1022, 1023] here */
  union {
    double d;
    int64_t i;
  } u;
  u.i = ((int64_t)k + 1023) << 52;
  return p * u.d;
}

double svi_exp(double x) {
  if (x != x) return x;
  if (x < -708.39) return exp(x); /* subnormal results: defer to libm */
  return exp_core(x);
}

void svi_exp_inplace(double *x, svi_len n) {
  for (svi_len i = 0; i < n; i++) x[i] = exp_core(x[i]);
}
