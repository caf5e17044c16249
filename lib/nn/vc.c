/*
 * vc.c - the variable-computation recurrent layers (VCRNN, VCGRU; Jernite,
 * thesis section 2.4, and Jernite et al. 2017): the scheduler, the mask and
 * the loop over steps and streams, forward and back-propagation through
 * time.  The cells' own rows are vcrnn.c and vcgru.c.
 *
 * At step t, for a stream with input x_t (Din) and state h_{t-1} (D = H):
 *   m_t    = sigmoid(u . [x_t; h_{t-1}] + b)                 (the scheduler)
 *   e_t,i  = thr_eps(sigmoid(lambda (m_t D - i))),  i = 1..D  (the mask)
 *   thr_eps(s) = 0 if s < eps, 1 if s > 1 - eps, s otherwise
 *   h_t    = e_t * g_t + (1 - e_t) * h_{t-1}
 * with g_t the cell's output (vcrnn.c: tanh(x_t wx + h_{t-1} wh + bx);
 * vcgru.c: a GRU step).  The mask is non-increasing in i, so the
 * dimensions it keeps (e_t,i > 0) are the leading k_t, about m_t D +
 * ln((1 - eps) / eps) / lambda of them; the others are copied from
 * h_{t-1} bit for bit.  Sparse compute: g_t is computed on the leading
 * k_t dimensions only, one BLAS call per product on the leading block of
 * the weights (one row: a GEMV), forward and backward; io->macs counts
 * the multiply-adds done (the scheduler's dot products included).
 * dLoss/dm_t from above (the L1 penalty on m_t) comes in through dm.
 * Not here: the penalty itself, the schedule of lambda, embeddings.
 */
#include <string.h>

#include "nn.h"

static float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* The mask of one row: e[0..k) written, k returned. */
static int vc_mask(const llr_vc_io *io, float m, float *e)
{
	int H = io->H;
	float lam = io->lambda, eps = io->eps, mD = m * (float)H;
	for (int j = 0; j < H; j++) {
		float s = sigm(lam * (mD - (float)(j + 1)));
		if (s < eps || s <= 0.0f)
			return j;
		e[j] = s > 1.0f - eps ? 1.0f : s;
	}
	return H;
}

/* u . [x; hp] + b, hp NULL: zeros. */
static float sched_in(const llr_vc_io *io, const float *x, const float *hp)
{
	double s = io->ub[0];
	for (int i = 0; i < io->Din; i++)
		s += (double)io->u[i] * x[i];
	for (int j = 0; hp && j < io->H; j++)
		s += (double)io->u[io->Din + j] * hp[j];
	return (float)s;
}

/* The state row before step t of stream b: NULL for zeros. */
static const float *prev_row(const llr_vc_io *io, int t, int b)
{
	if (t)
		return io->h + ((size_t)(t - 1) * io->B + (size_t)b) * io->H;
	return io->h0 ? io->h0 + (size_t)b * io->H : NULL;
}

static void row_forward(llr_vc_io *io, size_t n, const float *x, const float *hp)
{
	int H = io->H, G = io->cell;
	float m = sigm(sched_in(io, x, hp));
	float *e = io->e + n * H, *g = io->g + n * H, *h = io->h + n * H;
	int k = vc_mask(io, m, e);
	io->m[n] = m;
	io->k[n] = k;
	if (io->cell == LLR_VC_GRU)
		llr_vcgru_row_forward(io, k, x, hp, io->act + n * G * H, io->cn + n * H, g);
	else
		llr_vcrnn_row_forward(io, k, x, hp, io->act + n * G * H, g);
	for (int j = 0; j < k; j++)
		h[j] = e[j] * g[j] + (1.0f - e[j]) * (hp ? hp[j] : 0.0f);
	if (hp)
		memcpy(h + k, hp + k, (size_t)(H - k) * sizeof *h);
	else
		memset(h + k, 0, (size_t)(H - k) * sizeof *h);
	io->macs += (uint64_t)(io->Din + (hp ? H : 0)) * (uint64_t)(1 + G * k);
}

