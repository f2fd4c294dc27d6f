/* Large tables outside R's heap: K x V double matrices (an LDA fit's topic
 * table) whose memory comes from malloc rather than from R's vector heap.
 *
 * Why. R sizes its vector heap by what it has allocated. In a session whose
 * heap is small -- a fresh one, the corpus just read -- allocating one
 * 100 MB table makes R run a full garbage collection first, and then grow
 * the heap. With Matrix loaded (1.7 million cons cells) that collection
 * takes 0.12-0.17 s: a fifth of the training of a one-pass K = 100 fit over
 * 60,000 Wikipedia paragraphs (issue 20). A table from malloc does not
 * count toward R's heap, so it triggers no collection.
 *
 * What R sees. An ALTREP double vector of the "sparsevi_table" class: its
 * data pointer is the malloc'd block, its length K V, and it carries the
 * usual dim attribute. It is an ordinary numeric matrix to every R function
 * and to every entry point (REAL() gives the block, writable). R's defaults
 * serve the rest: duplicate() makes an ordinary vector, and serialize()
 * writes an ordinary vector, so a saved fit reads back without this class.
 * The block is freed by a finalizer when R collects the vector: memory
 * still belongs to R (notes/style.md §5), through the external pointer that holds
 * it, and an error or interrupt leaves nothing to leak.
 *
 * Collection pressure. R does not know how much memory these tables hold,
 * so it would not collect a dropped one (e.g. the last fit's, replaced in a
 * loop) any sooner for it. This file keeps its own count: when the tables
 * alive or not yet collected would exceed a trigger, it runs R's collector
 * before allocating (which finalizes the dropped ones; none is run when no
 * table is alive), and then sets the trigger to twice what is alive with
 * the new table, and at least SVI_TABLE_MIN_TRIGGER:
 * the policy R applies to its own heap, so memory held by dropped tables
 * stays within a factor of what is alive.
 *
 * Unloading. The class's methods and the finalizer live in this DLL, so a
 * table must not outlive it as a table. Every table is registered (a weak
 * reference, keyed by its block's external pointer); when
 * R unloads the DLL (pkgload::unload(), library.dynam.unload(), the
 * .onUnload of R/zzz.R), R_unload_sparsevi() turns each live table into an
 * ordinary vector held by one of R's own ALTREP wrappers (the class
 * R_shallow_duplicate_attr() makes, which lives in R itself): the same SEXP,
 * so every fit that holds it keeps working, prints and saves after the
 * package is unloaded or reloaded. Its block is then freed and its finalizer
 * run and cleared, so no finalizer points into an unloaded library. */
#include "ffi.h"
#include "pool.h"
#include <R_ext/Altrep.h>
#include <R_ext/Rdynload.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* Bytes that tables may hold before a collection runs first (256 MB). */
#define SVI_TABLE_MIN_TRIGGER (256.0 * 1048576.0)

static R_altrep_class_t table_class;
static double table_live = 0.0;  /* bytes in tables not yet finalized */
static double table_trigger = SVI_TABLE_MIN_TRIGGER;
static int table_collections = 0; /* collections run by table_new() */
static double table_peak = 0.0;   /* most bytes live at once (since a reset) */
/* the weak references of the tables made (a preserved pairlist with a dummy
 * head; entries already finalized are dropped as new tables are made). Key:
 * the block's external pointer; value: an external pointer whose address is
 * the table itself, not a reference R counts (a counted one would make every
 * table MAYBE_SHARED, and the stores refuse to write shared tables). The
 * table is alive while its key is: after a full collection, which runs the
 * finalizers of dropped tables, every key left is a live table's. */
static SEXP table_registry = NULL;

void R_unload_sparsevi(DllInfo *dll);

/* data1: an external pointer to the block (tag: its length as a double);
 * data2: unused. */
static double *table_ptr(SEXP x) {
  SEXP p = R_altrep_data1(x);
  return (double *)R_ExternalPtrAddr(p);
}

