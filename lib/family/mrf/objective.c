/*
 * objective.c - what train --mrf minimises (mrf.h, mrf_obj), and the
 * point it starts from (mrf_obj_start):
 *   f(theta) = (B - S) / N + (l2 / 2) |theta|^2,
 * S = theta . counts, B the lifted TRW bound on log Z (bound.c) after the
 * dual steps, so -f is a lower bound on the log-likelihood per token.
 *
 * The dual steps start from the dual of the last point L-BFGS accepted
 * (mrf_obj_accept), not from the evaluation before: within a line search
 * f is then a function of theta alone, as the Armijo test assumes.  From
 * the trial before, f at a point depended on the trials that came first,
 * and a rejected far trial's dual was the next trial's start: on the
 * Brown LM stream (V = 1,666) the dual steps at a first trial moved the
 * bound by 0.38 nats a token, so the next trial began elsewhere.
 *
 * b starts centred.  Adding a constant to every b_w adds N times it to S,
 * to log Z and to the bound alike (every position holds one word), so the
 * data term is flat along that direction and only the L2 penalty sees it.
 * From b = the log unigram frequencies (mean near -8) that penalty was
 * most of the objective and of its gradient (72% of |g|^2 at V = 479:
 * finite differences agree with g along it to 1e-9), with curvature l2 =
 * 1e-4 alone: the first line search stretched its step to hundreds, and
 * L-BFGS's scaling s'y/y'y from that pair sent the second iteration's
 * first trial to u, v ten times as long, theta spanning hundreds of nats,
 * a bound of 250 nats a token where the power iterations no longer
 * converge (15,000 products a dual step against 18): an evaluation took
 * hours at V = 1,666 (issue 53).  Centred, the penalty's gradient along
 * it is 0 at the start and stays 0.  Not here: L-BFGS (minimise.c), the
 * options and the model file (estimate.c, model.c).
 */
#include "family/mrf/mrf.h"

#include <math.h>
#include <stdlib.h>

int mrf_obj_init(mrf_obj *o, const mrf_dims *d, const mrf_counts *c, double l2, int dual)
{
	size_t nd = (size_t)d->K * (size_t)d->V, n = mrf_nparams(d);
	*o = (mrf_obj){.d = *d, .c = c, .l2 = l2, .dual = dual, .bound = NAN, .score = NAN};
	o->ws = mrf_ws_new(d);
	o->delta = llr_calloc(nd, sizeof *o->delta);
	o->start = llr_calloc(nd, sizeof *o->start);
	o->gs = llr_malloc(n * sizeof *o->gs);
	if (!o->ws || !o->delta || !o->start || !o->gs) {
		mrf_obj_free(o);
		return LLR_ENOMEM;
	}
	return LLR_OK;
}

void mrf_obj_free(mrf_obj *o)
{
	mrf_ws_free(o->ws);
	free(o->delta);
	free(o->start);
	free(o->gs);
	o->ws = NULL;
	o->delta = o->start = o->gs = NULL;
}

double mrf_obj_eval(void *inst, const double *x, double *g, int n)
{
	mrf_obj *o = inst;
	double N = (double)o->c->N;
	memset(g, 0, (size_t)n * sizeof *g);
	memset(o->gs, 0, (size_t)n * sizeof *o->gs);
	memcpy(o->delta, o->start, (size_t)o->d.K * o->d.V * sizeof *o->delta);
	mrf_tighten(o->ws, &o->d, x, o->c->N, o->delta, o->dual, 1e3, MRF_CHAIN_AUTO);
	double B = mrf_bound(o->ws, &o->d, x, o->c->N, o->delta, MRF_CHAIN_AUTO, g, NULL);
	double S = mrf_score_counts(&o->d, x, o->c, o->gs), reg = 0;
	for (int i = 0; i < n; i++) {
		g[i] = (g[i] - o->gs[i]) / N + o->l2 * x[i];
		reg += x[i] * x[i];
	}
	o->bound = B;
	o->score = S;
	return (B - S) / N + 0.5 * o->l2 * reg;
}

void mrf_obj_accept(mrf_obj *o)
{
	memcpy(o->start, o->delta, (size_t)o->d.K * o->d.V * sizeof *o->start);
}

void mrf_obj_start(const mrf_dims *d, const mrf_counts *c, uint64_t seed, double *par)
{
	double mean = 0;
	for (int32_t w = 0; w < d->V; w++)
		mean += (par[w] = log((c->uni[w] + 0.1) / ((double)c->N + 0.1 * d->V))) / d->V;
	for (int32_t w = 0; w < d->V; w++)
		par[w] -= mean;
	llr_rng r;
	llr_rng_seed(&r, seed);
	for (size_t i = (size_t)d->V; i < mrf_nparams(d); i++)
		par[i] = 0.1 * llr_rng_normal(&r) / sqrt((double)d->D);
}
