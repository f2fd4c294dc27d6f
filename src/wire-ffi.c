/* The executor's lossless compact form of a long double vector (R/executor.R,
 * pack_doubles()): the value that fills a good part of it (its smallest),
 * a bit mask of where it sits (bit i of byte i / 8, least significant
 * first) and the other values in order. Two passes each way, no R
 * temporaries of the vector's length. */
#include <math.h>
#include <string.h>
#include "ffi.h"

/* list(fill, bits, values) for x, or NULL when x should travel whole: it
 * holds NA / NaN, its smallest value fills less than min_fill of it, or
 * that value is a zero some of whose entries are -0 (0 and -0 compare equal
 * but are different doubles). */
SEXP ffi_wire_pack(SEXP x, SEXP min_fill_) {
  svi_need_real(x, -1, "x");
  const R_xlen_t n = XLENGTH(x);
  const double *v = REAL(x);
  const double min_fill = svi_real_arg(min_fill_, 0, 1, "min_fill");
  if (n < 1) return R_NilValue;
  double fill = v[0];
  for (R_xlen_t i = 0; i < n; i++) {
    if (isnan(v[i])) return R_NilValue;
    if (v[i] < fill) fill = v[i];
  }
  R_xlen_t count = 0;
  int neg_zero = 0;
  for (R_xlen_t i = 0; i < n; i++)
    if (v[i] == fill) {
      count++;
      if (fill == 0 && signbit(v[i])) neg_zero = 1;
    }
  if ((double)count < min_fill * (double)n || neg_zero) return R_NilValue;
  SEXP bits = PROTECT(Rf_allocVector(RAWSXP, (n + 7) / 8));
  SEXP values = PROTECT(Rf_allocVector(REALSXP, n - count));
  Rbyte *b = RAW(bits);
  memset(b, 0, (size_t)XLENGTH(bits));
  double *o = REAL(values);
  R_xlen_t j = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    if (v[i] == fill)
      b[i >> 3] |= (Rbyte)(1u << (i & 7));
    else
      o[j++] = v[i];
  }
  const char *names[] = {"fill", "bits", "values"};
  SEXP out = PROTECT(svi_named_list(3, names));
  SET_VECTOR_ELT(out, 0, Rf_ScalarReal(fill));
  SET_VECTOR_ELT(out, 1, bits);
  SET_VECTOR_ELT(out, 2, values);
  UNPROTECT(3);
  return out;
}

/* The vector of n doubles that ffi_wire_pack() packed. */
SEXP ffi_wire_unpack(SEXP n_, SEXP fill_, SEXP bits, SEXP values) {
  const double nd = Rf_asReal(n_);
  if (!(nd >= 0) || nd > 4503599627370496.0) Rf_error("internal error: bad packed length");
  const R_xlen_t n = (R_xlen_t)nd;
  svi_need_real(values, -1, "values");
  if (TYPEOF(bits) != RAWSXP || XLENGTH(bits) != (n + 7) / 8)
    Rf_error("internal error: bad packed mask");
  const double fill = Rf_asReal(fill_);
  const Rbyte *b = RAW(bits);
  const double *v = REAL(values);
  const R_xlen_t nv = XLENGTH(values);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  double *o = REAL(out);
  R_xlen_t j = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    if ((b[i >> 3] >> (i & 7)) & 1u) {
      o[i] = fill;
    } else {
      if (j >= nv) Rf_error("internal error: packed values too short");
      o[i] = v[j++];
    }
  }
  if (j != nv) Rf_error("internal error: packed values too long");
  UNPROTECT(1);
  return out;
}
