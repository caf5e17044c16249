/*
 * netvc.c - the language model's variable-computation layer (issue 52;
 * Jernite's thesis section 2.4): vc.c's VCRNN or VCGRU as the one
 * recurrent layer of net.c, over the net's flat parameter and gradient
 * arrays; and the dense GRU and Elman RNN, the same layer with no
 * scheduler (vc.c then updates every dimension: h_t = g_t).  Here: the layer's workspace (m, k, e and scratch, grown with
 * the batch), its llr_vc_io, the symmetric L1 penalty on the scheduler
 * (dLoss/dm_t = weight sign(m_t - target) at every predicted position,
 * vc.c's dm input) and the multiply-adds counted.  Not here: the
 * equations (vc.c, vcrnn.c, vcgru.c), the tensors' layout (net.c), the
 * schedule of lambda (the training job's).
 */
#include <stdlib.h>
#include <string.h>

#include "netx.h"

#define VC_EPS 0.01f /* the mask's threshold thr_eps */

void llr_netvc_init(llr_netvc *v, int cell, int Din, int H)
{
	memset(v, 0, sizeof *v);
	v->G = cell == LLR_CELL_VCGRU || cell == LLR_CELL_GRU ? LLR_VC_GRU : LLR_VC_RNN;
	v->sched = llr_cell_is_vc(cell);
	v->Din = Din;
	v->H = H;
}

void llr_netvc_free(llr_netvc *v)
{
	free(v->m);
	free(v->dm);
	free(v->e);
	free(v->k);
	free(v->order);
	free(v->work);
	v->m = v->dm = v->e = v->work = NULL;
	v->k = v->order = NULL;
	v->capN = 0;
	v->capB = 0;
}

/* The layer's tensors in a flat array (the parameters or the gradient). */
static llr_vc_grad tensors(const llr_netvc *v, float *a)
{
	return (llr_vc_grad){a + v->o_wx, a + v->o_wh, a + v->o_bx, v->G == LLR_VC_GRU ? a + v->o_bh : NULL, v->sched ? a + v->o_u : NULL,
	                     v->sched ? a + v->o_ub : NULL};
}

/* The io of a pass with the parameters P (read only; NULL: shapes only). */
static llr_vc_io vc_io(llr_netvc *v, const float *P, float lambda, int T, int B)
{
	llr_vc_grad w = P ? tensors(v, (float *)P) : (llr_vc_grad){0};
	return (llr_vc_io){
	    .cell = v->G,
	    .T = T,
	    .B = B,
	    .Din = v->Din,
	    .H = v->H,
	    .lambda = lambda,
	    .eps = VC_EPS,
	    .wx = w.wx,
	    .wh = w.wh,
	    .bx = w.bx,
	    .bh = w.bh,
	    .u = w.u,
	    .ub = w.ub,
	    .m = v->m,
	    .k = v->k,
	    .e = v->e,
	    .work = v->work,
	    .order = v->order,
	};
}

int llr_netvc_ensure(llr_netvc *v, size_t N, int B)
{
	if (N > v->capN) {
		free(v->m);
		free(v->dm);
		free(v->e);
		free(v->k);
		v->capN = 0;
		if (!(v->m = llr_malloc(N * sizeof *v->m)) || !(v->dm = llr_malloc(N * sizeof *v->dm)) ||
		    !(v->e = llr_malloc(N * (size_t)v->H * sizeof *v->e)) || !(v->k = llr_malloc(N * sizeof *v->k)))
			return LLR_ENOMEM;
		v->capN = N;
	}
	if (B > v->capB) {
		llr_vc_io io = vc_io(v, NULL, 1.0f, 1, B);
		free(v->work);
		free(v->order);
		v->capB = 0;
		if (!(v->work = llr_malloc(llr_vc_work_size(&io) * sizeof *v->work)) || !(v->order = llr_malloc(3 * (size_t)B * sizeof *v->order)))
			return LLR_ENOMEM;
		v->capB = B;
	}
	return LLR_OK;
}

void llr_netvc_forward(llr_netvc *v, const float *P, float lambda, int T, int B, const int *rows, const float *h0, const float *X,
                       float *act, float *cn, float *g, float *h)
{
	llr_vc_io io = vc_io(v, P, lambda, T, B);
	io.rows = rows;
	io.h0 = h0;
	io.act = act;
	io.cn = cn;
	io.g = g;
	io.h = h;
	llr_vc_forward(&io, X);
	v->macs += io.macs;
	v->pad += io.pad;
	for (int t = 0; t < T; t++)
		v->pos += (uint64_t)(rows ? rows[t] : B);
}

void llr_netvc_backward(llr_netvc *v, const float *P, float *G, float lambda, int T, int B, const int32_t *tg, const float *X,
                        float *act, float *cn, float *g, float *h, float *dh, float *dX)
{
	llr_vc_io io = vc_io(v, P, lambda, T, B);
	io.act = act;
	io.cn = cn;
	io.g = g;
	io.h = h;
	size_t N = (size_t)T * B;
	for (size_t n = 0; v->sched && n < N; n++) {
		float d = tg[n] < 0 ? 0.0f : v->m[n] - v->target;
		v->dm[n] = d > 0.0f ? v->weight : d < 0.0f ? -v->weight
		                                           : 0.0f;
	}
	llr_vc_grad gr = tensors(v, G);
	llr_vc_backward(&io, X, dh, v->sched ? v->dm : NULL, dX, NULL, &gr);
}
