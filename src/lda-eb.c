/* Empirical Bayes for LDA's symmetric Dirichlet on the topics (eta).
 *
 * With the local factors fixed, the bound's dependence on (eta, lambda) is
 * maximised over lambda by lambda = eta + S (S: the K x V expected counts);
 * what is left of eta is the Polya (Dirichlet-multinomial) log-likelihood
 * of the rows of S,
 *   f(eta) = sum_k [lnG(V eta) - lnG(V eta + N_k) + sum_v (lnG(eta + S_kv) - lnG(eta))],
 * N_k = sum_v S_kv. Minka's fixed point
 *   eta <- eta * sum_kv [psi(eta + S_kv) - psi(eta)] / (V sum_k [psi(V eta + N_k) - psi(V eta)])
 * increases f at every step; entries with S_kv = 0 add nothing to the
 * numerator, so only positive entries are visited. Sums run in a fixed
 * order (results do not depend on threads). Plain C. */
#include <math.h>
#include <R_ext/Memory.h>
#include "lda.h"

double lda_eb_eta(const double *S, int K, int V, double eta, int max_iter, double tol,
                  int *iters) {
  double *tot = (double *)R_alloc((size_t)K, sizeof(double));
  for (int k = 0; k < K; k++) tot[k] = 0.0;
  const svi_len n = (svi_len)K * V;
  for (svi_len j = 0; j < n; j++)
    if (S[j] > 0) tot[j % K] += S[j]; /* word-major: entry j is topic j % K */
  int it = 0;
  for (; it < max_iter; it++) {
    const double pe = svi_digamma(eta);
    double num = 0.0;
    for (svi_len j = 0; j < n; j++)
      if (S[j] > 0) num += svi_digamma(eta + S[j]) - pe;
    const double pv = svi_digamma(V * eta);
    double den = 0.0;
    for (int k = 0; k < K; k++) den += svi_digamma(V * eta + tot[k]) - pv;
    if (!(num > 0) || !(den > 0)) break; /* no counts: keep eta */
    const double next = eta * num / (V * den);
    const double change = fabs(next - eta) / eta;
    eta = next;
    if (change < tol) {
      it++;
      break;
    }
  }
  *iters = it;
  return eta;
}
