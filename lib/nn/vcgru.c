/*
 * vcgru.c - one row of a VCGRU step (the GRU cell of vc.c) over its
 * leading k dimensions, gru.c's parametrisation (PyTorch's, two biases):
 *   a = x_t wx + bx,  c = h_{t-1} wh + bh                  (r, z, n parts)
 *   r_j = sigmoid(a_rj + c_rj),  z_j = sigmoid(a_zj + c_zj)
 *   n_j = tanh(a_nj + r_j c_nj),  g_j = (1 - z_j) n_j + z_j h_{t-1,j}
 * for j < k.  The 3H columns of wx (Din x 3H), wh (H x 3H), bx and bh are
 * dimension-major (column 3 j + q: gate q = r, z, n of dimension j), so
 * the leading k dimensions are the leading 3k columns: one GEMV for a and
 * one for c.  act keeps r, z, n in that order; cn keeps c_n.  The mask,
 * the scheduler and the loop over steps are vc.c's.
 */
#include <string.h>

#include "nn.h"

static float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

void llr_vcgru_row_forward(const llr_vc_io *io, int k, const float *x, const float *hp, float *act, float *cn, float *g)
{
	int H = io->H, c = 3 * k, ld = c > 0 ? c : 1;
	float *ch = io->work + 2 * H;
	const float *bx = io->bx, *bh = io->bh;
	llr_gemm(0, 0, 1, c, io->Din, 1.0f, x, io->Din, io->wx, 3 * H, 0.0f, act, ld);
	if (hp)
		llr_gemm(0, 0, 1, c, H, 1.0f, hp, H, io->wh, 3 * H, 0.0f, ch, ld);
	else
		memset(ch, 0, (size_t)c * sizeof *ch);
	for (int j = 0; j < k; j++) {
		float *a = act + 3 * j, *cc = ch + 3 * j;
		float r = sigm(a[0] + bx[3 * j] + cc[0] + bh[3 * j]);
		float z = sigm(a[1] + bx[3 * j + 1] + cc[1] + bh[3 * j + 1]);
		float cnj = cc[2] + bh[3 * j + 2];
		float n = tanhf(a[2] + bx[3 * j + 2] + r * cnj);
		a[0] = r, a[1] = z, a[2] = n;
		cn[j] = cnj;
		g[j] = (1.0f - z) * n + z * (hp ? hp[j] : 0.0f);
	}
}

void llr_vcgru_row_backward(const llr_vc_io *io, int k, const float *x, const float *hp, const float *act, const float *cn, const float *dg, float *dx, float *dhp, const llr_vc_grad *gr)
{
	int H = io->H;
	float *da = io->work + 2 * H, *dc = da + 3 * H;
	for (int j = 0; j < k; j++) {
		float r = act[3 * j], z = act[3 * j + 1], n = act[3 * j + 2];
		float hpj = hp ? hp[j] : 0.0f;
		float dn = dg[j] * (1.0f - z) * (1.0f - n * n);
		float dz = dg[j] * (hpj - n) * z * (1.0f - z);
		float dr = dn * cn[j] * r * (1.0f - r);
		if (hp)
			dhp[j] += dg[j] * z;
		da[3 * j] = dc[3 * j] = dr;
		da[3 * j + 1] = dc[3 * j + 1] = dz;
		da[3 * j + 2] = dn;
		dc[3 * j + 2] = dn * r;
		for (int q = 0; q < 3; q++) {
			gr->bx[3 * j + q] += da[3 * j + q];
			gr->bh[3 * j + q] += dc[3 * j + q];
		}
	}
	llr_vc_lead_backward(io->Din, 3 * k, x, io->wx, 3 * H, da, gr->wx, dx);
	if (hp)
		llr_vc_lead_backward(H, 3 * k, hp, io->wh, 3 * H, dc, gr->wh, dhp);
}
