/* Glue helpers of the vb step (lda-vb-ffi.c) that document completion's
 * glue (eval-ffi.c), which runs the same step, shares. */
#ifndef SPARSEVI_LDA_VB_FFI_H
#define SPARSEVI_LDA_VB_FFI_H

#include "ffi.h"
#include "lda.h"

/* The options of the vb step, read by name from the named list built by
 * vb_opts() in R/lda-vb.R. */
lda_vb_opts lda_vb_opts_from_r(int K, SEXP opts);
/* Errors unless topics is a double K x V matrix, K >= 1. */
void lda_check_topics(SEXP topics, int V);

#endif
