/*
 * vcrnn.c - one row of a VCRNN step (the Elman cell of vc.c) over its
 * leading k dimensions:
 *   g_j = tanh(x_t wx[:, j] + h_{t-1} wh[:, j] + bx_j),   j < k
 * wx (Din x H), wh (H x H), bx (H): G = 1, so the leading k dimensions are
 * the leading k columns, one GEMV each (llr_gemm with one row).  The mask,
 * the scheduler and the loop over steps are vc.c's.
 */
#include "nn.h"

void llr_vcrnn_row_forward(const llr_vc_io *io, int k, const float *x, const float *hp, float *act, float *g)
{
	int H = io->H;
	llr_gemm(0, 0, 1, k, io->Din, 1.0f, x, io->Din, io->wx, H, 0.0f, act, k > 0 ? k : 1);
	if (hp)
		llr_gemm(0, 0, 1, k, H, 1.0f, hp, H, io->wh, H, 1.0f, act, k > 0 ? k : 1);
	for (int j = 0; j < k; j++) {
		act[j] = tanhf(act[j] + io->bx[j]);
		g[j] = act[j];
	}
}

void llr_vcrnn_row_backward(const llr_vc_io *io, int k, const float *x, const float *hp, const float *act, const float *dg, float *dx, float *dhp, const llr_vc_grad *gr)
{
	int H = io->H;
	float *dp = io->work + 2 * H;
	for (int j = 0; j < k; j++) {
		dp[j] = dg[j] * (1.0f - act[j] * act[j]);
		gr->bx[j] += dp[j];
	}
	llr_vc_lead_backward(io->Din, k, x, io->wx, H, dp, gr->wx, dx);
	if (hp)
		llr_vc_lead_backward(H, k, hp, io->wh, H, dp, gr->wh, dhp);
}
