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

/* Whether column u of (p, k) holds exactly the topics 0 .. n - 1, n >= min_n
 * and n >= 1. */
static int full_column(const int *p, const int *k, int u, int min_n) {
  const int n = p[u + 1] - p[u];
  if (n < min_n || n < 1) return 0;
  for (int i = 0; i < n; i++)
    if (k[p[u] + i] != i) return 0;
  return 1;
}

/* A sparse summary's topics on the wire (pack_doubles(), R/executor.R):
 * list(words, p, k, v, ...) holds column u's topics in k[p[u] .. p[u + 1]),
 * increasing. A column whose topics are exactly 0 .. n - 1 with n >= min_n
 * (a full column: SCVB0's shape form gives a word with K / L entries or more
 * all K) travels without them. Returns NULL when no column is so, else
 * list(k = the other columns' topics, full = those columns, 0-based). */
SEXP ffi_wire_pack_columns(SEXP p_, SEXP k_, SEXP min_n_) {
  if (TYPEOF(p_) != INTSXP || TYPEOF(k_) != INTSXP || XLENGTH(p_) < 1)
    Rf_error("internal error: malformed sparse summary");
  const int U = (int)(XLENGTH(p_) - 1), *p = INTEGER(p_), *k = INTEGER(k_);
  const int min_n = Rf_asInteger(min_n_);
  if (p[0] != 0 || p[U] != XLENGTH(k_)) Rf_error("internal error: malformed sparse summary");
  for (int u = 0; u < U; u++)
    if (p[u + 1] < p[u] || p[u + 1] > p[U]) Rf_error("internal error: malformed sparse summary");
  int nfull = 0;
  R_xlen_t dropped = 0;
  for (int u = 0; u < U; u++) {
    if (full_column(p, k, u, min_n)) {
      nfull++;
      dropped += p[u + 1] - p[u];
    }
  }
  if (nfull == 0) return R_NilValue;
  SEXP kept = PROTECT(Rf_allocVector(INTSXP, XLENGTH(k_) - dropped));
  SEXP cols = PROTECT(Rf_allocVector(INTSXP, nfull));
  int *ko = INTEGER(kept), *co = INTEGER(cols);
  R_xlen_t j = 0;
  int c = 0;
  for (int u = 0; u < U; u++) {
    if (full_column(p, k, u, min_n)) {
      co[c++] = u;
    } else {
      for (int i = p[u]; i < p[u + 1]; i++) ko[j++] = k[i];
    }
  }
  const char *names[] = {"k", "full"};
  SEXP out = PROTECT(svi_named_list(2, names));
  SET_VECTOR_ELT(out, 0, kept);
  SET_VECTOR_ELT(out, 1, cols);
  UNPROTECT(3);
  return out;
}

/* The topics k that ffi_wire_pack_columns() packed: the full columns'
 * 0 .. n - 1 put back among the others. */
SEXP ffi_wire_unpack_columns(SEXP p_, SEXP k_, SEXP full_) {
  if (TYPEOF(p_) != INTSXP || TYPEOF(k_) != INTSXP || TYPEOF(full_) != INTSXP ||
      XLENGTH(p_) < 1)
    Rf_error("internal error: malformed packed summary");
  const int U = (int)(XLENGTH(p_) - 1), *p = INTEGER(p_), *k = INTEGER(k_),
            *full = INTEGER(full_);
  const R_xlen_t nf = XLENGTH(full_), nk = XLENGTH(k_);
  if (p[0] != 0) Rf_error("internal error: malformed packed summary");
  SEXP out = PROTECT(Rf_allocVector(INTSXP, p[U] >= 0 ? p[U] : 0));
  int *o = INTEGER(out);
  R_xlen_t j = 0, f = 0;
  for (int u = 0; u < U; u++) {
    const int n = p[u + 1] - p[u];
    if (n < 0 || p[u + 1] > p[U]) Rf_error("internal error: malformed packed summary");
    if (f < nf && full[f] == u) {
      for (int i = 0; i < n; i++) o[p[u] + i] = i;
      f++;
    } else {
      if (j + n > nk) Rf_error("internal error: packed topics too short");
      for (int i = 0; i < n; i++) o[p[u] + i] = k[j++];
    }
  }
  if (j != nk || f != nf) Rf_error("internal error: packed topics too long");
  UNPROTECT(1);
  return out;
}

/* serialize(x, NULL, xdr = FALSE) in two passes (R/executor.R, wire()): the
 * first counts the bytes, the second writes them into a raw vector of that
 * length. R's own serialize() grows its buffer as it writes and copies the
 * result once more, about three copies of a large payload (topic columns,
 * summaries) where this makes one. The bytes are the same: native binary
 * format, version 3, no reference hook. */
typedef struct {
  unsigned char *buf;
  R_xlen_t len, pos;
} wire_out;

static void wire_count_char(R_outpstream_t s, int c) {
  (void)c;
  ((wire_out *)s->data)->len += 1;
}
static void wire_count_bytes(R_outpstream_t s, void *p, int n) {
  (void)p;
  ((wire_out *)s->data)->len += n;
}
static void wire_put_char(R_outpstream_t s, int c) {
  wire_out *o = (wire_out *)s->data;
  if (o->pos >= o->len) Rf_error("internal error: the serialised size changed between passes");
  o->buf[o->pos++] = (unsigned char)c;
}
static void wire_put_bytes(R_outpstream_t s, void *p, int n) {
  wire_out *o = (wire_out *)s->data;
  if (n < 0 || o->pos + n > o->len)
    Rf_error("internal error: the serialised size changed between passes");
  memcpy(o->buf + o->pos, p, (size_t)n);
  o->pos += n;
}

SEXP ffi_wire_serialize(SEXP x) {
  wire_out o = {NULL, 0, 0};
  struct R_outpstream_st s;
  R_InitOutPStream(&s, (R_pstream_data_t)&o, R_pstream_binary_format, 3, wire_count_char,
                   wire_count_bytes, NULL, R_NilValue);
  R_Serialize(x, &s);
  SEXP out = PROTECT(Rf_allocVector(RAWSXP, o.len));
  o.buf = RAW(out);
  o.pos = 0;
  R_InitOutPStream(&s, (R_pstream_data_t)&o, R_pstream_binary_format, 3, wire_put_char,
                   wire_put_bytes, NULL, R_NilValue);
  R_Serialize(x, &s);
  if (o.pos != o.len) Rf_error("internal error: the serialised size changed between passes");
  UNPROTECT(1);
  return out;
}
