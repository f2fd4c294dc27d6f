/* Helpers shared by the glue files: SEXP -> struct views, seeds, checks.
 * Only glue files include this header (kernels never see a SEXP). */
#ifndef SPARSEVI_GLUE_H
#define SPARSEVI_GLUE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include "svi.h"

/* A view of a sparsevi_dtm's CSR parts; V is the vocabulary size. */
svi_dtm svi_dtm_view(SEXP doc_ptr, SEXP term, SEXP count, SEXP V);
/* A 64-bit seed from an R double vector of two 32-bit halves. */
uint64_t svi_seed_from_r(SEXP seed);
/* Number of threads from an R integer; 1 without OpenMP. */
int svi_threads_from_r(SEXP threads);
/* Named list helper: list with the given names, filled by the caller. */
SEXP svi_named_list(int n, const char **names);
#endif
