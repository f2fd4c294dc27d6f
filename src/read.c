/* Parser of UCI bag-of-words "docword" files, one chunk of bytes at a time.
 *
 * The file is three header lines (D, W, NNZ) followed by NNZ lines
 * "doc word count" with 1-based ids. R reads the (possibly gzipped) file in
 * chunks of raw bytes and hands each chunk here; only complete lines are
 * consumed, the unfinished tail is returned to R to be prepended to the next
 * chunk. No SEXP here: plain C over a byte buffer and output arrays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

void uci_state_init(uci_state *st) {
  memset(st, 0, sizeof(*st));
  st->sorted = 1;
}

static int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/* Parse a non-negative integer token starting at *p (after blanks); returns
 * 0 on success. Rejects signs, fractions and values above 2^31 - 1. */
static int parse_int(const char **p, const char *end, double *out) {
  const char *s = *p;
  while (s < end && is_blank(*s)) s++;
  if (s >= end || *s < '0' || *s > '9') return 1;
  double v = 0;
  while (s < end && *s >= '0' && *s <= '9') {
    v = v * 10 + (*s - '0');
    if (v > 2147483647.0) return 1;
    s++;
  }
  if (s < end && !is_blank(*s)) return 1;
  *p = s;
  *out = v;
  return 0;
}

/* Parse a number (the count) with strtod over a bounded copy. */
static int parse_num(const char **p, const char *end, double *out) {
  const char *s = *p;
  while (s < end && is_blank(*s)) s++;
  if (s >= end) return 1;
  char tmp[64];
  size_t n = 0;
  while (s + n < end && !is_blank(s[n])) n++;
  if (n == 0 || n >= sizeof(tmp)) return 1;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  char *stop;
  double v = strtod(tmp, &stop);
  if (stop != tmp + n) return 1;
  *p = s + n;
  *out = v;
  return 0;
}

static int rest_blank(const char *s, const char *end) {
  while (s < end && is_blank(*s)) s++;
  return s == end;
}

int uci_parse(const char *buf, svi_len n, int final, uci_state *st, int *doc, int *word,
              double *count, svi_len cap, svi_len *n_out, svi_len *consumed) {
  svi_len pos = 0, k = 0;
  int status = UCI_OK;
  while (pos < n) {
    const char *line = buf + pos;
    const char *nl = memchr(line, '\n', (size_t)(n - pos));
    if (nl == NULL && !final) break; /* unfinished line: wait for more bytes */
    const char *end = nl ? nl : buf + n;
    svi_len next = (svi_len)(end - buf) + (nl ? 1 : 0);
    st->line += 1;
    if (rest_blank(line, end)) { /* blank lines are skipped */
      pos = next;
      continue;
    }
    const char *p = line;
    if (st->n_header < 3) {
      double v;
      if (parse_int(&p, end, &v) || !rest_blank(p, end)) {
        status = UCI_BAD_HEADER;
        break;
      }
      st->header[st->n_header++] = v;
      if (st->n_header == 3 && (st->header[0] < 1 || st->header[1] < 1)) {
        status = UCI_BAD_HEADER;
        break;
      }
      pos = next;
      /* stop after the header when there is no room yet: the caller
       * allocates NNZ entries and calls again with the rest */
      if (st->n_header == 3 && cap == 0) break;
      continue;
    }
    double d, w, c;
    if (parse_int(&p, end, &d) || parse_int(&p, end, &w) || parse_num(&p, end, &c) ||
        !rest_blank(p, end)) {
      status = UCI_BAD_LINE;
      break;
    }
    if (d < 1 || d > st->header[0]) {
      status = UCI_BAD_DOC;
      break;
    }
    if (w < 1 || w > st->header[1]) {
      status = UCI_BAD_WORD;
      break;
    }
    if (!isfinite(c) || c < 0) {
      status = UCI_BAD_COUNT;
      break;
    }
    if (st->entries >= st->header[2]) {
      status = UCI_TOO_MANY;
      break;
    }
    st->entries += 1;
    if (d == st->last_doc && w == st->last_word) {
      status = UCI_DUPLICATE;
      break;
    }
    if (d < st->last_doc || (d == st->last_doc && w < st->last_word)) st->sorted = 0;
    st->last_doc = d;
    st->last_word = w;
    if (c != floor(c)) st->noninteger = 1;
    if (c > 0) { /* explicit zeros carry no information */
      if (k >= cap) {
        status = UCI_INTERNAL;
        break;
      }
      doc[k] = (int)d;
      word[k] = (int)w - 1;
      count[k] = c;
      k++;
    }
    pos = next;
  }
  *n_out = k;
  *consumed = pos;
  return status;
}
