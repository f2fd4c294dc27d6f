/* Validation of a sparsevi_dtm's CSR invariants in one pass (the R side
 * would need several vector allocations for the same checks on big corpora). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ffi.h"

/* Returns an integer code: 0 ok; 1 doc_ptr not non-decreasing from 0;
 * 2 term out of range; 3 count not finite or negative; 4 terms not strictly
 * increasing within a document. Second element: the 1-based offending
 * document (0 if none). */
SEXP ffi_dtm_validate(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_dtm x = svi_dtm_view_unchecked(doc_ptr, term, count, V);
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

/* ---- UCI bag-of-words reading (the parser is in read.c) ---- */
/* Per-document weighted sums out[d] = sum_j w[j] v[term[j]] over the entries
 * j of document d, in entry order (the Bregman k-means++ seeding of LDA needs
 * one per chosen topic; R's rowsum() took ~1 s a pass on nips_f20). */
SEXP ffi_dtm_doc_dot(SEXP doc_ptr, SEXP term, SEXP w, SEXP v) {
  svi_need_int(doc_ptr, -1, "doc_ptr");
  svi_need_int(term, -1, "term");
  svi_need_real(w, XLENGTH(term), "w");
  svi_need_real(v, -1, "v");
  if (XLENGTH(doc_ptr) > INT_MAX) Rf_error("ffi_dtm_doc_dot: too many documents");
  const int D = (int)XLENGTH(doc_ptr) - 1;
  const int *ptr = INTEGER(doc_ptr), *tm = INTEGER(term);
  const double *wt = REAL(w), *vv = REAL(v);
  const svi_len n = XLENGTH(term), nv = XLENGTH(v);
  if (D < 0 || (D > 0 && (ptr[0] != 0 || ptr[D] != n)))
    Rf_error("ffi_dtm_doc_dot: inconsistent document-term structure");
  for (int d = 0; d < D; d++) {
    if (ptr[d + 1] < ptr[d]) Rf_error("ffi_dtm_doc_dot: inconsistent document-term structure");
  }
  SEXP out = PROTECT(Rf_allocVector(REALSXP, D > 0 ? D : 0));
  double *o = REAL(out);
  for (int d = 0; d < D; d++) {
    double s = 0.0;
    for (svi_len j = ptr[d]; j < ptr[d + 1]; j++) {
      if (tm[j] < 0 || tm[j] >= nv) {
        UNPROTECT(1);
        Rf_error("ffi_dtm_doc_dot: term index out of range");
      }
      s += wt[j] * vv[tm[j]];
    }
    o[d] = s;
  }
  UNPROTECT(1);
  return out;
}

#include "read.h"

#define UCI_STATE_LEN 10

static void uci_state_from_r(SEXP s, uci_state *st) {
  if (TYPEOF(s) != REALSXP || XLENGTH(s) != UCI_STATE_LEN)
    Rf_error("internal error: malformed UCI parser state");
  const double *v = REAL(s);
  st->line = v[0];
  st->header[0] = v[1];
  st->header[1] = v[2];
  st->header[2] = v[3];
  st->n_header = (int)v[4];
  st->entries = v[5];
  st->last_doc = v[6];
  st->last_word = v[7];
  st->sorted = (int)v[8];
  st->noninteger = (int)v[9];
}

static void uci_state_to_r(const uci_state *st, double *v) {
  v[0] = st->line;
  v[1] = st->header[0];
  v[2] = st->header[1];
  v[3] = st->header[2];
  v[4] = st->n_header;
  v[5] = st->entries;
  v[6] = st->last_doc;
  v[7] = st->last_word;
  v[8] = st->sorted;
  v[9] = st->noninteger;
}

/* A fresh parser state (R passes it back with every chunk). */
SEXP ffi_dtm_uci_state(void) {
  uci_state st;
  uci_state_init(&st);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, UCI_STATE_LEN));
  uci_state_to_r(&st, REAL(out));
  UNPROTECT(1);
  return out;
}

