/*
 * vcgru.c - the VCGRU's cell (the GRU cell of vc.c) over a step's rows,
 * each on its leading k dimensions, gru.c's parametrisation (PyTorch's,
 * two biases):
 *   a = x_t wx + bx,  c = h_{t-1} wh + bh                  (r, z, n parts)
 *   r_j = sigmoid(a_rj + c_rj),  z_j = sigmoid(a_zj + c_zj)
 *   n_j = tanh(a_nj + r_j c_nj),  g_j = (1 - z_j) n_j + z_j h_{t-1,j}
 * for j < k.  The 3H columns of wx (Din x 3H), wh (H x 3H), bx and bh are
 * dimension-major (column 3 j + q: gate q = r, z, n of dimension j), so
 * the leading k dimensions are the leading 3k columns.  Given the
 * products x_t wx and h_{t-1} wh of the step (vc.c's staircase of GEMMs),
 * forward computes the gates; backward writes the gradients of a and c
 * back into the products' blocks for vc.c.  act keeps r, z, n in that
 * order; cn keeps c_n.  The mask, the scheduler, the products and the
 * loop over steps are vc.c's.
 */
#include "nn.h"

static float sigm(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

void llr_vcgru_step_forward(const llr_vc_io *io, const llr_vc_step *s)
{
	int H = io->H, G3 = 3 * H;
	const float *bx = io->bx, *bh = io->bh;
	for (int r = 0; r < s->R; r++) {
		size_t n = (size_t)s->row[r];
		const float *a = s->a + (size_t)r * G3, *c = s->c + (size_t)r * G3;
		const float *hp = s->hp ? s->hp + (size_t)r * H : NULL;
		float *act = io->act + n * G3, *cn = io->cn + n * H, *g = io->g + n * H;
		for (int j = 0; j < s->k[r]; j++) {
			int q = 3 * j;
			float cr = hp ? c[q] : 0.0f, cz = hp ? c[q + 1] : 0.0f, cc = hp ? c[q + 2] : 0.0f;
			float rr = sigm(a[q] + bx[q] + cr + bh[q]);
			float z = sigm(a[q + 1] + bx[q + 1] + cz + bh[q + 1]);
			cn[j] = cc + bh[q + 2];
			float nn = tanhf(a[q + 2] + bx[q + 2] + rr * cn[j]);
			act[q] = rr, act[q + 1] = z, act[q + 2] = nn;
			g[j] = (1.0f - z) * nn + z * (hp ? hp[j] : 0.0f);
		}
	}
}

void llr_vcgru_step_backward(const llr_vc_io *io, const llr_vc_step *s, const float *dg, const llr_vc_grad *gr)
{
	int H = io->H, G3 = 3 * H;
	for (int r = 0; r < s->R; r++) {
		size_t n = (size_t)s->row[r];
		const float *act = io->act + n * G3, *cn = io->cn + n * H, *d = dg + (size_t)r * H;
		const float *hp = s->hp ? s->hp + (size_t)r * H : NULL;
		float *da = s->a + (size_t)r * G3, *dc = s->c + (size_t)r * G3;
		for (int j = 0; j < s->k[r]; j++) {
			int q = 3 * j;
			float rr = act[q], z = act[q + 1], nn = act[q + 2];
			float dn = d[j] * (1.0f - z) * (1.0f - nn * nn);
			float dz = d[j] * ((hp ? hp[j] : 0.0f) - nn) * z * (1.0f - z);
			float dr = dn * cn[j] * rr * (1.0f - rr);
			if (hp)
				s->dhp[(size_t)r * H + j] += d[j] * z;
			da[q] = dc[q] = dr;
			da[q + 1] = dc[q + 1] = dz;
			da[q + 2] = dn;
			dc[q + 2] = dn * rr;
			for (int i = q; i < q + 3; i++) {
				gr->bx[i] += da[i];
				gr->bh[i] += dc[i];
			}
		}
	}
}
