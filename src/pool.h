/* The package's own worker threads (pool.c), for kernels that run once per
 * minibatch and must not keep a core busy while R works between their
 * calls: SCVB0's local step (lda-cvb0.c). notes/architecture.md §7.
 *
 * svi_pool_run(n, fn, ctx) calls fn(ctx, tid, m) for tid = 0 .. m - 1, tid
 * 0 on the calling thread and the others on the pool's threads, and returns
 * when every call has returned; m is n, or fewer when threads cannot be
 * started (1 in a child of fork(), for a nested call or when n is 1). The
 * kernels give every thread count the same bits, so m only changes speed.
 * fn must not call R. A waiting thread spins for at most a millisecond or
 * two and then sleeps (pool.c), so between minibatches, while R works, the
 * threads leave their cores to other programs; GCC's OpenMP runtime spins
 * there for milliseconds unless OMP_WAIT_POLICY, read as R starts, says
 * otherwise. */
#ifndef SPARSEVI_POOL_H
#define SPARSEVI_POOL_H

typedef void (*svi_job_fn)(void *ctx, int tid, int n);

int svi_pool_run(int n, svi_job_fn fn, void *ctx);

/* A barrier for the m threads of one job: zeroed by the caller of
 * svi_pool_run() (as a zero-initialised field of the job) and used by all
 * m. */
typedef struct {
  int arrived;
  unsigned gen;
} svi_pool_barrier;

void svi_pool_barrier_wait(svi_pool_barrier *b, int n);

/* Dynamic sharing of [0, end) in chunks: the next chunk [*lo, *hi) from
 * the shared counter *next (0 before the job); 0 when none is left. */
static inline int svi_pool_take(int *next, int chunk, int end, int *lo, int *hi) {
#if defined(__GNUC__) || defined(__clang__)
  const int s = __atomic_fetch_add(next, chunk, __ATOMIC_RELAXED);
#else
  const int s = *next;
  *next += chunk;
#endif
  if (s >= end) return 0;
  *lo = s;
  *hi = s + chunk < end ? s + chunk : end;
  return 1;
}

/* Wakes the pool's sleeping threads to wait, spinning, for a job about to
 * be posted (its caller's setup then hides their waking). */
void svi_pool_wake(void);

/* Ends the pool's threads (the package's unload). */
void svi_pool_stop(void);

#endif