void llr_vc_forward(llr_vc_io *io, const float *X)
{
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = 0; t < io->T; t++)
		for (int b = 0; b < io->B; b++) {
			size_t n = (size_t)t * io->B + (size_t)b;
			row_forward(io, n, X + n * io->Din, prev_row(io, t, b));
		}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

void llr_vc_lead_backward(int n, int c, const float *in, const float *w, int ld, const float *dout, float *dw, float *din)
{
	if (c <= 0)
		return;
	llr_gemm(1, 0, n, c, 1, 1.0f, in, n, dout, c, 1.0f, dw, ld);
	if (din)
		llr_gemm(0, 1, 1, n, c, 1.0f, dout, c, w, ld, 1.0f, din, n);
}

/* One row: dhr = dLoss/dh_t (H), dmr = dLoss/dm_t from above; dx (Din or
 * NULL) and dhp (H, when hp) accumulate. */
static void row_backward(llr_vc_io *io, size_t n, const float *x, const float *hp, const float *dhr, float dmr, float *dx, float *dhp, const llr_vc_grad *gr)
{
	int H = io->H, G = io->cell, Din = io->Din, k = io->k[n];
	const float *e = io->e + n * H, *g = io->g + n * H;
	float *dg = io->work, lh = io->lambda * (float)H;
	for (int j = 0; j < k; j++) {
		float hpj = hp ? hp[j] : 0.0f;
		dg[j] = dhr[j] * e[j];
		dmr += dhr[j] * (g[j] - hpj) * lh * e[j] * (1.0f - e[j]);
	}
	if (hp) {
		for (int j = 0; j < k; j++)
			dhp[j] += dhr[j] * (1.0f - e[j]);
		for (int j = k; j < H; j++)
			dhp[j] += dhr[j];
	}
	if (io->cell == LLR_VC_GRU)
		llr_vcgru_row_backward(io, k, x, hp, io->act + n * G * H, io->cn + n * H, dg, dx, dhp, gr);
	else
		llr_vcrnn_row_backward(io, k, x, hp, io->act + n * G * H, dg, dx, dhp, gr);
	float m = io->m[n], ds = dmr * m * (1.0f - m);
	gr->ub[0] += ds;
	for (int i = 0; i < Din; i++) {
		gr->u[i] += ds * x[i];
		if (dx)
			dx[i] += ds * io->u[i];
	}
	for (int j = 0; hp && j < H; j++) {
		gr->u[Din + j] += ds * hp[j];
		dhp[j] += ds * io->u[Din + j];
	}
	io->macs += 2 * (uint64_t)(Din + (hp ? H : 0)) * (uint64_t)(1 + G * k);
}

void llr_vc_backward(llr_vc_io *io, const float *X, float *dh, float *dm, float *dX, float *dh0, const llr_vc_grad *g)
{
	int B = io->B, H = io->H, Din = io->Din;
	size_t N = (size_t)io->T * B;
	float *spare = io->work + H;
	if (dX)
		memset(dX, 0, N * Din * sizeof *dX);
	if (dh0)
		memset(dh0, 0, (size_t)B * H * sizeof *dh0);
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = io->T - 1; t >= 0; t--)
		for (int b = 0; b < B; b++) {
			size_t n = (size_t)t * B + (size_t)b;
			const float *hp = prev_row(io, t, b);
			float *dhp = NULL;
			if (t)
				dhp = dh + (n - (size_t)B) * H;
			else if (hp && dh0)
				dhp = dh0 + (size_t)b * H;
			else if (hp)
				dhp = memset(spare, 0, (size_t)H * sizeof *spare);
			row_backward(io, n, X + n * Din, hp, dh + n * H, dm ? dm[n] : 0.0f, dX ? dX + n * Din : NULL, dhp, g);
		}
	if (threads > 1)
		llr_blas_set_threads(threads);
}
