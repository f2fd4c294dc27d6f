/* Ownership of in-place writes: the one guard every entry point that
 * writes an R object it was given calls (notes/style.md §5,
 * notes/architecture.md §8).
 *
 * A .Call may write an argument in place only when the package owns it:
 * R does not share it (not MAYBE_SHARED: at most one binding or list holds
 * it; the training loop passes its own objects as elements of its state,
 * never a user's), or it carries the package's one ownership flag, the
 * attribute "sparsevi_owned" = TRUE.
 * The flag is set only on objects the training loop holds alone and never
 * hands to a user: a new fit's start given up to its store, a store's
 * table kept safe on disk or kept for reuse by a later lap, a session's
 * scratch buffers. It is removed when such a table becomes a fit's own
 * (svi_take_back()). An entry point that finds a shared, unflagged input
 * works on new memory instead or refuses it (svi_need_own()): it never
 * writes it. */
#include "ffi.h"

static SEXP owned_symbol(void) {
  static SEXP sym = NULL;
  if (sym == NULL) sym = Rf_install("sparsevi_owned");
  return sym;
}

int svi_flagged(SEXP x) {
  SEXP a = Rf_getAttrib(x, owned_symbol());
  return TYPEOF(a) == LGLSXP && XLENGTH(a) == 1 && LOGICAL(a)[0] == 1;
}

int svi_owns(SEXP x) {
  return !MAYBE_SHARED(x) || svi_flagged(x);
}

void svi_need_own(SEXP x, const char *what) {
  if (!svi_owns(x))
    Rf_error("internal error: %s is shared; the package writes only what it owns "
             "(copy it first)", what);
}

void svi_give_up(SEXP x) {
  Rf_setAttrib(x, owned_symbol(), Rf_ScalarLogical(1));
}

void svi_take_back(SEXP x) {
  if (svi_flagged(x)) Rf_setAttrib(x, owned_symbol(), R_NilValue);
}

/* R: a buffer or table the caller gives up to the package (the session's
 * scratch, a table kept for a later lap's copy): flagged as owned. The
 * caller keeps it where only the package reads it. Returns x. */
SEXP ffi_svi_give_up(SEXP x) {
  /* only the numeric tables and buffers the loop keeps: the flag is an
   * attribute set in place, and other values may be R's own shared
   * constants (TRUE, NA: an attribute on them reaches every use of them in
   * the session, and a cycle through them overflowed the C stack: tools/fuzz.R) */
  if (TYPEOF(x) != REALSXP && TYPEOF(x) != INTSXP)
    Rf_error("internal error: only a numeric table or buffer can be given up");
  svi_give_up(x);
  return x;
}

/* R: whether the package would write x in place (for tests). */
SEXP ffi_svi_owns(SEXP x) {
  return Rf_ScalarLogical(svi_owns(x));
}
