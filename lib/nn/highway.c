/*
 * highway.c - a highway layer (Srivastava, Greff & Schmidhuber 2015) as
 * the character-aware input uses it between the convolution and the LSTM
 * (Kim et al. 2016, section 2.3; charcnn.h):
 *
 *   g = relu(y Wg + bg),  t = sigmoid(y Wt + bt),  z = t * g + (1 - t) * y
 *
 * Both products are one GEMM of the U x D rows with the D x 2D matrix
 * [Wg | Wt].  Not here: how many layers, their initialisation (bt starts
 * negative, so the layer first carries y through), which are net.c's.
 */
#include <string.h>

#include "charcnn.h"

LLR_CLONES LLR_VECTORIZE void llr_highway_forward(int U, int D, const float *W, const float *b, const float *y, float *gt, float *z)
{
	int D2 = 2 * D;
	llr_gemm(0, 0, U, D2, D, 1.0f, y, D, W, D2, 0.0f, gt, D2);
	for (int u = 0; u < U; u++) {
		float *g = gt + (size_t)u * D2, *t = g + D;
		for (int j = 0; j < D; j++) {
			float a = g[j] + b[j];
			g[j] = a > 0.0f ? a : 0.0f;
			t[j] = -(t[j] + b[D + j]);
		}
		llr_vexp(t, t, (size_t)D);
		const float *yu = y + (size_t)u * D;
		float *zu = z + (size_t)u * D;
		for (int j = 0; j < D; j++) {
			t[j] = 1.0f / (1.0f + t[j]);
			zu[j] = t[j] * g[j] + (1.0f - t[j]) * yu[j];
		}
	}
}

LLR_CLONES LLR_VECTORIZE void llr_highway_backward(int U, int D, const float *W, const float *y, const float *gt, const float *dz, float *dy, float *dW, float *db, float *scratch)
{
	int D2 = 2 * D;
	/* scratch = [d(pre-g) | d(pre-t)]; dy first takes the carry term */
	for (int u = 0; u < U; u++) {
		const float *g = gt + (size_t)u * D2, *t = g + D;
		const float *yu = y + (size_t)u * D, *d = dz + (size_t)u * D;
		float *s = scratch + (size_t)u * D2, *dyu = dy + (size_t)u * D;
		for (int j = 0; j < D; j++) {
			s[j] = g[j] > 0.0f ? d[j] * t[j] : 0.0f;
			s[D + j] = d[j] * (g[j] - yu[j]) * t[j] * (1.0f - t[j]);
			dyu[j] = d[j] * (1.0f - t[j]);
		}
	}
	for (int u = 0; u < U; u++) {
		const float *s = scratch + (size_t)u * D2;
		for (int j = 0; j < D2; j++)
			db[j] += s[j];
	}
	llr_gemm(1, 0, D, D2, U, 1.0f, y, D, scratch, D2, 1.0f, dW, D2);
	llr_gemm(0, 1, U, D, D2, 1.0f, scratch, D2, W, D2, 1.0f, dy, D);
}