static R_xlen_t table_length(SEXP x) {
  return (R_xlen_t)REAL(R_ExternalPtrTag(R_altrep_data1(x)))[0];
}

static void table_finalize(SEXP p) {
  void *block = R_ExternalPtrAddr(p);
  if (!block) return;
  table_live -= REAL(R_ExternalPtrTag(p))[0] * (double)sizeof(double);
  if (table_live < 0) table_live = 0;
  free(block);
  R_ClearExternalPtr(p);
}

static R_xlen_t table_Length(SEXP x) { return table_length(x); }

static void *table_Dataptr(SEXP x, Rboolean writeable) {
  (void)writeable;
  return table_ptr(x);
}

static const void *table_Dataptr_or_null(SEXP x) { return table_ptr(x); }

static double table_Elt(SEXP x, R_xlen_t i) { return table_ptr(x)[i]; }

static R_xlen_t table_Get_region(SEXP x, R_xlen_t i, R_xlen_t n, double *buf) {
  const R_xlen_t len = table_length(x);
  if (i >= len) return 0;
  if (n > len - i) n = len - i;
  memcpy(buf, table_ptr(x) + i, (size_t)n * sizeof(double));
  return n;
}

static Rboolean table_Inspect(SEXP x, int pre, int deep, int pvec,
                              void (*inspect_subtree)(SEXP, int, int, int)) {
  (void)pre; (void)deep; (void)pvec; (void)inspect_subtree;
  Rprintf(" sparsevi_table (%.0f doubles outside R's heap)\n", (double)table_length(x));
  return TRUE;
}

