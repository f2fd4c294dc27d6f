/* The memory of sparsevi's worker processes (R/executor-mirai.R,
 * sparsevi_workers()): each round of a fit on them allocates and frees
 * messages the size of its batches' topic columns and summaries (tens of
 * MB at K = 1000). glibc's malloc hands allocations above its mmap
 * threshold (128 KB at first, raised as such blocks are freed, to at most
 * 32 MB) straight to the system and back, and gives the heap's free top
 * back when it exceeds the trim threshold: every round's messages then
 * land on new pages, and a new page costs a fault and zeroing (measured on
 * this project's machine: 1 GB of new pages, 0.7-2.8 s of system time).
 * A worker process is the package's alone, so it keeps what it frees for
 * the next rounds. */
#include <stdlib.h> /* (first: it tells whether the C library is glibc) */
#include "ffi.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Blocks up to 32 MB (glibc's largest mmap threshold) come from the heap,
 * which grows 64 MB at a time and gives back only a free top above 1 GB.
 * TRUE where this could be set (glibc), else FALSE. */
SEXP ffi_worker_keep_memory(void) {
#ifdef __GLIBC__
  const int ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1 &&
                 mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1 &&
                 mallopt(M_TOP_PAD, 64 * 1024 * 1024) == 1;
  return Rf_ScalarLogical(ok);
#else
  return Rf_ScalarLogical(0);
#endif
}
