/* The mixture global step (Hughes & Sudderth §4, notes/math.md §8): the memoized
 * swap of one batch's cached summary and the stochastic blend of the global
 * summaries, and the conjugate posterior's point estimates (posterior-mean
 * weights; the components' are the observation tables' point_component),
 * and the choice of an observation table. Plain C: no R API. */
#include <math.h>
#include <string.h>
#include "mix.h"
#include "obs-gauss.h"

void mix_global_memoized(svi_len K, svi_len P, const double *N, const double *S,
                         const double *oN, const double *oS, const double *nN,
                         const double *nS, double *outN, double *outS) {
  for (svi_len k = 0; k < K; k++) {
    double v = N[k] - (oN ? oN[k] : 0.0) + nN[k];
    outN[k] = v > 0 ? v : 0.0; /* counts cannot go below 0 (rounding) */
  }
  svi_len n = K * P;
  if (oS) {
    for (svi_len p = 0; p < n; p++) outS[p] = S[p] - oS[p] + nS[p];
  } else {
    for (svi_len p = 0; p < n; p++) outS[p] = S[p] + nS[p];
  }
}

void mix_global_stochastic(svi_len K, svi_len P, const double *N, const double *S,
                           const double *nN, const double *nS, double rho, double w,
                           double *outN, double *outS) {
  double keep = 1 - rho, step = rho * w;
  for (svi_len k = 0; k < K; k++) outN[k] = keep * N[k] + step * nN[k];
  svi_len n = K * P;
  for (svi_len p = 0; p < n; p++) outS[p] = keep * S[p] + step * nS[p];
}

void mix_point_weights(const mix_prior *pr, int K, const double *Nk, double *w) {
  double Ntot = 0;
  for (int k = 0; k < K; k++) Ntot += Nk[k];
  if (pr->prior == MIX_DIRICHLET) {
    double a = pr->conc / K, norm = pr->conc + Ntot;
    for (int k = 0; k < K; k++) w[k] = (a + Nk[k]) / norm;
    return;
  }
  /* E[pi_k] = E[v_k] prod_{l < k} (1 - E[v_l]), v_K = 1 */
  double rest = Ntot, left = 1;
  for (int k = 0; k < K; k++) {
    rest -= Nk[k];
    if (rest < 0) rest = 0;
    double v = k == K - 1 ? 1.0 : (1 + Nk[k]) / (1 + Nk[k] + pr->conc + rest);
    w[k] = v * left;
    left *= 1 - v;
  }
}

/* The tables, in the order of the MIX_* codes. */
const mix_obs *mix_obs_of(int lik) {
  static const mix_obs *const table[] = {&mix_obs_gauss, &mix_obs_zm,   &mix_obs_diag,
                                         &mix_obs_mult,  &mix_obs_tied, &mix_obs_sph};
  return lik >= 0 && lik <= MIX_LIK_MAX ? table[lik] : NULL;
}
