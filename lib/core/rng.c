/*
 * rng.c - the seeded random number generator: xoshiro256** (Blackman &
 * Vigna) seeded through splitmix64.  State is passed by pointer; there is
 * no global generator, so the same seed always gives the same stream.
 */
#include <math.h>

#include "llrnn.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void llr_rng_seed(llr_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t llr_rng_u64(llr_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double llr_rng_uniform(llr_rng *r)
{
	return (llr_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t llr_rng_below(llr_rng *r, uint64_t n)
{
	LLR_ASSERT(n > 0);
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = llr_rng_u64(r);
	while (x >= limit);
	return x % n;
}

double llr_rng_normal(llr_rng *r)
{
	double u1 = llr_rng_uniform(r), u2 = llr_rng_uniform(r);
	return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

void llr_rng_shuffle_i32(llr_rng *r, int32_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, i);
		int32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}
