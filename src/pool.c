/* The package's worker threads (pool.h). One pool per process, started on
 * first use and ended by the package's unload (svi_pool_stop()). Every
 * change of state goes through a generation counter: a thread that waits
 * for one to move spins for a while (below), then sleeps on the pool's
 * condition variable; whoever moves a counter wakes the sleepers.
 * The counter's store and the sleepers' count are sequentially consistent,
 * so either the waiter sees the new value or the waker sees a sleeper.
 *
 * Without POSIX threads and GNU atomics (or in a child of fork(), whose
 * pool threads do not exist) every job runs on the calling thread alone. */
#include "pool.h"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(SVI_POOL_SERIAL)
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#ifndef _WIN32
#include <unistd.h>
#endif

/* How long a waiting thread spins before it sleeps, in nanoseconds. A
 * thread between jobs: 50 microseconds, then sleep (R's work between two
 * minibatches takes a millisecond or more, which it sleeps through); woken
 * by svi_pool_wake() as a job is set up, up to 2 ms for it. At a barrier
 * or the job's end (the other threads' last documents): up to 1 ms,
 * yielding the core after the first 20 microseconds. Waking a sleeping
 * thread took 76 microseconds (median; 90%: 131) on the benchmark machine
 * (a virtual one), so a thread that slept at every wait would lose much of
 * a minibatch of 1-4 ms. */
static const double spin_idle_ns = 50000.0, spin_hint_ns = 2000000.0,
                    spin_wait_ns = 1000000.0, spin_pause_ns = 20000.0;
#define SVI_POOL_MAX 1023

static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static pthread_t pool_thread[SVI_POOL_MAX];
static unsigned pool_seen_at_start[SVI_POOL_MAX]; /* the job generation when each started */
static int pool_started = 0;   /* threads started (pool_thread[0 .. pool_started - 1]) */
static int pool_sleepers = 0;  /* threads asleep on pool_cond, or about to be */
static int pool_busy = 0;      /* a job is running (a nested call runs serially) */
static int pool_quit = 0;
#ifndef _WIN32
static pid_t pool_pid = 0;     /* the process that started the threads */
#endif

/* the current job: worker i runs tid i + 1 while i + 1 < job_n */
static unsigned job_gen = 0;   /* moves when a job is posted */
static svi_job_fn job_fn;
static void *job_ctx;
static int job_n;
static int job_left;           /* workers of the job not yet done */
static unsigned done_gen = 0;  /* moves when the last worker of a job is done */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static void wake_all(void) {
  if (__atomic_load_n(&pool_sleepers, __ATOMIC_SEQ_CST) > 0) {
    pthread_mutex_lock(&pool_mutex);
    pthread_cond_broadcast(&pool_cond);
    pthread_mutex_unlock(&pool_mutex);
  }
}

static unsigned hint_gen = 0; /* moves when a job is about to come (svi_pool_wake()) */

/* Spins until *gen differs from old, for up to spin ns (pausing for the
 * first spin_pause_ns, then yielding the core); 1 when it did. */
static int spin_change(const unsigned *gen, unsigned old, double spin) {
  if (__atomic_load_n(gen, __ATOMIC_ACQUIRE) != old) return 1;
  const double t0 = now_ns();
  for (int i = 1;; i++) {
    cpu_relax();
    if (__atomic_load_n(gen, __ATOMIC_ACQUIRE) != old) return 1;
    if ((i & 63) == 0) {
      const double t = now_ns() - t0;
      if (t > spin) return 0;
      if (t > spin_pause_ns) sched_yield();
    }
  }
}

/* Waits until *gen differs from old (or the pool quits): spins for spin ns,
 * then sleeps. */
static void wait_change(const unsigned *gen, unsigned old, double spin) {
  if (spin_change(gen, old, spin)) return;
  pthread_mutex_lock(&pool_mutex);
  __atomic_add_fetch(&pool_sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(gen, __ATOMIC_SEQ_CST) == old &&
         !__atomic_load_n(&pool_quit, __ATOMIC_SEQ_CST))
    pthread_cond_wait(&pool_cond, &pool_mutex);
  __atomic_sub_fetch(&pool_sleepers, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&pool_mutex);
}

/* A pool thread waits for the next job: spins briefly, sleeps, and when a
 * hint wakes it (svi_pool_wake()) spins longer for the job it announces. */
static void wait_job(unsigned seen) {
  double spin = spin_idle_ns;
  for (;;) {
    if (spin_change(&job_gen, seen, spin)) return;
    pthread_mutex_lock(&pool_mutex);
    __atomic_add_fetch(&pool_sleepers, 1, __ATOMIC_SEQ_CST);
    const unsigned h = __atomic_load_n(&hint_gen, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&job_gen, __ATOMIC_SEQ_CST) == seen &&
           __atomic_load_n(&hint_gen, __ATOMIC_SEQ_CST) == h &&
           !__atomic_load_n(&pool_quit, __ATOMIC_SEQ_CST))
      pthread_cond_wait(&pool_cond, &pool_mutex);
    __atomic_sub_fetch(&pool_sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pool_mutex);
    if (__atomic_load_n(&job_gen, __ATOMIC_ACQUIRE) != seen ||
        __atomic_load_n(&pool_quit, __ATOMIC_SEQ_CST))
      return;
    spin = spin_hint_ns;
  }
}

