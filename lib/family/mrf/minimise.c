/*
 * minimise.c - the chain MRF's L-BFGS run (mrf.h, mrf_minimise):
 * liblbfgs with its backtracking line search, guarded against objectives
 * and gradients that are not finite.  liblbfgs does not look for them: a
 * gradient of NaN gives it a gradient norm of NaN, and its convergence
 * test (|g| / max(1, |x|) <= epsilon) then ended a run with status 0,
 * LBFGS_SUCCESS, which train recorded as stopped=converged (issue 53).
 * Here an evaluation that is not finite counts as f = +inf, g = 0, which
 * the line search backs off and never accepts; an iteration that still
 * reports one stops the run; and the point liblbfgs returns is evaluated
 * again, so that whatever its status says, a non-finite point is an
 * error (LLR_ENAN), never a model.  Not here: the objective
 * (objective.c), the reasons for stopping (mrf_lbfgs_stop, tagfit.c).
 */
#include "family/mrf/mrf.h"

#include <lbfgs.h>
#include <math.h>
#include <stdlib.h>

typedef struct run {
	mrf_min *m;
	int nan; /* an accepted iteration with a non-finite objective or gradient norm */
} run;

static int finite_vec(const double *g, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += g[i] * g[i];
	return isfinite(s);
}

static lbfgsfloatval_t evaluate(void *inst, const lbfgsfloatval_t *x, lbfgsfloatval_t *g, const int n, const lbfgsfloatval_t step)
{
	(void)step;
	mrf_min *m = ((run *)inst)->m;
	double f = m->eval(m->ctx, x, g, n);
	if (isfinite(f) && finite_vec(g, n))
		return f;
	m->nonfinite++;
	memset(g, 0, (size_t)n * sizeof *g);
	return INFINITY;
}

static int progress(void *inst, const lbfgsfloatval_t *x, const lbfgsfloatval_t *g, const lbfgsfloatval_t fx,
                    const lbfgsfloatval_t xnorm, const lbfgsfloatval_t gnorm, const lbfgsfloatval_t step, int n, int k, int ls)
{
	(void)g, (void)xnorm, (void)step, (void)n;
	run *r = inst;
	if (!isfinite(fx) || !isfinite(gnorm))
		return r->nan = 1;
	return r->m->iter ? r->m->iter(r->m->ctx, x, fx, gnorm, k, ls) : 0;
}

int mrf_minimise(mrf_min *m, int n, double *x, llr_err *err)
{
	lbfgsfloatval_t *lx = lbfgs_malloc(n);
	double *g = llr_malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
	if (!lx || !g) {
		lbfgs_free(lx);
		free(g);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %d parameters", n);
	}
	memcpy(lx, x, (size_t)n * sizeof *x);
	lbfgs_parameter_t p;
	lbfgs_parameter_init(&p);
	p.linesearch = LBFGS_LINESEARCH_BACKTRACKING;
	p.max_iterations = m->max_iter;
	lbfgsfloatval_t fx = 0;
	run r = {.m = m};
	m->nonfinite = 0;
	m->status = lbfgs(n, lx, &fx, evaluate, progress, &r, &p);
	memcpy(x, lx, (size_t)n * sizeof *x);
	lbfgs_free(lx);
	long before = m->nonfinite;
	m->f = evaluate(&r, x, g, n, 0);
	free(g);
	if (r.nan || m->nonfinite > before)
		return llr_err_set(err, LLR_ENAN,
		                   "the objective or its gradient is not finite at the point L-BFGS stopped on (liblbfgs status %d; "
		                   "%ld evaluations not finite)",
		                   m->status, m->nonfinite);
	return LLR_OK;
}
