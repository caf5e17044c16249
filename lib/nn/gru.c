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
 * t-1.
 *
 * Where the time goes (issue 17's speed bar): the input projection of all
 * steps is one GEMM over the N packed rows, with bx and the r, z parts of
 * bh added to it once, so a step adds no bias but c_n's; the recurrence
 * is one GEMM per step (on one BLAS thread, as lstm.c); the gates of a
 * step are activated in two vectorised passes (llr_vexp over the step's
 * r and z block, then over its n block: g keeps each step's R x 2H block
 * of r, z before its R x H block of n).  Backward, only dh_{t-1} needs a
 * GEMM per step: dc of every step is kept (N x 3H) and the recurrent
 * weights' gradient is one GEMM over all steps after the loop, the
 * previous states gathered into dh's space (free by then).  Not here:
 * embedding, pooling, the backward direction (sentenc.c reverses the
 * sequences).
 */
#include <string.h>

#include "nn.h"

static size_t total_rows(const llr_gru_io *io)
{
	size_t N = 0;
	for (int t = 0; t < io->T; t++)
		N += (size_t)io->rows[t];
	return N;
}

/* a += bx, and bh for the r and z gates (c_r, c_z carry no bias). */
LLR_CLONES LLR_VECTORIZE static void add_biases(float *a, const float *bx, const float *bh, size_t rows, int H)
{
	int G = 3 * H;
	for (size_t r = 0; r < rows; r++) {
		float *z = a + r * G;
		for (int j = 0; j < 2 * H; j++)
			z[j] += bx[j] + bh[j];
		for (int j = 2 * H; j < G; j++)
			z[j] += bx[j];
	}
}

/* One step's gates and state, R rows: a, c (h_{t-1} wh, not read at t =
 * 0, when hp is NULL and h_{t-1} = 0).  Writes the step's g block (R x 2H
 * of r, z, then R x H of n), c_n with its bias back into c's n columns,
 * and h. */
LLR_CLONES LLR_VECTORIZE static void step_gates(const llr_gru_io *io, int R, const float *a, float *c, const float *hp, float *g, float *h)
{
	int H = io->H, G = 3 * H;
	const float *bhn = io->bh + 2 * H;
	float *rz = g, *nn = g + (size_t)R * 2 * H;
	for (int b = 0; b < R; b++) {
		const float *ab = a + (size_t)b * G;
		float *e = rz + (size_t)b * 2 * H;
		if (hp) {
			const float *cb = c + (size_t)b * G;
			for (int j = 0; j < 2 * H; j++)
				e[j] = -(ab[j] + cb[j]);
		} else {
			for (int j = 0; j < 2 * H; j++)
				e[j] = -ab[j];
		}
	}
	llr_vexp(rz, rz, (size_t)R * 2 * H);
	for (size_t k = 0; k < (size_t)R * 2 * H; k++)
		rz[k] = 1.0f / (1.0f + rz[k]);
	for (int b = 0; b < R; b++) {
		const float *ab = a + (size_t)b * G + 2 * H, *r = rz + (size_t)b * 2 * H;
		float *cn = c + (size_t)b * G + 2 * H, *e = nn + (size_t)b * H;
		if (hp) {
			for (int j = 0; j < H; j++)
				cn[j] += bhn[j];
		} else {
			for (int j = 0; j < H; j++)
				cn[j] = bhn[j];
		}
		for (int j = 0; j < H; j++)
			e[j] = 2.0f * (ab[j] + r[j] * cn[j]);
	}
	/* tanh(x) = 1 - 2 / (1 + exp(2x)) */
	llr_vexp(nn, nn, (size_t)R * H);
	for (size_t k = 0; k < (size_t)R * H; k++)
		nn[k] = 1.0f - 2.0f / (1.0f + nn[k]);
	for (int b = 0; b < R; b++) {
		const float *z = rz + (size_t)b * 2 * H + H, *n = nn + (size_t)b * H;
		float *hb = h + (size_t)b * H;
		if (hp) {
			const float *hpb = hp + (size_t)b * H;
			for (int j = 0; j < H; j++)
				hb[j] = (1.0f - z[j]) * n[j] + z[j] * hpb[j];
		} else {
			for (int j = 0; j < H; j++)
				hb[j] = (1.0f - z[j]) * n[j];
		}
	}
}

void llr_gru_forward(const llr_gru_io *io, const float *X)
{
	int T = io->T, Din = io->Din, H = io->H, G = 3 * H;
	size_t N = total_rows(io);
	if (N == 0)
		return;
	llr_gemm(0, 0, (int)N, G, Din, 1.0f, X, Din, io->wx, G, 0.0f, io->a, G);
	add_biases(io->a, io->bx, io->bh, N, H);

	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	size_t off = 0, prev = 0;
	for (int t = 0; t < T; prev = off, off += (size_t)io->rows[t], t++) {
		int R = io->rows[t];
		float *c = io->c + off * G;
		const float *hp = t ? io->h + prev * H : NULL;
		if (hp)
			llr_gemm(0, 0, R, G, H, 1.0f, hp, H, io->wh, G, 0.0f, c, G);
		step_gates(io, R, io->a + off * G, c, hp, io->g + off * G, io->h + off * H);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

/* One row's gate gradients: dh in; da = [dr, dz, dn], dc = [dr, dz, dn r]
 * out; dhp += dh z when hp (t > 0).  Separate rows of separate arrays, so
 * restrict holds and the loop vectorises. */
LLR_CLONES LLR_VECTORIZE static void row_backward(int H, const float *restrict r, const float *restrict z, const float *restrict n, const float *restrict cn, const float *restrict hp, const float *restrict dh, float *restrict dhp, float *restrict da, float *restrict dc)
{
	for (int j = 0; j < H; j++) {
		float hpj = hp ? hp[j] : 0.0f;
		float dn = dh[j] * (1.0f - z[j]) * (1.0f - n[j] * n[j]);
		float dz = dh[j] * (hpj - n[j]) * z[j] * (1.0f - z[j]);
		float dr = dn * cn[j] * r[j] * (1.0f - r[j]);
		da[j] = dr;
		da[H + j] = dz;
		da[2 * H + j] = dn;
		dc[j] = dr;
		dc[H + j] = dz;
		dc[2 * H + j] = dn * r[j];
	}
	if (hp)
		for (int j = 0; j < H; j++)
			dhp[j] += dh[j] * z[j];
}

/* One step's gate gradients, R rows (g's block of the step: R x 2H of r,
 * z, then R x H of n). */
static void step_backward(const llr_gru_io *io, int R, const float *g, const float *c, const float *hp, const float *dh, float *dhp, float *da, float *dc)
{
	int H = io->H, G = 3 * H;
	const float *rz = g, *nn = g + (size_t)R * 2 * H;
	for (int b = 0; b < R; b++) {
		const float *r = rz + (size_t)b * 2 * H;
		row_backward(H, r, r + H, nn + (size_t)b * H, c + (size_t)b * G + 2 * H, hp ? hp + (size_t)b * H : NULL,
		             dh + (size_t)b * H, hp ? dhp + (size_t)b * H : NULL, da + (size_t)b * G, dc + (size_t)b * G);
	}
}

/* s[G] += the column sums of m (rows x G). */
LLR_CLONES LLR_VECTORIZE static void add_colsums(float *s, const float *m, size_t rows, int G)
{
	for (size_t r = 0; r < rows; r++)
		for (int j = 0; j < G; j++)
			s[j] += m[r * G + j];
}

void llr_gru_backward(const llr_gru_io *io, const float *X, float *dh, float *da, float *dc, float *dX, float *dwx, float *dwh, float *dbx, float *dbh)
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
		const float *hp = t ? io->h + prev * H : NULL;
		step_backward(io, R, io->g + off * G, io->c + off * G, hp, dh + off * H, dh + prev * H, da + off * G, dc + off * G);
		if (t)
			llr_gemm(0, 1, R, H, G, 1.0f, dc + off * G, G, io->wh, G, 1.0f, dh + prev * H, H);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
	/* dwh = sum over t >= 1 of h_{t-1}^T dc_t: the previous states of the
	 * rows of steps 1.. gathered, in packed order, into dh's space */
	size_t R0 = (size_t)io->rows[0], p = 0;
	off = R0;
	for (int t = 1; t < T; off += (size_t)io->rows[t], t++) {
		size_t prev = off - (size_t)io->rows[t - 1];
		memcpy(dh + p * H, io->h + prev * H, (size_t)io->rows[t] * H * sizeof *dh);
		p += (size_t)io->rows[t];
	}
	if (p)
		llr_gemm(1, 0, H, G, (int)p, 1.0f, dh, H, dc + R0 * G, G, 1.0f, dwh, G);
	add_colsums(dbh, dc, N, G);
	llr_gemm(1, 0, Din, G, (int)N, 1.0f, X, Din, da, G, 1.0f, dwx, G);
	add_colsums(dbx, da, N, G);
	if (dX)
		llr_gemm(0, 1, (int)N, Din, G, 1.0f, da, G, io->wx, G, 0.0f, dX, Din);
}