/* Parse one chunk of raw bytes into the vectors doc, word, count from
 * position `offset` (0-based) on. doc 1-based, word 0-based.
 *
 * These vectors are written IN PLACE, an exception to "outputs are fresh R
 * vectors": read_uci_bow() allocates them itself (never shared) and fills
 * them chunk by chunk, so that reading a corpus of tens of millions of
 * entries leaves no per-chunk garbage behind (which R's collector would let
 * pile up to hundreds of MB). Returns list(status, consumed, n, state):
 * consumed the number of bytes used (the rest is an unfinished line), n the
 * number of entries written, state the updated parser state (on error, its
 * line is the offending line). */
SEXP ffi_dtm_parse_uci(SEXP bytes, SEXP final, SEXP state, SEXP doc, SEXP word,
                       SEXP count, SEXP offset) {
  int n_prot = 0;
  if (TYPEOF(bytes) != RAWSXP || TYPEOF(doc) != INTSXP || TYPEOF(word) != INTSXP ||
      TYPEOF(count) != REALSXP || XLENGTH(doc) != XLENGTH(word) ||
      XLENGTH(doc) != XLENGTH(count))
    Rf_error("internal error: malformed arguments of the UCI parser");
  /* written in place: only vectors read_uci_bow() alone holds */
  svi_need_own(doc, "the UCI parser's output vector `doc`");
  svi_need_own(word, "the UCI parser's output vector `word`");
  svi_need_own(count, "the UCI parser's output vector `count`");
  uci_state st;
  uci_state_from_r(state, &st);
  svi_len off = (svi_len)Rf_asReal(offset);
  if (off < 0 || off > XLENGTH(doc)) Rf_error("internal error: offset out of range");
  svi_len cap = XLENGTH(doc) - off;
  int fin = Rf_asLogical(final) == TRUE;
  svi_len k = 0, consumed = 0;
  int status =
      uci_parse((const char *)RAW(bytes), XLENGTH(bytes), fin, &st, INTEGER(doc) + off,
                INTEGER(word) + off, REAL(count) + off, cap, &k, &consumed);

  const char *names[] = {"status", "consumed", "n", "state"};
  SEXP out = PROTECT(svi_named_list(4, names));
  n_prot++;
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(status));
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double)consumed));
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal((double)k));
  SEXP r_state = Rf_allocVector(REALSXP, UCI_STATE_LEN);
  SET_VECTOR_ELT(out, 3, r_state);
  uci_state_to_r(&st, REAL(r_state));
  UNPROTECT(n_prot);
  return out;
}

/* The distinct words of a batch (R/executor.R, batch_columns()) from its
 * entries' 0-based terms: list(vocab = the words, 1-based and increasing,
 * local = each entry's 0-based index into them), by svi_batch_words(). */
SEXP ffi_dtm_batch_words(SEXP term) {
  svi_need_int(term, -1, "term");
  if (XLENGTH(term) > INT_MAX) Rf_error("internal error: too many entries");
  const int *tm = INTEGER(term);
  const svi_len nnz = XLENGTH(term);
  int V = 1; /* one past the largest term: the words' range */
  for (svi_len e = 0; e < nnz; e++) {
    if (tm[e] < 0 || tm[e] == INT_MAX) Rf_error("internal error: term out of range");
    if (tm[e] >= V) V = tm[e] + 1;
  }
  int *words = (int *)R_alloc(nnz > 0 ? nnz : 1, sizeof(int));
  const char *names[] = {"vocab", "local"};
  SEXP out = PROTECT(svi_named_list(2, names));
  SEXP local = Rf_allocVector(INTSXP, nnz);
  SET_VECTOR_ELT(out, 1, local);
  const int U = svi_batch_words(tm, nnz, V, NULL, INTEGER(local), words);
  SEXP vocab = Rf_allocVector(INTSXP, U);
  SET_VECTOR_ELT(out, 0, vocab);
  for (int u = 0; u < U; u++) INTEGER(vocab)[u] = words[u] + 1;
  UNPROTECT(1);
  return out;
}

/* The documents idx (1-based, any order, repeats allowed) of a corpus, in
 * that order: list(doc_ptr, term, count) of the subset (R/dtm.R,
 * dtm_subset()). One pass over the chosen documents' entries. */
