/* Topics sharded by word over persistent workers (R/executor-sharded.R):
 * worker r (0-based) of W owns the columns of the words v with
 * v mod W = r, its column j being word r + j W. Taking a shard out of the
 * whole table is lda_table_columns(); putting it back, at the end of a lap,
 * is here. The owners' stochastic step is store_update_owner()
 * (src/lda-store.c). */
#include <string.h>
#include "ffi.h"

/* X[, r + j W] <- shard[, j] for every column j of the shard, IN PLACE
 * (X must be the package's own: the lap's copy of the store). Returns
 * NULL. */
SEXP ffi_lda_shard_put(SEXP X, SEXP shard, SEXP W_, SEXP r_) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  svi_need_matrix(shard, REALSXP, -1, -1, "shard");
  svi_need_own(X, "the topic table");
  const int K = Rf_nrows(X), V = Rf_ncols(X), n = Rf_ncols(shard);
  const int W = Rf_asInteger(W_), r = Rf_asInteger(r_);
  if (W < 1 || r < 0 || r >= W || Rf_nrows(shard) != K)
    Rf_error("internal error: malformed topic shard");
  /* the shard holds exactly the words r, r + W, ... below V */
  if (n != (r < V ? (V - 1 - r) / W + 1 : 0))
    Rf_error("internal error: the topic shard has the wrong number of columns");
  double *x = REAL(X);
  const double *s = REAL(shard);
  for (int j = 0; j < n; j++)
    memcpy(x + ((R_xlen_t)r + (R_xlen_t)j * W) * K, s + (R_xlen_t)j * K,
           sizeof(double) * (size_t)K);
  return R_NilValue;
}
