/*
 * vcrnn.c - the VCRNN's cell (the Elman cell of vc.c) over a step's rows,
 * each on its leading k dimensions:
 *   g_j = tanh(x_t wx[:, j] + h_{t-1} wh[:, j] + bx_j),   j < k
 * wx (Din x H), wh (H x H), bx (H): G = 1, so the leading k dimensions
 * are the leading k columns.  Given the products a = x_t wx and c =
 * h_{t-1} wh of the step (vc.c's staircase of GEMMs), forward adds the
 * bias and the tanh; backward writes the gradients of a and c (the same)
 * back into their blocks for vc.c.  act keeps g.  The mask, the scheduler,
 * the products and the loop over steps are vc.c's.
 */
#include "nn.h"

void llr_vcrnn_step_forward(const llr_vc_io *io, const llr_vc_step *s)
{
	int H = io->H;
	for (int r = 0; r < s->R; r++) {
		size_t n = (size_t)s->row[r];
		const float *a = s->a + (size_t)r * H, *c = s->c + (size_t)r * H;
		float *act = io->act + n * H, *g = io->g + n * H;
		for (int j = 0; j < s->k[r]; j++) {
			act[j] = tanhf(a[j] + (s->hp ? c[j] : 0.0f) + io->bx[j]);
			g[j] = act[j];
		}
	}
}

void llr_vcrnn_step_backward(const llr_vc_io *io, const llr_vc_step *s, const float *dg, const llr_vc_grad *gr)
{
	int H = io->H;
	for (int r = 0; r < s->R; r++) {
		const float *act = io->act + (size_t)s->row[r] * H, *d = dg + (size_t)r * H;
		float *da = s->a + (size_t)r * H, *dc = s->c + (size_t)r * H;
		for (int j = 0; j < s->k[r]; j++) {
			da[j] = dc[j] = d[j] * (1.0f - act[j] * act[j]);
			gr->bx[j] += da[j];
		}
	}
}
