/* Validation of a sparsevi_dtm's CSR invariants in one pass (the R side
 * would need several vector allocations for the same checks on big corpora). */
#include <math.h>
#include "glue.h"

/* Returns an integer code: 0 ok; 1 doc_ptr not non-decreasing from 0;
 * 2 term out of range; 3 count not finite or negative; 4 terms not strictly
 * increasing within a document. Second element: the 1-based offending
 * document (0 if none). */
SEXP ffi_dtm_validate(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_dtm x = svi_dtm_view(doc_ptr, term, count, V);
  int code = 0, where = 0;
  if (x.doc_ptr[0] != 0) code = 1;
  for (int d = 0; d < x.D && code == 0; d++) {
    int a = x.doc_ptr[d], b = x.doc_ptr[d + 1];
    if (b < a) {
      code = 1;
      where = d + 1;
      break;
    }
    for (int i = a; i < b; i++) {
      int v = x.term[i];
      double c = x.count[i];
      if (v < 0 || v >= x.V) {
        code = 2;
      } else if (!isfinite(c) || c < 0) {
        code = 3;
      } else if (i > a && x.term[i - 1] >= v) {
        code = 4;
      }
      if (code) {
        where = d + 1;
        break;
      }
    }
  }
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(out)[0] = code;
  INTEGER(out)[1] = where;
  UNPROTECT(1);
  return out;
}
