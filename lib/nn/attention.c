/*
 * attention.c - the attention of a decoder step over an encoder's memory
 * (Neubig's NMT tutorial, section 8; Luong et al. 2015 for the dot and
 * bilinear scores, Bahdanau et al. 2015 for the MLP), forward and
 * backward, for B queries at once:
 *
 *   dot       e_bj = q_b . m_jb
 *   bilinear  e_bj = q_b . (W m_jb)                  W: H x C
 *   mlp       e_bj = v . tanh(q_b Wq + m_jb Wk + c)  Wq: H x A, Wk: C x A
 *   alpha_b   = softmax over j < len_b of e_b
 *   ctx_b     = sum_j alpha_bj m_jb
 *
 * The parts of the scores that depend on the memory alone, the keys
 * k_jb = W m_jb (bilinear) or m_jb Wk + c (MLP), are computed once per
 * source batch with one GEMM (llr_attn_keys), and their gradient goes back
 * through one GEMM after the last decoder step (llr_attn_keys_backward);
 * a step then costs O(B S C) (plus the B x H x A query GEMM for the MLP).
 * Shapes and layouts are in nn.h.  Not here: the decoder that feeds the
 * context back into its input (encdec.c).
 */
#include <math.h>
#include <string.h>

#include "nn.h"

int llr_attn_key_width(const llr_attn *a)
{
	return a->kind == LLR_ATT_BILINEAR ? a->H : a->kind == LLR_ATT_MLP ? a->A
	                                                                   : 0;
}

/* Row of the memory (and keys) for position j of stream b. */
static inline size_t mrow(const llr_attn *a, int j, int b)
{
	return a->shared ? (size_t)j : (size_t)j * a->B + b;
}

static inline int len_of(const llr_attn *a, int b)
{
	return a->len ? a->len[b] : a->S;
}

static int mem_rows(const llr_attn *a)
{
	return a->shared ? a->S : a->S * a->B;
}

void llr_attn_keys(const llr_attn *a)
{
	int R = mem_rows(a);
	if (a->kind == LLR_ATT_BILINEAR) {
		/* K = M W^T: (R x C) (C x H) */
		llr_gemm(0, 1, R, a->H, a->C, 1.0f, a->M, a->C, a->W, a->C, 0.0f, a->K, a->H);
	} else if (a->kind == LLR_ATT_MLP) {
		for (int r = 0; r < R; r++)
			memcpy(a->K + (size_t)r * a->A, a->c, (size_t)a->A * sizeof(float));
		llr_gemm(0, 0, R, a->A, a->C, 1.0f, a->M, a->C, a->Wk, a->A, 1.0f, a->K, a->A);
	}
}

LLR_CLONES LLR_VECTORIZE static float dotf(const float *x, const float *y, int n)
{
	float s = 0.0f;
	for (int i = 0; i < n; i++)
		s += x[i] * y[i];
	return s;
}

LLR_CLONES LLR_VECTORIZE static void axpy(float *y, float a, const float *x, int n)
{
	for (int i = 0; i < n; i++)
		y[i] += a * x[i];
}

/* u = tanh(k + q) (n values), and return v . u. */
LLR_CLONES LLR_VECTORIZE static float mlp_score(const float *k, const float *q, const float *v, float *u, int n)
{
	for (int i = 0; i < n; i++)
		u[i] = 2.0f * (k[i] + q[i]);
	llr_vexp(u, u, (size_t)n);
	float s = 0.0f;
	for (int i = 0; i < n; i++) {
		u[i] = 1.0f - 2.0f / (1.0f + u[i]);
		s += v[i] * u[i];
	}
	return s;
}

void llr_attn_forward(const llr_attn *a, const float *q, int ldq, float *alpha, float *ctx, int ldc, float *Q, float *U)
{
	int B = a->B, S = a->S, C = a->C, A = a->A, KW = llr_attn_key_width(a);
	if (a->kind == LLR_ATT_MLP)
		llr_gemm(0, 0, B, A, a->H, 1.0f, q, ldq, a->W, A, 0.0f, Q, A);
	for (int b = 0; b < B; b++) {
		const float *qb = q + (size_t)b * ldq;
		float *al = alpha + (size_t)b * S, *cx = ctx + (size_t)b * ldc;
		int L = len_of(a, b);
		float mx = -INFINITY;
		for (int j = 0; j < L; j++) {
			size_t r = mrow(a, j, b);
			float e;
			if (a->kind == LLR_ATT_DOT)
				e = dotf(qb, a->M + r * C, C);
			else if (a->kind == LLR_ATT_BILINEAR)
				e = dotf(qb, a->K + r * KW, KW);
			else
				e = mlp_score(a->K + r * KW, Q + (size_t)b * A, a->v, U + ((size_t)b * S + j) * A, A);
			al[j] = e;
			mx = e > mx ? e : mx;
		}
		double z = 0.0;
		for (int j = 0; j < L; j++) {
			al[j] = expf(al[j] - mx);
			z += al[j];
		}
		for (int j = 0; j < L; j++)
			al[j] = (float)(al[j] / z);
		for (int j = L; j < S; j++)
			al[j] = 0.0f;
		memset(cx, 0, (size_t)C * sizeof *cx);
		for (int j = 0; j < L; j++)
			axpy(cx, al[j], a->M + mrow(a, j, b) * C, C);
	}
}

