/* Small per-block random streams: xoshiro256++ seeded through splitmix64.
 * A stream is a pure function of (seed, stream id), so a block of documents
 * draws the same numbers whichever thread runs it. */
#include "svi.h"
#include "pool.h"

uint64_t svi_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x) { return svi_mix64(*x += 0x9e3779b97f4a7c15ULL); }

void svi_rng_init(svi_rng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL + 0x8bb84b93962eacc9ULL);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t svi_rng_next(svi_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[0] + s[3], 23) + s[0];
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double svi_rng_unif(svi_rng *r) {
  /* 53 random bits, shifted off zero: values in (0, 1) */
  return ((double)(svi_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

uint64_t svi_rng_int(svi_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do {
    v = svi_rng_next(r);
  } while (v >= limit);
  return v % n;
}

/* Per-document start states for kernels that solve documents one at a time
 * in parallel while keeping the draws of a block-by-block run: document d
 * starts where the earlier documents of its block (SVI_BLOCK per block,
 * stream stream0 + block) left the stream, given the exact number of draws
 * each document makes (draws(d, ctx)). Every thread of a job of the
 * package's threads (pool.h) calls it: the blocks are shared through the
 * counter *next, and a barrier must follow before the documents run. */
void svi_doc_stream_starts(int D, uint64_t seed, uint64_t stream0,
                           uint64_t (*draws)(int, const void *), const void *ctx,
                           svi_rng *doc_rng, int *next) {
  const int nb = (int)svi_n_blocks(D);
  int b, b1;
  while (svi_pool_take(next, 1, nb, &b, &b1)) {
    svi_rng r;
    svi_rng_init(&r, seed, stream0 + (uint64_t)b);
    const int d0 = (int)(b * SVI_BLOCK);
    const int d1 = d0 + SVI_BLOCK < D ? d0 + SVI_BLOCK : D;
    for (int d = d0; d < d1; d++) {
      doc_rng[d] = r;
      if (d + 1 < d1) {
        const uint64_t n = draws(d, ctx);
        for (uint64_t i = 0; i < n; i++) svi_rng_next(&r);
      }
    }
  }
}

/* 0 when every document ended where the next one of its block started
 * (the draws counted by svi_doc_stream_starts() were exact), else -1. */
int svi_doc_streams_check(int D, const svi_rng *start, const svi_rng *end) {
  for (int d = 0; d + 1 < D; d++) {
    if ((d + 1) % SVI_BLOCK == 0) continue; /* d + 1 starts a new block */
    for (int i = 0; i < 4; i++)
      if (start[d + 1].s[i] != end[d].s[i]) return -1;
  }
  return 0;
}
