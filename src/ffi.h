/* Helpers shared by the glue files: SEXP -> struct views, seeds, checks.
 * Only glue files include this header (kernels never see a SEXP). */
#ifndef SPARSEVI_GLUE_H
#define SPARSEVI_GLUE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "svi.h"

/* A view of a sparsevi_dtm's CSR parts; V is the vocabulary size. */
svi_dtm svi_dtm_view(SEXP doc_ptr, SEXP term, SEXP count, SEXP V);
/* The same view of a sparsevi_dtm passed whole (a list read by name:
 * doc_ptr, term, count), so an entry point takes one argument per corpus. */
svi_dtm svi_dtm_list(SEXP x, SEXP V);
/* A 64-bit seed from an R double vector of two 32-bit halves. */
uint64_t svi_seed_from_r(SEXP seed);
/* A random stream index from an R double (a whole number in [0, 2^53]). */
uint64_t svi_stream_from_r(SEXP stream);
/* Number of threads from an R integer; 1 without OpenMP or in a child of
 * fork(). */
int svi_threads_from_r(SEXP threads);
/* Records this process id for that (R_init_sparsevi() calls it). */
void svi_threads_init(void);
/* A view without the content checks (ffi_dtm_validate reports those as
 * codes); only the shape of the parts is checked. */
svi_dtm svi_dtm_view_unchecked(SEXP doc_ptr, SEXP term, SEXP count, SEXP V);

/* Argument checks at the top of entry points. R has validated everything,
 * so a failure here is an internal error naming the argument; they exist so
 * that a direct .Call with hostile arguments errors instead of crashing.
 * n (or nrow, ncol) < 0 means any length. */
void svi_need_real(SEXP x, R_xlen_t n, const char *what);
void svi_need_int(SEXP x, R_xlen_t n, const char *what);
void svi_need_lgl(SEXP x, R_xlen_t n, const char *what);
void svi_need_list(SEXP x, R_xlen_t n, const char *what);
/* A double (type REALSXP) or integer matrix with the given dimensions. */
void svi_need_matrix(SEXP x, SEXPTYPE type, int nrow, int ncol, const char *what);
/* A single number (integer or double, not NA) in [lo, hi]. */
int svi_int_arg(SEXP x, int lo, int hi, const char *what);
double svi_real_arg(SEXP x, double lo, double hi, const char *what);
/* TRUE/FALSE (NA or anything else is an error). */
int svi_flag_arg(SEXP x, const char *what);
/* Errors unless a * b (* c) fits in a vector of R and in `limit` doubles. */
void svi_need_size(double a, double b, double limit, const char *what);
/* The most topics an LDA fit can have: fit_lda() keeps K <= V and
 * K V <= 2^31 - 1 (check_topic_table_size()), so K <= 46340. Entry points
 * that size an output by K alone check it, so that a hostile K cannot ask
 * for gigabytes. */
#define SVI_MAX_TOPICS 46340

/* A K x V double matrix whose memory is outside R's heap (table.c says why
 * and how), its values unset; and the registration of its ALTREP class
 * (R_init_sparsevi). */
SEXP svi_table_alloc(int K, int V);
/* The same, every entry 0. */
SEXP svi_table_zero(int K, int V);
/* The same, with its pages first touched on `threads` threads (each a
 * contiguous share): the system zeroes a fresh page on the thread that
 * touches it first, so a table that is then written sparsely (a seeded
 * start) does not have that work done on one thread. Same values. */
SEXP svi_table_zero_on(int K, int V, int threads);
/* Such a table holding a copy of the double matrix X, with its attributes. */
SEXP svi_table_copy(SEXP X);
void svi_table_register(DllInfo *dll);

/* Ownership of in-place writes (own.c): svi_owns(x) is TRUE when no other
 * binding can reach x or x carries the package's ownership flag;
 * svi_need_own() errors unless it does; svi_give_up() sets the flag on an object the package holds alone,
 * svi_take_back() removes it (when the object becomes a fit's own);
 * svi_flagged() reads it. */
int svi_owns(SEXP x);
int svi_flagged(SEXP x);
void svi_need_own(SEXP x, const char *what);
void svi_give_up(SEXP x);
void svi_take_back(SEXP x);

/* A batch summary held as K values for each of the batch's Vb words (acc,
 * word-major; words increasing in [0, V)) as the parts of a sparse K x V
 * dgCMatrix without its zeros: out[slot], out[slot + 1] and out[slot + 2]
 * get the column pointers (V + 1), the rows and the values. */
/* One batch word's K values for svi_set_sparse_by_word(): a pointer to
 * them, valid until the next call. */
typedef const double *(*svi_column_fn)(void *ctx, int w);
/* The slots p, i, x of a K x V dgCMatrix at out[slot..slot+2] from the
 * columns of the batch's words (words[0..Vb-1], increasing): the non-zero
 * values, topics increasing. col() is called twice per word. */
void svi_set_sparse_by_word(SEXP out, int slot, int K, int V, const int *words, int Vb,
                            svi_column_fn col, void *ctx);
void svi_set_sparse_columns(SEXP out, int slot, const double *acc, int K, int V,
                            const int *words, int Vb);

/* Named options: entry points take one named list of controls (a plain
 * list() built in R) and read each by name, so no caller depends on
 * a position. A missing name is an internal error naming it; the range
 * checks are those of svi_int_arg() / svi_real_arg() / svi_flag_arg(). */
SEXP svi_opt(SEXP opts, const char *name);
int svi_opt_int(SEXP opts, const char *name, int lo, int hi);
double svi_opt_real(SEXP opts, const char *name, double lo, double hi);
int svi_opt_flag(SEXP opts, const char *name);
/* Optional options: `absent` when the name is missing or NULL. */
int svi_opt_int_or(SEXP opts, const char *name, int lo, int hi, int absent);
double svi_opt_real_or(SEXP opts, const char *name, double lo, double hi, double absent);

/* The number of words U of a batch summary given as its words (0-based,
 * strictly increasing, below V) and (at least) K x U values; errors unless
 * they are consistent (src/lda-store-ffi.c). */
int svi_check_summary(SEXP words, SEXP xv, int K, int V);
/* The same for SCVB0's shape form, list(words, p, k, v, r) (lda-cvb0-ffi.c):
 * errors unless well formed for K x V topics; returns its number of words. */
int svi_check_shape_summary(SEXP S, int K, int V);

/* Named list helper: list with the given names, filled by the caller. */
SEXP svi_named_list(int n, const char **names);
#endif