void svi_table_register(DllInfo *dll) {
  /* R finds R_unload_sparsevi() through the DLL's registered symbols only
   * (dynamic lookup is off, src/init.c), so it is registered, as a .C
   * routine: this adds the .C table and leaves the .Call table as it was.
   * R_registerRoutines() turns dynamic lookup back on and stops forcing
   * symbols; both are set back as R_init_sparsevi() had them. */
  static const R_CMethodDef unload_methods[] = {
      {"R_unload_sparsevi", (DL_FUNC)&R_unload_sparsevi, 0}, {NULL, NULL, 0}};
  R_registerRoutines(dll, unload_methods, NULL, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  table_class = R_make_altreal_class("sparsevi_table", "sparsevi", dll);
  R_set_altrep_Length_method(table_class, table_Length);
  R_set_altrep_Inspect_method(table_class, table_Inspect);
  R_set_altvec_Dataptr_method(table_class, table_Dataptr);
  R_set_altvec_Dataptr_or_null_method(table_class, table_Dataptr_or_null);
  R_set_altreal_Elt_method(table_class, table_Elt);
  R_set_altreal_Get_region_method(table_class, table_Get_region);
}

/* Adds a table's weak reference to the registry, dropping the entries of
 * tables already finalized (their key is cleared). */
static void table_register(SEXP w) {
  PROTECT(w);
  if (!table_registry) {
    table_registry = Rf_cons(R_NilValue, R_NilValue);
    R_PreserveObject(table_registry);
  }
  for (SEXP prev = table_registry, cur = CDR(prev); cur != R_NilValue; cur = CDR(cur)) {
    if (R_WeakRefKey(CAR(cur)) == R_NilValue) SETCDR(prev, CDR(cur));
    else prev = cur;
  }
  SETCDR(table_registry, Rf_cons(w, CDR(table_registry)));
  UNPROTECT(1);
}

/* Before the DLL goes: every live table becomes an ordinary vector inside
 * one of R's own wrapper objects (same SEXP, R's class, R's methods), its
 * block freed and its finalizer run, so that nothing left in the session
 * calls into this library. R calls this when it unloads the DLL. */
void R_unload_sparsevi(DllInfo *dll) {
  (void)dll;
  svi_pool_stop(); /* the package's threads end before its code goes */
  /* first a full collection, whether or not a table was made: it runs the
   * finalizers of everything already dropped while they are still in this
   * library (tables, freed as tables rather than copied, and the workspace
   * holder of each fit_vdp() call, src/vdp-ffi.c, whose finalizer stays
   * registered after the call frees the workspace) */
  R_gc();
  if (!table_registry) return;
  /* R's wrapper class and its metadata layout, from a wrapper R makes */
  SEXP probe = PROTECT(Rf_allocVector(REALSXP, 64));
  memset(REAL(probe), 0, 64 * sizeof(double));
  SEXP wrap = PROTECT(R_shallow_duplicate_attr(probe));
  const int can_wrap = ALTREP(wrap) && !R_altrep_inherits(wrap, table_class);
  for (SEXP cur = CDR(table_registry); cur != R_NilValue; cur = CDR(cur)) {
    SEXP w = CAR(cur);
    SEXP p = R_WeakRefKey(w);
    if (p == R_NilValue) continue;
    SEXP x = (SEXP)R_ExternalPtrAddr(R_WeakRefValue(w));
    double *block = (double *)R_ExternalPtrAddr(p);
    if (can_wrap && x && block && ALTREP(x) && R_altrep_inherits(x, table_class) &&
        R_altrep_data1(x) == p) {
      PROTECT(x);
      const R_xlen_t n = table_length(x);
      SEXP v = PROTECT(Rf_allocVector(REALSXP, n));
      if (n > 0) memcpy(REAL(v), block, (size_t)n * sizeof(double));
      SEXP meta = PROTECT(Rf_duplicate(R_altrep_data2(wrap)));
      SET_TAG(x, TAG(wrap)); /* an ALTREP object's class is its tag */
      R_set_altrep_data1(x, v);
      R_set_altrep_data2(x, meta);
      UNPROTECT(3);
    }
    R_RunWeakRefFinalizer(w); /* frees the block, clears the finalizer */
  }
  SETCDR(table_registry, R_NilValue);
  R_ReleaseObject(table_registry);
  table_registry = NULL;
  UNPROTECT(2);
}

/* Asks Linux to back a large block with 2 MB pages (transparent huge pages
 * in "madvise" mode; a hint the system may ignore): the 2 MB-aligned part of
 * a block of 32 MB or more. A table's pages are first touched by the local
 * and global steps, on every thread; with 4 kB pages a one-pass K = 1000 fit
 * over 30,000 Wikipedia paragraphs took 565,000 page faults, and on two
 * threads they cost 2.8-3.3 s of system time against 0.7 s on one
 * (concurrent faults in one address space); with 2 MB pages, 73,000.
 * (calloc's large blocks are fresh pages, zeroed by the system when first
 * touched, huge or not.) */
static void table_advise(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (bytes < (size_t)(16 * huge)) return;
  const uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  const uintptr_t b = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (b > a) (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/* A block of n doubles from the C heap, zero-filled when `zero`; NULL when
 * the system has none. */
static double *table_block(size_t n, int zero) {
  double *p = zero ? (double *)calloc(n, sizeof(double)) : (double *)malloc(n * sizeof(double));
  if (p) table_advise(p, n * sizeof(double));
  return p;
}

/* A K x V double matrix outside R's heap: zero-filled when `zero` (calloc,
 * whose large blocks are fresh pages the system zeroes when first touched),
 * else its values unset (the caller writes every entry before R reads one). */
static SEXP table_new(int K, int V, int zero) {
  svi_need_size((double)K, (double)V, 2147483647.0, "topic table");
  const R_xlen_t n = (R_xlen_t)K * V;
  const size_t count = (size_t)(n > 0 ? n : 1);
  const double bytes = (double)n * (double)sizeof(double);
  if (table_live + bytes > table_trigger) {
    /* (with no table alive, a collection could free none) */
    if (table_live > 0) {
      R_gc();
      table_collections++;
    }
    const double want = 2.0 * (table_live + bytes);
    table_trigger = want > SVI_TABLE_MIN_TRIGGER ? want : SVI_TABLE_MIN_TRIGGER;
  }
  SEXP len = PROTECT(Rf_ScalarReal((double)n));
  SEXP p = PROTECT(R_MakeExternalPtr(NULL, len, R_NilValue));
  SEXP x = PROTECT(R_new_altrep(table_class, p, R_NilValue));
  /* the finalizer first: from the moment the block exists, R owns it (an
   * error in what follows leaves it to the collector, never leaked); its
   * weak reference is registered, for R_unload_sparsevi() */
  table_register(R_MakeWeakRefC(p, PROTECT(R_MakeExternalPtr(x, R_NilValue, R_NilValue)),
                                table_finalize, TRUE));
  UNPROTECT(1);
  double *block = table_block(count, zero);
  if (!block) {
    /* (dropped tables may be holding the memory) */
    R_gc();
    block = table_block(count, zero);
  }
  if (!block) Rf_error("cannot allocate a topic table of %.0f MB", bytes / 1048576.0);
  R_SetExternalPtrAddr(p, block);
  table_live += bytes;
  if (table_live > table_peak) table_peak = table_live;
  SEXP dim = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(dim)[0] = K;
  INTEGER(dim)[1] = V;
  Rf_setAttrib(x, R_DimSymbol, dim);
  UNPROTECT(4);
  return x;
}

SEXP svi_table_alloc(int K, int V) { return table_new(K, V, 0); }

SEXP svi_table_zero(int K, int V) { return table_new(K, V, 1); }

SEXP svi_table_zero_on(int K, int V, int threads) {
  SEXP X = table_new(K, V, 1);
  /* (one thread: the pages are zeroed where the caller first writes, as
   * with svi_table_zero()) */
  if (threads < 2) return X;
  double *p = REAL(X);
  /* one write of 0 a 4 KB page (the block is all 0 already: calloc) */
  const svi_len step = 4096 / (svi_len)sizeof(double);
  const svi_len pages = ((svi_len)XLENGTH(X) + step - 1) / step;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (svi_len i = 0; i < pages; i++) p[i * step] = 0.0;
  return X;
}

SEXP svi_table_copy(SEXP X) {
  svi_need_matrix(X, REALSXP, -1, -1, "X");
  SEXP out = PROTECT(svi_table_alloc(Rf_nrows(X), Rf_ncols(X)));
  if (XLENGTH(X) > 0)
    memcpy(REAL(out), REAL(X), (size_t)XLENGTH(X) * sizeof(double));
  Rf_copyMostAttrib(X, out);
  Rf_setAttrib(out, R_DimNamesSymbol, Rf_getAttrib(X, R_DimNamesSymbol));
  UNPROTECT(1);
  return out;
}

/* A zero-filled K x V table: SCVB0's session scratch (R: cvb0_scratch()),
 * and tests. */
SEXP ffi_svi_table_alloc(SEXP K_, SEXP V_) {
  return svi_table_zero(svi_int_arg(K_, 1, INT_MAX, "K"), svi_int_arg(V_, 1, INT_MAX, "V"));
}

/* c(live bytes, trigger bytes, collections run, peak live bytes): the
 * accounting above, for tests and benchmarks (inst/bench/ope-memory.R).
 * reset = TRUE starts a new peak from what is live now. */
SEXP ffi_svi_table_info(SEXP reset) {
  if (svi_flag_arg(reset, "reset")) table_peak = table_live;
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 4));
  REAL(out)[0] = table_live;
  REAL(out)[1] = table_trigger;
  REAL(out)[2] = table_collections;
  REAL(out)[3] = table_peak;
  UNPROTECT(1);
  return out;
}

/* Whether x is such a table (for tests). */
SEXP ffi_svi_is_table(SEXP x) {
  return Rf_ScalarLogical(ALTREP(x) && R_altrep_inherits(x, table_class));
}
