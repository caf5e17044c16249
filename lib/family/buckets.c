/*
 * buckets.c - length-bucketed batches, shared by the families trained by
 * gradient steps (rnnlm/corpus.c, encdec/train.c): items shuffled,
 * sorted by a length key, cut into batches and the batches shuffled, so
 * that a batch holds items of like length and the epoch still sees them
 * in a new order.
 */
#include "family/family.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int llr_bucket_batches(size_t n, int B, llr_rng *rng, uint32_t (*key)(const void *ctx, int32_t item), const void *ctx,
                       int32_t *idx, size_t *first, size_t *nbatches)
{
	size_t nb = (n + (size_t)B - 1) / (size_t)B;
	int32_t *perm = llr_malloc((n ? n : 1) * sizeof *perm), *bperm = llr_malloc((nb ? nb : 1) * sizeof *bperm);
	uint64_t *k = llr_malloc((n ? n : 1) * sizeof *k);
	int rc = perm && bperm && k ? LLR_OK : LLR_ENOMEM;
	if (rc == LLR_OK) {
		for (size_t i = 0; i < n; i++)
			perm[i] = (int32_t)i;
		if (rng)
			llr_rng_shuffle_i32(rng, perm, n);
		/* stable: the key, then the position in perm */
		for (size_t i = 0; i < n; i++)
			k[i] = (uint64_t)key(ctx, perm[i]) << 32 | (uint64_t)i;
		qsort(k, n, sizeof *k, cmp_u64);
		for (size_t i = 0; i < nb; i++)
			bperm[i] = (int32_t)i;
		if (rng)
			llr_rng_shuffle_i32(rng, bperm, nb);
		size_t at = 0;
		for (size_t i = 0; i < nb; i++) {
			size_t from = (size_t)bperm[i] * (size_t)B, to = LLR_MIN(from + (size_t)B, n);
			first[i] = at;
			for (size_t j = from; j < to; j++)
				idx[at++] = perm[k[j] & 0xffffffff];
		}
		first[nb] = at;
		*nbatches = nb;
	}
	free(k);
	free(bperm);
	free(perm);
	return rc;
}