SEXP ffi_dtm_subset(SEXP doc_ptr, SEXP term, SEXP count, SEXP idx) {
  svi_need_int(doc_ptr, -1, "doc_ptr");
  svi_need_int(term, -1, "term");
  svi_need_real(count, XLENGTH(term), "count");
  svi_need_int(idx, -1, "idx");
  const R_xlen_t D = XLENGTH(doc_ptr) - 1, n = XLENGTH(idx);
  if (D < 0) Rf_error("internal error: doc_ptr is empty");
  const int *dp = INTEGER(doc_ptr), *id = INTEGER(idx);
  double total = 0.0;
  for (R_xlen_t i = 0; i < n; i++) {
    if (id[i] == NA_INTEGER || id[i] < 1 || id[i] > D)
      Rf_error("internal error: document index out of range");
    const int a = dp[id[i] - 1], b = dp[id[i]];
    if (a < 0 || b < a || b > XLENGTH(term)) Rf_error("internal error: malformed doc_ptr");
    total += (double)(b - a);
  }
  if (total > INT_MAX) Rf_error("internal error: the subset has too many entries");
  const char *names[] = {"doc_ptr", "term", "count"};
  SEXP out = PROTECT(svi_named_list(3, names));
  SEXP p = Rf_allocVector(INTSXP, n + 1);
  SET_VECTOR_ELT(out, 0, p);
  SEXP t = Rf_allocVector(INTSXP, (R_xlen_t)total);
  SET_VECTOR_ELT(out, 1, t);
  SEXP c = Rf_allocVector(REALSXP, (R_xlen_t)total);
  SET_VECTOR_ELT(out, 2, c);
  int *po = INTEGER(p), *to = INTEGER(t);
  double *co = REAL(c);
  const int *ti = INTEGER(term);
  const double *ci = REAL(count);
  int at = 0;
  po[0] = 0;
  for (R_xlen_t i = 0; i < n; i++) {
    const int a = dp[id[i] - 1], len = dp[id[i]] - a;
    memcpy(to + at, ti + a, sizeof(int) * (size_t)len);
    memcpy(co + at, ci + a, sizeof(double) * (size_t)len);
    at += len;
    po[i + 1] = at;
  }
  UNPROTECT(1);
  return out;
}

/* A 64-bit fingerprint of a corpus: its number of terms V, then doc_ptr,
 * term and count value by value (a count by its bits; -0 and 0 differ),
 * each mixed into the state as FNV-1a does with a byte, then the state
 * mixed once more (splitmix64's finaliser). Returned as 16 hexadecimal
 * digits. A fit keeps its training corpus's (R/lda-kept.R), so that a
 * method given the same documents again, named or not, reads the
 * proportions kept on the fit. */
static uint64_t key_mix(uint64_t h, uint64_t v) {
  h ^= v;
  return h * 0x100000001b3ULL;
}

SEXP ffi_dtm_key(SEXP doc_ptr, SEXP term, SEXP count, SEXP V) {
  svi_need_int(doc_ptr, -1, "doc_ptr");
  svi_need_int(term, -1, "term");
  svi_need_real(count, XLENGTH(term), "count");
  svi_need_int(V, 1, "V");
  uint64_t h = 0xcbf29ce484222325ULL;
  h = key_mix(h, (uint64_t)(uint32_t)INTEGER(V)[0]);
  const R_xlen_t nd = XLENGTH(doc_ptr), n = XLENGTH(term);
  h = key_mix(h, (uint64_t)nd);
  const int *dp = INTEGER(doc_ptr), *t = INTEGER(term);
  const double *c = REAL(count);
  for (R_xlen_t i = 0; i < nd; i++) h = key_mix(h, (uint64_t)(uint32_t)dp[i]);
  h = key_mix(h, (uint64_t)n);
  for (R_xlen_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, c + i, sizeof bits);
    h = key_mix(key_mix(h, (uint64_t)(uint32_t)t[i]), bits);
  }
  h = svi_mix64(h);
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return Rf_mkString(buf);
}
