/* UCI bag-of-words chunk parser (read.c); no R API. */
#ifndef SPARSEVI_READ_H
#define SPARSEVI_READ_H

#include "svi.h"

enum {
  UCI_OK = 0,
  UCI_BAD_HEADER = 1, /* a header line is not one positive whole number */
  UCI_BAD_LINE = 2,   /* an entry line is not "doc word count" */
  UCI_BAD_DOC = 3,    /* document id outside 1..D */
  UCI_BAD_WORD = 4,   /* word id outside 1..W */
  UCI_BAD_COUNT = 5,  /* count NA/NaN/Inf or negative */
  UCI_TOO_MANY = 6,   /* more entry lines than the header's NNZ */
  UCI_DUPLICATE = 7,  /* the same (doc, word) on two consecutive lines */
  UCI_INTERNAL = 8
};

/* Parser state carried from chunk to chunk. Doubles hold counts of lines and
 * entries, which can exceed 2^31 in principle. */
typedef struct {
  double line;      /* number of the last line read (1-based) */
  double header[3]; /* D, W, NNZ */
  int n_header;     /* header lines read so far */
  double entries;   /* entry lines read so far */
  double last_doc, last_word;
  int sorted;     /* entries so far sorted by (doc, word) */
  int noninteger; /* some count is not a whole number */
} uci_state;

void uci_state_init(uci_state *st);

/* Parses the complete lines of buf[0..n) (and the last, unterminated one
 * when final != 0). Returns right after the header when cap == 0.
 * Writes up to cap entries (doc 1-based, word 0-based,
 * count > 0; zero counts are skipped) and returns a UCI_* status; on error
 * st->line is the offending line. *consumed is the number of bytes used. */
int uci_parse(const char *buf, svi_len n, int final, uci_state *st, int *doc, int *word,
              double *count, svi_len cap, svi_len *n_out, svi_len *consumed);

#endif
