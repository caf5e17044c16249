/*
 * embed.c - the input embedding of DESIGN section 1: the embedding of a
 * word is the sum of its input features' embeddings weighted by the
 * feature values (row psi[x] times the F_in x E table), and <s> has a
 * vector of its own.  With one-hot features this is an ordinary lookup
 * table.  Not here: choosing psi (net.c) or building it (features).
 */
#include <string.h>

#include "nn.h"

/* X (N x E): X[n] = sum_{(f,v) in psi row input[n]} v * emb[f]. */
void llr_embed_forward(const llr_csr *psi, const float *emb, const float *bos, int E, const int32_t *input, size_t N, float *X)
{
	for (size_t n = 0; n < N; n++) {
		float *x = X + n * (size_t)E;
		int32_t id = input[n];
		if (id == LLR_BOS_ID) {
			memcpy(x, bos, (size_t)E * sizeof *x);
			continue;
		}
		memset(x, 0, (size_t)E * sizeof *x);
		if (id < 0)
			continue; /* LLR_PAD_IN */
		for (int32_t k = psi->indptr[id]; k < psi->indptr[id + 1]; k++) {
			const float *e = emb + (size_t)psi->indices[k] * E;
			float v = psi->data[k];
			for (int j = 0; j < E; j++)
				x[j] += v * e[j];
		}
	}
}

/* demb (F_in x E) += psi^T dX restricted to the rows used; dbos += dX[n]
 * at <s>. */
void llr_embed_backward(const llr_csr *psi, int E, const int32_t *input, size_t N, const float *dX, float *demb, float *dbos)
{
	for (size_t n = 0; n < N; n++) {
		const float *dx = dX + n * (size_t)E;
		int32_t id = input[n];
		if (id == LLR_BOS_ID) {
			for (int j = 0; j < E; j++)
				dbos[j] += dx[j];
			continue;
		}
		if (id < 0)
			continue;
		for (int32_t k = psi->indptr[id]; k < psi->indptr[id + 1]; k++) {
			float *de = demb + (size_t)psi->indices[k] * E;
			float v = psi->data[k];
			for (int j = 0; j < E; j++)
				de[j] += v * dx[j];
		}
	}
}
