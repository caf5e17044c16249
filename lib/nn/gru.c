/*
 * gru.c - one GRU layer over packed sequences of different lengths,
 * forward and back-propagation through time (the recurrent sentence
 * encoders of sentenc.c).
 *
 * Gate order r, z, n as PyTorch's nn.GRU, with its two biases:
 *   a_t = x_t wx + bx,  c_t = h_{t-1} wh + bh      (3H each: r, z, n)
 *   r = sigmoid(a_r + c_r),  z = sigmoid(a_z + c_z)
 *   n = tanh(a_n + r * c_n),  h_t = (1 - z) * n + z * h_{t-1},  h_{-1} = 0
 * The sequences are sorted longest first and packed step after step: step
 * t holds the rows[t] sequences still running, the first rows of step
 * t-1.  The input projection of all steps is one GEMM, the recurrence one
 * GEMM per step (on one BLAS thread, as lstm.c), and the weight gradients
 * of the input side one GEMM each.  Not here: embedding, pooling, the
 * backward direction (sentenc.c reverses the sequences).
 */
#include <math.h>
#include <string.h>

#include "nn.h"

static size_t total_rows(const llr_gru_io *io)
{
	size_t N = 0;
	for (int t = 0; t < io->T; t++)
		N += (size_t)io->rows[t];
	return N;
}

static void add_bias(float *z, const float *b, size_t rows, int G)
{
	for (size_t r = 0; r < rows; r++)
		for (int j = 0; j < G; j++)
			z[r * G + j] += b[j];
}

static inline float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

LLR_CLONES LLR_VECTORIZE void llr_gru_forward(const llr_gru_io *io, const float *X)
{
	int T = io->T, Din = io->Din, H = io->H, G = 3 * H;
	size_t N = total_rows(io);
	if (N == 0)
		return;
	llr_gemm(0, 0, (int)N, G, Din, 1.0f, X, Din, io->wx, G, 0.0f, io->a, G);
	add_bias(io->a, io->bx, N, G);

	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	size_t off = 0, prev = 0;
	for (int t = 0; t < T; prev = off, off += (size_t)io->rows[t], t++) {
		int R = io->rows[t];
		float *c = io->c + off * G;
		if (t) {
			llr_gemm(0, 0, R, G, H, 1.0f, io->h + prev * H, H, io->wh, G, 0.0f, c, G);
			add_bias(c, io->bh, (size_t)R, G);
		} else {
			for (int b = 0; b < R; b++)
				memcpy(c + (size_t)b * G, io->bh, (size_t)G * sizeof *c);
		}
		for (int b = 0; b < R; b++) {
			const float *ab = io->a + (off + b) * G, *cb = c + (size_t)b * G;
			float *g = io->g + (off + b) * G, *h = io->h + (off + b) * H;
			const float *hp = t ? io->h + (prev + b) * H : NULL;
			for (int j = 0; j < H; j++) {
				float r = sigm(ab[j] + cb[j]);
				float z = sigm(ab[H + j] + cb[H + j]);
				float n = tanhf(ab[2 * H + j] + r * cb[2 * H + j]);
				g[j] = r;
				g[H + j] = z;
				g[2 * H + j] = n;
				h[j] = (1.0f - z) * n + (hp ? z * hp[j] : 0.0f);
			}
		}
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

LLR_CLONES LLR_VECTORIZE void llr_gru_backward(const llr_gru_io *io, const float *X, float *dh, float *da, float *dc, float *dX, float *dwx, float *dwh, float *dbx, float *dbh)
{
	int T = io->T, Din = io->Din, H = io->H, G = 3 * H;
	size_t N = total_rows(io);
	if (N == 0)
		return;
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	size_t off = N;
	for (int t = T - 1; t >= 0; t--) {
		int R = io->rows[t];
		off -= (size_t)R;
		size_t prev = t ? off - (size_t)io->rows[t - 1] : 0;
		for (int b = 0; b < R; b++) {
			const float *g = io->g + (off + b) * G, *cb = io->c + (off + b) * G;
			const float *dhb = dh + (off + b) * H;
			const float *hp = t ? io->h + (prev + b) * H : NULL;
			float *dab = da + (off + b) * G, *dcb = dc + (size_t)b * G;
			float *dhp = t ? dh + (prev + b) * H : NULL;
			for (int j = 0; j < H; j++) {
				float r = g[j], z = g[H + j], n = g[2 * H + j];
				float hpj = hp ? hp[j] : 0.0f;
				float dn = dhb[j] * (1.0f - z) * (1.0f - n * n);
				float dz = dhb[j] * (hpj - n) * z * (1.0f - z);
				float dr = dn * cb[2 * H + j] * r * (1.0f - r);
				dab[j] = dr;
				dab[H + j] = dz;
				dab[2 * H + j] = dn;
				dcb[j] = dr;
				dcb[H + j] = dz;
				dcb[2 * H + j] = dn * r;
				if (dhp)
					dhp[j] += dhb[j] * z;
			}
		}
		for (int b = 0; b < R; b++)
			for (int j = 0; j < G; j++)
				dbh[j] += dc[(size_t)b * G + j];
		if (t) {
			llr_gemm(0, 1, R, H, G, 1.0f, dc, G, io->wh, G, 1.0f, dh + prev * H, H);
			llr_gemm(1, 0, H, G, R, 1.0f, io->h + prev * H, H, dc, G, 1.0f, dwh, G);
		}
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
	llr_gemm(1, 0, Din, G, (int)N, 1.0f, X, Din, da, G, 1.0f, dwx, G);
	for (size_t n = 0; n < N; n++)
		for (int j = 0; j < G; j++)
			dbx[j] += da[n * G + j];
	if (dX)
		llr_gemm(0, 1, (int)N, Din, G, 1.0f, da, G, io->wx, G, 0.0f, dX, Din);
}
