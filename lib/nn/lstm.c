/*
 * lstm.c - one LSTM layer over a time-major minibatch, forward and
 * back-propagation through time.
 *
 * The input projection x_t wx of all T steps is one GEMM (N x Din times
 * Din x 4H); the recurrence h_{t-1} wh is one GEMM per step across the B
 * streams; in the backward pass the weight gradients are again one GEMM
 * each over all steps.  The per-step GEMMs are small (B x H times H x 4H)
 * and run on one BLAS thread: waking and joining the other threads at
 * every step costs more than it saves, and far more on a loaded machine
 * where they spin or are descheduled; the big GEMMs keep every thread.
 * In the forward pass the streams may end at different steps (io->rows,
 * scoring): step t then holds only the rows[t] streams still alive, the
 * first ones of step t-1, packed one step after the other without padding.
 * Gate order i, f, o, g (nn.h).  Not here: stacking,
 * dropout and initialisation (net.c).
 */
#include <string.h>

#include "nn.h"

/* z + b (rows of 4H) -> activated gates in place: sigmoid on the first 3H
 * columns of each row, tanh on the last H. */
LLR_CLONES LLR_VECTORIZE static void gates_activate(float *z, const float *b, int rows, int H)
{
	int G = 4 * H;
	for (int r = 0; r < rows; r++) {
		float *zr = z + (size_t)r * G;
		for (int j = 0; j < 3 * H; j++)
			zr[j] = -(zr[j] + b[j]);
		for (int j = 3 * H; j < G; j++)
			zr[j] = 2.0f * (zr[j] + b[j]);
	}
	llr_vexp(z, z, (size_t)rows * G);
	for (int r = 0; r < rows; r++) {
		float *zr = z + (size_t)r * G;
		for (int j = 0; j < 3 * H; j++)
			zr[j] = 1.0f / (1.0f + zr[j]);
		for (int j = 3 * H; j < G; j++)
			zr[j] = 1.0f - 2.0f / (1.0f + zr[j]);
	}
}

LLR_CLONES LLR_VECTORIZE void llr_lstm_forward(const llr_lstm_io *io, const float *X)
{
	int T = io->T, B = io->B, Din = io->Din, H = io->H, G = 4 * H;
	size_t N = 0;
	LLR_ASSERT(!io->rows || (!io->h0 && !io->c0)); /* packed rows start from zero */
	for (int t = 0; t < T; t++)
		N += (size_t)(io->rows ? io->rows[t] : B);

	llr_gemm(0, 0, (int)N, G, Din, 1.0f, X, Din, io->wx, G, 0.0f, io->act, G);

	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	size_t off = 0, prev = 0; /* first row of step t and of step t-1 */
	for (int t = 0; t < T; prev = off, off += (size_t)(io->rows ? io->rows[t] : B), t++) {
		int Bt = io->rows ? io->rows[t] : B;
		size_t BH = (size_t)Bt * H;
		float *z = io->act + off * G;
		const float *hp = t ? io->h + prev * H : io->h0;
		const float *cp = t ? io->c + prev * H : io->c0;
		float *ct = io->c + off * H, *tct = io->tc + off * H, *ht = io->h + off * H;
		if (hp)
			llr_gemm(0, 0, Bt, G, H, 1.0f, hp, H, io->wh, G, 1.0f, z, G);
		gates_activate(z, io->b, Bt, H);
		for (int b = 0; b < Bt; b++) {
			const float *zi = z + (size_t)b * G, *zf = zi + H, *zg = zi + 3 * H;
			float *c = ct + (size_t)b * H, *tc = tct + (size_t)b * H;
			if (cp) {
				const float *cprev = cp + (size_t)b * H;
				for (int j = 0; j < H; j++)
					c[j] = zf[j] * cprev[j] + zi[j] * zg[j];
			} else {
				for (int j = 0; j < H; j++)
					c[j] = zi[j] * zg[j];
			}
			for (int j = 0; j < H; j++)
				tc[j] = 2.0f * c[j];
		}
		/* tanh(c) = 1 - 2 / (1 + exp(2c)) */
		llr_vexp(tct, tct, BH);
		for (size_t k = 0; k < BH; k++)
			tct[k] = 1.0f - 2.0f / (1.0f + tct[k]);
		for (int b = 0; b < Bt; b++) {
			const float *zo = z + (size_t)b * G + 2 * H;
			const float *tc = tct + (size_t)b * H;
			float *h = ht + (size_t)b * H;
			for (int j = 0; j < H; j++)
				h[j] = zo[j] * tc[j];
		}
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

LLR_CLONES LLR_VECTORIZE void llr_lstm_backward(const llr_lstm_io *io, const float *X, float *dh, float *dz, float *dc, float *dX, float *dwx, float *dwh, float *db)
{
	int T = io->T, B = io->B, Din = io->Din, H = io->H, G = 4 * H;
	size_t N = (size_t)T * B, BH = (size_t)B * H;

	LLR_ASSERT(!io->rows);
	memset(dc, 0, BH * sizeof *dc);
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = T - 1; t >= 0; t--) {
		const float *cp = t ? io->c + (t - 1) * BH : io->c0;
		for (int b = 0; b < B; b++) {
			size_t r = (size_t)t * B + b;
			const float *a = io->act + r * G;
			const float *ai = a, *af = a + H, *ao = a + 2 * H, *ag = a + 3 * H;
			const float *tc = io->tc + r * H;
			const float *dht = dh + r * H;
			float *d = dz + r * G;
			float *di = d, *df = d + H, *dO = d + 2 * H, *dg = d + 3 * H;
			float *dcb = dc + (size_t)b * H;
			const float *cprev = cp ? cp + (size_t)b * H : NULL;
			for (int j = 0; j < H; j++) {
				float dcv = dcb[j] + dht[j] * ao[j] * (1.0f - tc[j] * tc[j]);
				float cpv = cprev ? cprev[j] : 0.0f;
				di[j] = dcv * ag[j] * ai[j] * (1.0f - ai[j]);
				df[j] = dcv * cpv * af[j] * (1.0f - af[j]);
				dO[j] = dht[j] * tc[j] * ao[j] * (1.0f - ao[j]);
				dg[j] = dcv * ai[j] * (1.0f - ag[j] * ag[j]);
				dcb[j] = dcv * af[j];
			}
		}
		if (t > 0)
			llr_gemm(0, 1, B, H, G, 1.0f, dz + (size_t)t * B * G, G, io->wh, G, 1.0f, dh + (t - 1) * BH, H);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);

	llr_gemm(1, 0, Din, G, (int)N, 1.0f, X, Din, dz, G, 1.0f, dwx, G);
	if (T > 1)
		llr_gemm(1, 0, H, G, (int)((size_t)(T - 1) * B), 1.0f, io->h, H, dz + BH * 4, G, 1.0f, dwh, G);
	if (io->h0)
		llr_gemm(1, 0, H, G, B, 1.0f, io->h0, H, dz, G, 1.0f, dwh, G);
	for (size_t n = 0; n < N; n++) {
		const float *d = dz + n * G;
		for (int j = 0; j < G; j++)
			db[j] += d[j];
	}
	if (dX)
		llr_gemm(0, 1, (int)N, Din, G, 1.0f, dz, G, io->wx, G, 0.0f, dX, Din);
}
