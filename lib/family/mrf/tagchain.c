/*
 * tagchain.c - the MRF tagger's chain (tagger.h): the position scores
 * e_i(t), the exact -log p(y | x) and its gradient by forward-backward,
 * and the Viterbi decoder.  Forward-backward runs in probability space
 * with one scale a position (Rabiner 1989, section V.A):
 *   psi_i(t) = exp(e_i(t) - m_i),  m_i = max_t e_i(t),
 *   E(a, b)  = exp(trans[a][b] - m),  m = max trans,
 *   alpha_1 = psi_1 / c_1,  alpha_i(b) = psi_i(b) sum_a alpha_{i-1}(a) E(a, b) / c_i,
 *   beta_n = 1,  beta_i(a) = sum_b E(a, b) psi_{i+1}(b) beta_{i+1}(b) / c_{i+1},
 * c_i normalising alpha_i, so that log Z = sum_i (log c_i + m_i) + (n-1) m,
 * p(y_i = t) = alpha_i(t) beta_i(t) and
 * p(y_{i-1} = a, y_i = b) = alpha_{i-1}(a) E(a, b) psi_i(b) beta_i(b) / c_i.
 * The gradient of -log p(y | x) is the expected feature counts less the
 * gold ones.  Not here: the features (tagfeat.c), the fit (tagfit.c).
 */
#include "family/mrf/tagger.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The T^2 loops below are most of training's time; -O2's very cheap
 * cost model leaves them scalar (T is rarely a multiple of the vector
 * width), so these two functions ask for GCC's cheap model. */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap")))
#else
#define VECTORISE
#endif

int mrft_ws_reserve(mrft_ws *ws, int32_t T, size_t n)
{
	if (n <= ws->cap && T == ws->T)
		return LLR_OK;
	size_t cap = n > ws->cap ? n + n / 2 + 16 : ws->cap, nt = cap * (size_t)T;
	mrft_ws_free(ws);
	ws->e = llr_malloc(nt * sizeof *ws->e);
	ws->alpha = llr_malloc(nt * sizeof *ws->alpha);
	ws->beta = llr_malloc(nt * sizeof *ws->beta);
	ws->back = llr_malloc(nt * sizeof *ws->back);
	ws->scale = llr_malloc(cap * sizeof *ws->scale);
	ws->E = llr_malloc((size_t)T * (size_t)T * sizeof *ws->E);
	ws->acc = llr_malloc((size_t)T * (size_t)T * sizeof *ws->acc);
	ws->v = llr_malloc((size_t)T * sizeof *ws->v);
	if (!ws->e || !ws->alpha || !ws->beta || !ws->back || !ws->scale || !ws->E || !ws->acc || !ws->v) {
		mrft_ws_free(ws);
		return LLR_ENOMEM;
	}
	ws->cap = cap;
	ws->T = T;
	return LLR_OK;
}

void mrft_ws_free(mrft_ws *ws)
{
	free(ws->e);
	free(ws->alpha);
	free(ws->beta);
	free(ws->back);
	free(ws->scale);
	free(ws->E);
	free(ws->acc);
	free(ws->v);
	*ws = (mrft_ws){0};
}

/* e[i T + t] = e_i(t), start and end included. */
static void position_scores(double *e, int32_t F, int32_t T, const double *w, const mrft_feats *f)
{
	const double *start = w + mrft_trans(F, T) + (size_t)T * T, *end = start + T;
	for (size_t i = 0; i < f->n; i++) {
		double *ei = e + i * (size_t)T;
		for (int32_t t = 0; t < T; t++)
			ei[t] = 0;
		for (size_t k = f->ptr[i]; k < f->ptr[i + 1]; k++) {
			const double *wf = w + (size_t)f->ids[k] * (size_t)T;
			for (int32_t t = 0; t < T; t++)
				ei[t] += wf[t];
		}
	}
	for (int32_t t = 0; t < T; t++) {
		e[t] += start[t];
		e[(f->n - 1) * (size_t)T + t] += end[t];
	}
}

double mrft_score(int32_t F, int32_t T, const double *w, const mrft_feats *f, const int32_t *y)
{
	const double *trans = w + mrft_trans(F, T), *start = trans + (size_t)T * T, *end = start + T;
	double s = start[y[0]] + end[y[f->n - 1]];
	for (size_t i = 0; i < f->n; i++) {
		for (size_t k = f->ptr[i]; k < f->ptr[i + 1]; k++)
			s += w[(size_t)f->ids[k] * (size_t)T + (size_t)y[i]];
		if (i > 0)
			s += trans[(size_t)y[i - 1] * T + (size_t)y[i]];
	}
	return s;
}