void svi_pool_wake(void) {
  if (pool_started == 0) return;
  __atomic_add_fetch(&hint_gen, 1, __ATOMIC_SEQ_CST);
  wake_all();
}

static void *worker_main(void *arg) {
  const int me = (int)(long)arg; /* runs tid me + 1 */
  unsigned seen = pool_seen_at_start[me];
  for (;;) {
    wait_job(seen);
    if (__atomic_load_n(&pool_quit, __ATOMIC_SEQ_CST)) break;
    /* the job's fields, then the generation again: a thread outside the
     * last job may read them while the next job is posted */
    const unsigned g = __atomic_load_n(&job_gen, __ATOMIC_ACQUIRE);
    const int n = __atomic_load_n(&job_n, __ATOMIC_RELAXED);
    const svi_job_fn fn = __atomic_load_n(&job_fn, __ATOMIC_RELAXED);
    void *ctx = __atomic_load_n(&job_ctx, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&job_gen, __ATOMIC_RELAXED) != g) continue;
    seen = g;
    if (me + 1 >= n) continue;
    fn(ctx, me + 1, n);
    if (__atomic_sub_fetch(&job_left, 1, __ATOMIC_ACQ_REL) == 0) {
      __atomic_add_fetch(&done_gen, 1, __ATOMIC_SEQ_CST);
      wake_all();
    }
  }
  return NULL;
}

/* Starts threads until `want` run (all signals blocked in them: R's main
 * thread takes the user's interrupt); returns how many run. */
static int pool_grow(int want) {
  if (want > SVI_POOL_MAX) want = SVI_POOL_MAX;
  if (pool_started >= want) return pool_started;
#ifndef _WIN32
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
#endif
  while (pool_started < want) {
    pool_seen_at_start[pool_started] = __atomic_load_n(&job_gen, __ATOMIC_ACQUIRE);
    if (pthread_create(&pool_thread[pool_started], NULL, worker_main,
                       (void *)(long)pool_started) != 0)
      break;
    pool_started++;
  }
#ifndef _WIN32
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pool_started > 0) pool_pid = getpid();
#endif
  return pool_started;
}

int svi_pool_run(int n, svi_job_fn fn, void *ctx) {
  int m = n;
#ifndef _WIN32
  if (pool_started > 0 && getpid() != pool_pid) m = 1; /* a fork's child */
#endif
  if (m > 1 && __atomic_exchange_n(&pool_busy, 1, __ATOMIC_ACQ_REL)) m = 1; /* nested */
  if (m > 1) {
    const int got = pool_grow(m - 1);
    if (1 + got < m) m = 1 + got;
    if (m <= 1) __atomic_store_n(&pool_busy, 0, __ATOMIC_RELEASE);
  }
  if (m <= 1) {
    fn(ctx, 0, 1);
    return 1;
  }
  __atomic_store_n(&job_fn, fn, __ATOMIC_RELAXED);
  __atomic_store_n(&job_ctx, ctx, __ATOMIC_RELAXED);
  __atomic_store_n(&job_n, m, __ATOMIC_RELAXED);
  __atomic_store_n(&job_left, m - 1, __ATOMIC_RELAXED);
  const unsigned d0 = __atomic_load_n(&done_gen, __ATOMIC_ACQUIRE);
  __atomic_add_fetch(&job_gen, 1, __ATOMIC_SEQ_CST);
  wake_all();
  fn(ctx, 0, m);
  wait_change(&done_gen, d0, spin_wait_ns);
  __atomic_store_n(&pool_busy, 0, __ATOMIC_RELEASE);
  return m;
}

void svi_pool_barrier_wait(svi_pool_barrier *b, int n) {
  if (n <= 1) return;
  const unsigned g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == n) {
    __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&b->gen, 1, __ATOMIC_SEQ_CST);
    wake_all();
    return;
  }
  wait_change(&b->gen, g, spin_wait_ns);
}

void svi_pool_stop(void) {
  if (pool_started == 0) return;
#ifndef _WIN32
  if (getpid() != pool_pid) { /* a fork's child: the threads are the parent's */
    pool_started = 0;
    return;
  }
#endif
  __atomic_store_n(&pool_quit, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&pool_mutex);
  pthread_cond_broadcast(&pool_cond);
  pthread_mutex_unlock(&pool_mutex);
  for (int i = 0; i < pool_started; i++) pthread_join(pool_thread[i], NULL);
  pool_started = 0;
  __atomic_store_n(&pool_quit, 0, __ATOMIC_SEQ_CST);
}

#else /* one thread */

int svi_pool_run(int n, svi_job_fn fn, void *ctx) {
  (void)n;
  fn(ctx, 0, 1);
  return 1;
}
void svi_pool_barrier_wait(svi_pool_barrier *b, int n) {
  (void)b;
  (void)n;
}
void svi_pool_stop(void) {}
void svi_pool_wake(void) {}

#endif