/* Through e = v . u, u = tanh(k + q): g = s v (1 - u^2) is added to dk
 * and dq, s u to dv. */
LLR_CLONES LLR_VECTORIZE static void mlp_back(const float *u, const float *v, float s, float *dk, float *dq, float *dv, int n)
{
	for (int i = 0; i < n; i++) {
		float g = s * v[i] * (1.0f - u[i] * u[i]);
		dk[i] += g;
		dq[i] += g;
		dv[i] += s * u[i];
	}
}

void llr_attn_backward(const llr_attn *a, const float *q, int ldq, const float *alpha, const float *U, const float *dctx, int lddc, float *dq, int lddq, float *dM, float *dK, float *dQ, float *dW, float *dv, float *de)
{
	int B = a->B, S = a->S, C = a->C, A = a->A, KW = llr_attn_key_width(a);
	if (a->kind == LLR_ATT_MLP)
		memset(dQ, 0, (size_t)B * A * sizeof *dQ);
	for (int b = 0; b < B; b++) {
		const float *al = alpha + (size_t)b * S, *dc = dctx + (size_t)b * lddc;
		const float *qb = q + (size_t)b * ldq;
		float *dqb = dq + (size_t)b * lddq, *e = de + (size_t)b * S;
		int L = len_of(a, b);
		/* dalpha_j = dctx . m_j; the values' gradient alpha_j dctx */
		double sum = 0.0;
		for (int j = 0; j < L; j++) {
			size_t r = mrow(a, j, b);
			e[j] = dotf(dc, a->M + r * C, C);
			sum += (double)al[j] * e[j];
			axpy(dM + r * C, al[j], dc, C);
		}
		/* through the softmax: de_j = alpha_j (dalpha_j - sum) */
		for (int j = 0; j < L; j++)
			e[j] = al[j] * (float)((double)e[j] - sum);
		for (int j = 0; j < L; j++) {
			size_t r = mrow(a, j, b);
			if (a->kind == LLR_ATT_DOT) {
				axpy(dqb, e[j], a->M + r * C, C);
				axpy(dM + r * C, e[j], qb, C);
			} else if (a->kind == LLR_ATT_BILINEAR) {
				axpy(dqb, e[j], a->K + r * KW, KW);
				axpy(dK + r * KW, e[j], qb, KW);
			} else {
				mlp_back(U + ((size_t)b * S + j) * A, a->v, e[j], dK + r * KW, dQ + (size_t)b * A, dv, A);
			}
		}
	}
	if (a->kind == LLR_ATT_MLP) {
		/* q Wq: dq += dQ Wq^T, dWq += q^T dQ */
		llr_gemm(0, 1, B, a->H, A, 1.0f, dQ, A, a->W, A, 1.0f, dq, lddq);
		llr_gemm(1, 0, a->H, A, B, 1.0f, q, ldq, dQ, A, 1.0f, dW, A);
	}
}

void llr_attn_keys_backward(const llr_attn *a, const float *dK, float *dM, float *dW, float *dWk, float *dc)
{
	int R = mem_rows(a);
	if (a->kind == LLR_ATT_BILINEAR) {
		/* K = M W^T: dW += dK^T M (H x C), dM += dK W */
		llr_gemm(1, 0, a->H, a->C, R, 1.0f, dK, a->H, a->M, a->C, 1.0f, dW, a->C);
		llr_gemm(0, 0, R, a->C, a->H, 1.0f, dK, a->H, a->W, a->C, 1.0f, dM, a->C);
	} else if (a->kind == LLR_ATT_MLP) {
		/* K = M Wk + c: dWk += M^T dK, dc += column sums, dM += dK Wk^T */
		llr_gemm(1, 0, a->C, a->A, R, 1.0f, a->M, a->C, dK, a->A, 1.0f, dWk, a->A);
		for (int r = 0; r < R; r++)
			axpy(dc, 1.0f, dK + (size_t)r * a->A, a->A);
		llr_gemm(0, 1, R, a->C, a->A, 1.0f, dK, a->A, a->Wk, a->A, 1.0f, dM, a->C);
	}
}
