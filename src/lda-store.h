/* The topic store (lda-store.c), used by the glue in lda-store-ffi.c. */
#ifndef SPARSEVI_LDA_STORE_H
#define SPARSEVI_LDA_STORE_H
#include "svi.h"

double store_update(int K, int V, double *X, const double *xtot, double scale,
                    double rho, double mult, int U, const int *w, const double *val,
                    double rescale_below, double *ssum, double *xtot_new,
                    int threads);
typedef void (*store_fill_fn)(const void *ctx, int u, double *out);
int store_update_fills(int K, int U, double scale, double rho, double rescale_below,
                       int threads);
double store_update_fill(int K, int V, double *X, const double *xtot, double scale,
                         double rho, double mult, int U, const int *w, store_fill_fn fill,
                         const void *ctx, double *buf, double rescale_below, double *ssum,
                         double *xtot_new);
double store_update_sparse(int K, int V, double *X, const double *xtot, double scale,
                           double rho, double mult, int U, const int *w, const int *p,
                           const int *k, const double *val, double rescale_below,
                           double *ssum, double *xtot_new, int threads);
void store_rowsums(int K, int U, const double *val, double *ssum);
void store_rowsums_sparse(int K, int n, const int *k, const double *val, double *ssum);
double store_update_owner(int K, int V, double *X, const double *xtot, double scale,
                          double rho, double mult, int U, const int *w, const double *val,
                          double rescale_below, const double *ssum, double *xtot_new,
                          int threads);
double store_update_owner_sparse(int K, int V, double *X, const double *xtot,
                                 double scale, double rho, double mult, int U,
                                 const int *w, const int *p, const int *k,
                                 const double *val, double rescale_below,
                                 const double *ssum, double *xtot_new, int threads);
void store_lambda(int K, int V, const double *X, const double *xtot, double eta,
                  double scale, double *lambda, double *tot);
void store_from_lambda(int K, int V, const double *lambda, double eta, double *X);
void store_from_counts(int K, int V, const double *S, double *X, double *tot);
void store_add(int K, double *X, double *tot, int U, const int *w, const double *val,
               double sign);
#endif
