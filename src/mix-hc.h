/* Model-based agglomerative hierarchical clustering (mix-hc.c). Plain C. */
#ifndef SPARSEVI_MIX_HC_H
#define SPARSEVI_MIX_HC_H

#include "svi.h"

typedef struct {
  int D;
  double alpha, beta;
  double *cost;      /* packed lower triangle of pair costs */
  double *n, *tr, *term, *best_cost; /* per cluster slot */
  double *mean;      /* D per slot */
  double *W;         /* D x D per slot (lower triangle used) */
  int *active;
  svi_len *best;     /* the row's lowest-cost partner of lower index, -1: none */
} mix_hc_work;

size_t mix_hc_work_doubles(svi_len N, int D);
void mix_hc_merges(const double *X, svi_len N, int D, double alpha, double beta,
                   int *merges, double *costs, double *mem, int *flags, svi_len *best);

#endif