/* The forward pass over ws->e: alpha, the scales, and log Z. */
VECTORISE static double forward(mrft_ws *ws, int32_t F, int32_t T, const double *w, size_t n)
{
	const double *trans = w + mrft_trans(F, T);
	const size_t TT = (size_t)T * T;
	double m = trans[0], logz = 0;
	for (size_t k = 1; k < TT; k++)
		m = trans[k] > m ? trans[k] : m;
	for (size_t k = 0; k < TT; k++)
		ws->E[k] = exp(trans[k] - m);
	for (size_t i = 0; i < n; i++) {
		double *e = ws->e + i * (size_t)T, *al = ws->alpha + i * (size_t)T, mi = e[0], c = 0;
		for (int32_t t = 1; t < T; t++)
			mi = e[t] > mi ? e[t] : mi;
		for (int32_t b = 0; b < T; b++)
			al[b] = 0;
		if (i == 0)
			for (int32_t b = 0; b < T; b++)
				al[b] = 1;
		else
			for (int32_t a = 0; a < T; a++) {
				const double pa = al[(long)a - T], *Ea = ws->E + (size_t)a * T;
				for (int32_t b = 0; b < T; b++)
					al[b] += pa * Ea[b];
			}
		for (int32_t b = 0; b < T; b++) {
			e[b] = exp(e[b] - mi); /* e now holds psi */
			al[b] *= e[b];
			c += al[b];
		}
		for (int32_t b = 0; b < T; b++)
			al[b] /= c;
		ws->scale[i] = c;
		logz += log(c) + mi + (i > 0 ? m : 0);
	}
	return logz;
}

double mrft_logz(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f)
{
	position_scores(ws->e, F, T, w, f);
	return forward(ws, F, T, w, f->n);
}

/* The backward pass and the gradient of log Z less the gold counts.
 * With v_i(b) = psi_i(b) beta_i(b) / c_i, beta_{i-1} = E v_i and the
 * pair marginals are alpha_{i-1}(a) v_i(b) E(a, b): the outer products
 * alpha_{i-1} v_i^T are summed in acc, times E once a sentence. */
VECTORISE static void backward(mrft_ws *ws, int32_t F, int32_t T, const mrft_feats *f, const int32_t *y, double *g)
{
	const size_t n = f->n, TT = (size_t)T * T;
	double *gt = g + mrft_trans(F, T), *gs = gt + TT, *ge = gs + T, *v = ws->v, *acc = ws->acc;
	memset(acc, 0, TT * sizeof *acc);
	for (int32_t t = 0; t < T; t++)
		ws->beta[(n - 1) * (size_t)T + t] = 1;
	for (size_t i = n - 1; i > 0; i--) {
		const double *psi = ws->e + i * (size_t)T, *bi = ws->beta + i * (size_t)T, *al = ws->alpha + (i - 1) * (size_t)T;
		double *bp = ws->beta + (i - 1) * (size_t)T, c = ws->scale[i];
		for (int32_t b = 0; b < T; b++)
			v[b] = psi[b] * bi[b] / c;
		for (int32_t a = 0; a < T; a++) {
			const double *Ea = ws->E + (size_t)a * T;
			double s = 0, la = al[a];
			double *acca = acc + (size_t)a * T;
			for (int32_t b = 0; b < T; b++) {
				s += Ea[b] * v[b];
				acca[b] += la * v[b];
			}
			bp[a] = s;
		}
		gt[(size_t)y[i - 1] * T + (size_t)y[i]] -= 1;
	}
	for (size_t k = 0; k < TT; k++)
		gt[k] += acc[k] * ws->E[k];
	for (size_t i = 0; i < n; i++) {
		const double *al = ws->alpha + i * (size_t)T, *bi = ws->beta + i * (size_t)T;
		for (int32_t t = 0; t < T; t++)
			v[t] = al[t] * bi[t];
		for (size_t k = f->ptr[i]; k < f->ptr[i + 1]; k++) {
			double *gf = g + (size_t)f->ids[k] * (size_t)T;
			for (int32_t t = 0; t < T; t++)
				gf[t] += v[t];
			gf[y[i]] -= 1;
		}
	}
	const double *a0 = ws->alpha, *b0 = ws->beta, *an = ws->alpha + (n - 1) * (size_t)T;
	for (int32_t t = 0; t < T; t++) {
		gs[t] += a0[t] * b0[t];
		ge[t] += an[t]; /* beta_n = 1 */
	}
	gs[y[0]] -= 1;
	ge[y[n - 1]] -= 1;
}

double mrft_nll(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f, const int32_t *y, double *g)
{
	double s = mrft_score(F, T, w, f, y);
	double logz = mrft_logz(ws, F, T, w, f);
	if (g)
		backward(ws, F, T, f, y, g);
	return logz - s;
}

double mrft_viterbi(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f, int32_t *best)
{
	const double *trans = w + mrft_trans(F, T);
	const size_t n = f->n;
	double *d = ws->alpha;
	position_scores(ws->e, F, T, w, f);
	for (int32_t t = 0; t < T; t++)
		d[t] = ws->e[t];
	for (size_t i = 1; i < n; i++) {
		const double *dp = d + (i - 1) * (size_t)T, *e = ws->e + i * (size_t)T;
		double *di = d + i * (size_t)T;
		int32_t *bk = ws->back + i * (size_t)T;
		for (int32_t b = 0; b < T; b++) {
			double m = -INFINITY;
			int32_t arg = 0;
			for (int32_t a = 0; a < T; a++) {
				double v = dp[a] + trans[(size_t)a * T + b];
				if (v > m) {
					m = v;
					arg = a;
				}
			}
			di[b] = m + e[b];
			bk[b] = arg;
		}
	}
	const double *dn = d + (n - 1) * (size_t)T;
	int32_t t = 0;
	for (int32_t b = 1; b < T; b++)
		t = dn[b] > dn[t] ? b : t;
	double score = dn[t];
	for (size_t i = n; i-- > 0;) {
		best[i] = t;
		if (i > 0)
			t = ws->back[i * (size_t)T + t];
	}
	return score;
}
