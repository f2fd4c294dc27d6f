/* Small per-block random streams: xoshiro256++ seeded through splitmix64.
 * A stream is a pure function of (seed, stream id), so a block of documents
 * draws the same numbers whichever thread runs it. */
#include "svi.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

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
