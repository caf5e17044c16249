/*
 * dropout.c - inverted dropout's forward pass, shared by the networks
 * that train with it (net.c's LSTM layers, ffnet.c, encdec.c): a mask of
 * 0 (probability p) and 1 / (1 - p) drawn from the caller's generator,
 * one draw per component in order, so scoring needs no rescaling.  The
 * backward pass is the caller's product with the mask.
 */
#include "nn.h"

void llr_dropout(const float *x, float *y, float *mask, size_t n, float p, llr_rng *rng)
{
	float keep = 1.0f / (1.0f - p);
	for (size_t k = 0; k < n; k++) {
		mask[k] = llr_rng_uniform(rng) < p ? 0.0f : keep;
		y[k] = x[k] * mask[k];
	}
}
