/*
 * test_mrf.c - the chain MRF's log-partition (lib/family/mrf/bound.c):
 * the exact dynamic programme against brute-force enumeration of all V^N
 * corpora, the lifted TRW bound above the exact log Z on random tiny
 * models (both ways of summing a chain), its gap per token shrinking as
 * N grows, the gradients of the bound and of the learning objective
 * against finite differences, the dual steps never raising the bound,
 * and train --mrf's objective (objective.c): its start (b centred: the
 * data term is flat along b's mean), f the same at the same point within
 * a line search (the dual steps from the accepted point's dual), and an
 * L-BFGS run whose objective falls at every iteration.
 */
#include "family/mrf/mrf.h"
#include "test.h"

#include <lbfgs.h>

static void rand_par(const mrf_dims *d, double *par, llr_rng *r, double scale)
{
	for (size_t i = 0; i < mrf_nparams(d); i++)
		par[i] = scale * (2 * llr_rng_uniform(r) - 1);
}

/* log sum over x in V^N of exp(S(x)), S computed term by term. */
static double brute_logz(const mrf_dims *d, const double *par, int N)
{
	int x[16] = {0};
	double m = -INFINITY, *all = malloc(sizeof(double) * (size_t)pow(d->V, N));
	size_t n = 0;
	for (;;) {
		double s = 0;
		for (int i = 0; i < N; i++) {
			s += par[x[i]];
			for (int k = 1; k <= d->K && i + k < N; k++)
				s += mrf_theta(d, par, k, x[i], x[i + k]);
		}
		all[n++] = s;
		m = fmax(m, s);
		int i = 0;
		while (i < N && ++x[i] == d->V)
			x[i++] = 0;
		if (i == N)
			break;
	}
	double z = 0;
	for (size_t j = 0; j < n; j++)
		z += exp(all[j] - m);
	free(all);
	return m + log(z);
}

static void test_exact_is_brute(void)
{
	llr_rng r;
	llr_rng_seed(&r, 1);
	for (int V = 2; V <= 4; V++)
		for (int K = 1; K <= 2; K++)
			for (int N = 1; N <= 7; N++) {
				mrf_dims d = {V, K, 2};
				double par[256];
				rand_par(&d, par, &r, 1.0);
				CHECK_NEAR(mrf_exact_logz(&d, par, N), brute_logz(&d, par, N), 1e-9);
			}
}

static void test_bound_above(void)
{
	llr_rng r;
	llr_rng_seed(&r, 2);
	int cases = 0;
	for (int V = 2; V <= 4; V++)
		for (int K = 1; K <= 2; K++)
			for (int N = 3; N <= 10; N++) {
				if (pow(V, N) > 1100000)
					continue;
				mrf_dims d = {V, K, 2};
				double par[256], delta[16] = {0};
				rand_par(&d, par, &r, 1.5);
				mrf_ws *w = mrf_ws_new(&d);
				double z = brute_logz(&d, par, N);
				double be = mrf_bound(w, &d, par, N, delta, MRF_CHAIN_FORCE_EXACT, NULL, NULL);
				double bp = mrf_bound(w, &d, par, N, delta, MRF_CHAIN_FORCE_PERRON, NULL, NULL);
				CHECK(be >= z - 1e-9);
				CHECK(bp >= be - 1e-9); /* the Perron bound bounds each chain */
				if (K == 1) /* one forest: the chain itself */
					CHECK_NEAR(be, z, 1e-9);
				/* a random dual: still a bound */
				for (int j = 0; j < V; j++) {
					delta[j] = llr_rng_uniform(&r) - 0.5;
					delta[(K - 1) * V + j] -= K > 1 ? delta[j] : 0;
				}
				if (K == 1)
					memset(delta, 0, sizeof delta);
				CHECK(mrf_bound(w, &d, par, N, delta, MRF_CHAIN_AUTO, NULL, NULL) >= z - 1e-9);
				double bt = mrf_tighten(w, &d, par, N, delta, 200, 1e3, MRF_CHAIN_AUTO);
				CHECK(bt >= z - 1e-9);
				mrf_ws_free(w);
				cases++;
			}
	CHECK(cases >= 30);
}

/* (bound - log Z) / N at N = 3, 6, 12, 24, 48 for K = 2 (exact log Z by
 * the dynamic programme, checked against brute force above), the dual
 * tightened at each N.  What holds on random models is that the gap per
 * token settles to a limit (the TRW bound's rate is above the true free
 * energy rate, so it does not go to 0): its change between the last two
 * doublings is smaller than between the first two.  It does not shrink
 * monotonically (the thesis's figure 4.5): on most random models it grows
 * from N = 3, where the distance-2 forest has one edge, to its limit. */
static void test_gap_settles(void)
{
	llr_rng r;
	llr_rng_seed(&r, 3);
	for (int trial = 0; trial < 5; trial++) {
		mrf_dims d = {4, 2, 2};
		double par[256], gap[5];
		rand_par(&d, par, &r, 1.0);
		mrf_ws *w = mrf_ws_new(&d);
		for (int i = 0, N = 3; i < 5; i++, N *= 2) {
			double delta[8] = {0};
			double b = mrf_tighten(w, &d, par, N, delta, 200, 1e3, MRF_CHAIN_AUTO);
			gap[i] = (b - mrf_exact_logz(&d, par, N)) / N;
			printf("# trial %d N %d gap/N %.6f\n", trial, N, gap[i]);
			CHECK(gap[i] >= -1e-12);
		}
		CHECK(fabs(gap[4] - gap[3]) < fabs(gap[1] - gap[0]));
		mrf_ws_free(w);
	}
}

/* Central differences of f at x along every coordinate against g. */
typedef double (*fn)(void *ctx, const double *x);
static void fd_check(fn f, void *ctx, double *x, const double *g, size_t n, double tol)
{
	const double h = 1e-5;
	for (size_t i = 0; i < n; i++) {
		double keep = x[i];
		x[i] = keep + h;
		double fp = f(ctx, x);
		x[i] = keep - h;
		double fm = f(ctx, x);
		x[i] = keep;
		CHECK_NEAR((fp - fm) / (2 * h), g[i], tol * fmax(1, fabs(g[i])));
	}
}

typedef struct bctx {
	mrf_dims d;
	mrf_ws *w;
	int64_t N;
	double *par, *delta;
	const mrf_counts *c;
	int method;
} bctx;
static double b_of_par(void *p, const double *x)
{
	bctx *b = p;
	return mrf_bound(b->w, &b->d, x, b->N, b->delta, b->method, NULL, NULL);
}
static double b_of_delta(void *p, const double *x)
{
	bctx *b = p;
	return mrf_bound(b->w, &b->d, b->par, b->N, x, b->method, NULL, NULL);
}
static double objective(void *p, const double *x)
{
	bctx *b = p;
	return mrf_bound(b->w, &b->d, x, b->N, b->delta, b->method, NULL, NULL) - mrf_score_counts(&b->d, x, b->c, NULL);
}

static void test_gradients(void)
{
	llr_rng r;
	llr_rng_seed(&r, 4);
	for (int K = 1; K <= 2; K++)
		for (int N = 3; N <= 11; N += 4) {
			mrf_dims d = {3, K, 2};
			size_t np = mrf_nparams(&d);
			double par[256], delta[6], gp[256] = {0}, gd[6];
			rand_par(&d, par, &r, 1.0);
			for (int j = 0; j < K * 3; j++)
				delta[j] = K > 1 ? 0.3 * (llr_rng_uniform(&r) - 0.5) : 0;
			mrf_ws *w = mrf_ws_new(&d);
			bctx b = {d, w, N, par, delta, NULL, MRF_CHAIN_FORCE_EXACT};
			mrf_bound(w, &d, par, N, delta, b.method, gp, gd);
			fd_check(b_of_par, &b, par, gp, np, 1e-6);
			fd_check(b_of_delta, &b, delta, gd, (size_t)K * 3, 1e-6);
			/* the objective on a random corpus of N tokens */
			int32_t ids[16];
			for (int i = 0; i < N; i++)
				ids[i] = (int32_t)llr_rng_below(&r, 3);
			mrf_counts c;
			llr_err e = {0};
			CHECK_OK(mrf_counts_make(ids, (size_t)N, 3, K, &c, &e));
			double go[256] = {0}, gs[256] = {0};
			mrf_bound(w, &d, par, N, delta, b.method, go, NULL);
			mrf_score_counts(&d, par, &c, gs);
			for (size_t i = 0; i < np; i++)
				go[i] -= gs[i];
			b.c = &c;
			fd_check(objective, &b, par, go, np, 1e-6);
			mrf_counts_free(&c);
			mrf_ws_free(w);
		}
}

/* The Perron chains' gradient is the asymptotic form's: per token it
 * matches finite differences of the bound to O(1/N). */
static void test_perron_gradient(void)
{
	llr_rng r;
	llr_rng_seed(&r, 5);
	mrf_dims d = {3, 2, 2};
	size_t np = mrf_nparams(&d);
	double par[256], delta[6] = {0}, gp[256] = {0};
	rand_par(&d, par, &r, 1.0);
	mrf_ws *w = mrf_ws_new(&d);
	const int64_t N = 200000;
	bctx b = {d, w, N, par, delta, NULL, MRF_CHAIN_FORCE_PERRON};
	mrf_bound(w, &d, par, N, delta, b.method, gp, NULL);
	for (size_t i = 0; i < np; i++)
		gp[i] /= (double)N;
	const double h = 1e-4;
	for (size_t i = 0; i < np; i++) {
		double keep = par[i];
		par[i] = keep + h;
		double fp = b_of_par(&b, par);
		par[i] = keep - h;
		double fm = b_of_par(&b, par);
		par[i] = keep;
		CHECK_NEAR((fp - fm) / (2 * h) / (double)N, gp[i], 1e-4);
	}
	/* and its value per token is the exact chains' */
	double be = mrf_bound(w, &d, par, N, delta, MRF_CHAIN_FORCE_EXACT, NULL, NULL);
	double bp = mrf_bound(w, &d, par, N, delta, MRF_CHAIN_FORCE_PERRON, NULL, NULL);
	CHECK(bp >= be - 1e-6 * fabs(be));
	CHECK((bp - be) / (double)N < 1e-4);
	mrf_ws_free(w);
}

/* The dual steps: the bound returned is never above the starting one,
 * and with K = 2 they find a tighter one on a random model. */
static void test_tighten(void)
{
	llr_rng r;
	llr_rng_seed(&r, 6);
	int tighter = 0;
	for (int trial = 0; trial < 20; trial++) {
		mrf_dims d = {3, 2, 2};
		double par[256], delta[6];
		rand_par(&d, par, &r, 1.5);
		for (int j = 0; j < 3; j++) {
			delta[j] = llr_rng_uniform(&r) - 0.5;
			delta[3 + j] = -delta[j];
		}
		mrf_ws *w = mrf_ws_new(&d);
		int64_t N = 5 + trial;
		double b0 = mrf_bound(w, &d, par, N, delta, MRF_CHAIN_AUTO, NULL, NULL);
		double b1 = mrf_tighten(w, &d, par, N, delta, 200, 1e3, MRF_CHAIN_AUTO);
		CHECK(b1 <= b0);
		CHECK_NEAR(mrf_bound(w, &d, par, N, delta, MRF_CHAIN_AUTO, NULL, NULL), b1, 1e-12);
		for (int j = 0; j < 3; j++)
			CHECK_NEAR(delta[j] + delta[3 + j], 0, 1e-9);
		tighter += b1 < b0 - 1e-6;
		mrf_ws_free(w);
	}
	CHECK(tighter >= 15);
	/* potentials that are not finite: their bound at once, delta untouched */
	mrf_dims d = {3, 2, 2};
	double par[256], delta[6] = {0};
	rand_par(&d, par, &r, 1.0);
	par[mrf_u_off(&d, 1)] = INFINITY;
	mrf_ws *w = mrf_ws_new(&d);
	CHECK(!isfinite(mrf_tighten(w, &d, par, 1000, delta, 200, 1e3, MRF_CHAIN_AUTO)));
	for (int j = 0; j < 6; j++)
		CHECK(delta[j] == 0);
	mrf_ws_free(w);
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Potentials whose exponents span far more than a double's range (what a
 * long L-BFGS trial step gives: theta in the thousands).  The bound and
 * its gradients stay finite, the bound stays above the exact log Z, and a
 * workspace that has seen them gives a sane model the same bound and
 * gradient as a fresh one (the power iterations start from the vectors of
 * the call before: a non-finite one must never be kept). */
static void test_extreme(void)
{
	llr_rng r;
	llr_rng_seed(&r, 7);
	for (int trial = 0; trial < 12; trial++) {
		mrf_dims d = {4, 2, 2};
		size_t np = mrf_nparams(&d);
		double sane[256], wild[256], delta[8] = {0}, gd[8], g1[256], g2[256];
		rand_par(&d, sane, &r, 1.0);
		rand_par(&d, wild, &r, 10.0 + 10.0 * trial);
		mrf_ws *w = mrf_ws_new(&d), *fresh = mrf_ws_new(&d);
		for (int method = MRF_CHAIN_AUTO; method <= MRF_CHAIN_FORCE_PERRON; method++) {
			const int64_t N = 8;
			double z = brute_logz(&d, wild, (int)N);
			memset(g1, 0, sizeof g1);
			double b = mrf_bound(w, &d, wild, N, delta, method, g1, gd);
			CHECK(isfinite(b) && b >= z - 1e-9 * fabs(z));
			CHECK(all_finite(g1, np) && all_finite(gd, 8));
		}
		/* long chains (the Perron form), the dual tightened */
		memset(g1, 0, sizeof g1);
		double bw = mrf_bound(w, &d, wild, 100000, delta, MRF_CHAIN_AUTO, g1, gd);
		CHECK(isfinite(bw) && all_finite(g1, np) && all_finite(gd, 8));
		CHECK(isfinite(mrf_tighten(w, &d, wild, 100000, delta, 50, 1e3, MRF_CHAIN_AUTO)));
		CHECK(all_finite(delta, 8));
		memset(delta, 0, sizeof delta);
		memset(g1, 0, sizeof g1);
		memset(g2, 0, sizeof g2);
		double b1 = mrf_bound(w, &d, sane, 100000, delta, MRF_CHAIN_AUTO, g1, NULL);
		double b2 = mrf_bound(fresh, &d, sane, 100000, delta, MRF_CHAIN_AUTO, g2, NULL);
		CHECK_NEAR(b1, b2, 1e-9 * fabs(b2));
		for (size_t i = 0; i < np; i++)
			CHECK_NEAR(g1[i], g2[i], 1e-6 * fmax(1, fabs(g2[i])));
		mrf_ws_free(w);
		mrf_ws_free(fresh);
	}
}

/* f = sum (x_i - 1)^2 on 4 values; from the evaluation after `bad` on,
 * its gradient is NaN everywhere (NaN, once in, stays: the poisoned
 * power-iteration vectors of issue 53), or, with `cap`, wherever x_0 > cap. */
typedef struct qctx {
	int calls, bad;
	double cap;
} qctx;
static double quad(void *p, const double *x, double *g, int n)
{
	qctx *q = p;
	double f = 0;
	q->calls++;
	for (int i = 0; i < n; i++) {
		f += (x[i] - 1) * (x[i] - 1);
		g[i] = 2 * (x[i] - 1);
	}
	if ((q->bad && q->calls > q->bad) || (q->cap > 0 && x[0] > q->cap))
		g[0] = NAN;
	return f;
}

/* mrf_minimise: a NaN gradient is never convergence (liblbfgs itself
 * returned LBFGS_SUCCESS on one), a NaN trial point is backed off. */
static void test_minimise_nan(void)
{
	double x[4] = {0};
	llr_err e = {0};
	qctx q = {0};
	mrf_min m = {.eval = quad, .ctx = &q, .max_iter = 100};
	CHECK_OK(mrf_minimise(&m, 4, x, &e));
	CHECK(m.status == LBFGS_SUCCESS && m.nonfinite == 0 && m.f < 1e-10);
	for (int bad = 1; bad <= 3; bad++) {
		memset(x, 0, sizeof x);
		q = (qctx){.bad = bad};
		CHECK(mrf_minimise(&m, 4, x, &e) == LLR_ENAN);
		CHECK(m.nonfinite > 0 && strstr(e.msg, "not finite"));
	}
	memset(x, 0, sizeof x);
	q = (qctx){.cap = 0.5};
	CHECK_OK(mrf_minimise(&m, 4, x, &e));
	CHECK(m.nonfinite > 0 && x[0] <= 0.5 && m.f < 4);
}

/* The objective of train --mrf (objective.c) on a random corpus of 400
 * tokens over 5 words. */
typedef struct orun {
	mrf_obj *o;
	double f[64];
	int k;
} orun;
static int oiter(void *ctx, const double *x, double fx, double gnorm, int k, int evals)
{
	orun *r = ctx;
	mrf_obj_accept(r->o);
	if (r->k < 64)
		r->f[r->k++] = fx;
	return 0;
}
static double oeval(void *ctx, const double *x, double *g, int n)
{
	return mrf_obj_eval(((orun *)ctx)->o, x, g, n);
}

static void test_objective(void)
{
	llr_rng r;
	llr_rng_seed(&r, 9);
	mrf_dims d = {5, 2, 2};
	const int N = 400;
	int32_t ids[400];
	for (int i = 0; i < N; i++) /* a skewed unigram, and a pull to repeat the word two back */
		ids[i] = i >= 2 && llr_rng_uniform(&r) < 0.3 ? ids[i - 2] : (int32_t)(llr_rng_uniform(&r) * llr_rng_uniform(&r) * 5);
	mrf_counts c;
	llr_err e = {0};
	CHECK_OK(mrf_counts_make(ids, (size_t)N, 5, 2, &c, &e));
	size_t n = mrf_nparams(&d);
	double x0[64], xa[64], xb[64], g[64];
	CHECK(n <= 64);
	mrf_obj_start(&d, &c, 1, x0);
	/* b: the log unigram frequencies less their mean */
	double sb = 0;
	for (int w = 0; w < 5; w++)
		sb += x0[w];
	CHECK_NEAR(sb, 0, 1e-12);
	CHECK_NEAR(x0[1] - x0[0], log((c.uni[1] + 0.1) / (c.uni[0] + 0.1)), 1e-12);
	mrf_obj o;
	CHECK_OK(mrf_obj_init(&o, &d, &c, 1e-2, 5));
	/* the data term does not see b's mean: at the start (b centred) the
	 * gradient along it is 0, the penalty's included */
	mrf_obj_eval(&o, x0, g, (int)n);
	double gb = 0;
	for (int w = 0; w < 5; w++)
		gb += g[w];
	CHECK_NEAR(gb, 0, 1e-12);
	mrf_obj_accept(&o);
	/* within a line search, f at a point does not depend on the trial
	 * points evaluated before it: 5 dual steps are far from the optimum,
	 * so a start from the far trial's dual would show */
	for (size_t i = 0; i < n; i++) {
		xa[i] = x0[i] + 0.3 * (2 * llr_rng_uniform(&r) - 1);
		xb[i] = x0[i] + 3 * (2 * llr_rng_uniform(&r) - 1);
	}
	double fa = mrf_obj_eval(&o, xa, g, (int)n);
	double fb = mrf_obj_eval(&o, xb, g, (int)n);
	double fa2 = mrf_obj_eval(&o, xa, g, (int)n);
	printf("# f(xa) %.12f, after f(xb) %.12f: %.12f\n", fa, fb, fa2);
	CHECK(fa2 == fa);
	/* L-BFGS from the start: the objective falls at every iteration */
	orun run = {.o = &o};
	mrf_min m = {.eval = oeval, .iter = oiter, .ctx = &run, .max_iter = 30};
	memcpy(xa, x0, sizeof x0);
	CHECK_OK(mrf_minimise(&m, (int)n, xa, &e));
	CHECK(run.k >= 5);
	for (int k = 1; k < run.k; k++)
		CHECK(run.f[k] < run.f[k - 1]);
	printf("# %d iterations, f %.6f -> %.6f\n", run.k, run.f[0], run.f[run.k - 1]);
	mrf_obj_free(&o);
	mrf_counts_free(&c);
}

static void test_counts(void)
{
	const int32_t ids[] = {0, 1, 0, 1, 2, 0};
	mrf_counts c;
	llr_err e = {0};
	CHECK_OK(mrf_counts_make(ids, 6, 3, 2, &c, &e));
	CHECK(c.N == 6 && c.uni[0] == 3 && c.uni[1] == 2 && c.uni[2] == 1);
	/* distance 1: (0,1) x2, (1,0), (1,2), (2,0) */
	CHECK(c.pair[0].n == 4 && c.pair[0].a[0] == 0 && c.pair[0].b[0] == 1 && c.pair[0].c[0] == 2);
	/* distance 2: (0,0), (1,1), (0,2), (1,0) */
	double tot = 0;
	for (size_t j = 0; j < c.pair[1].n; j++)
		tot += c.pair[1].c[j];
	CHECK(c.pair[1].n == 4 && tot == 4);
	mrf_counts_free(&c);
}

int main(void)
{
	PLAN(10);
	RUN(test_counts);
	RUN(test_exact_is_brute);
	RUN(test_bound_above);
	RUN(test_gap_settles);
	RUN(test_gradients);
	RUN(test_perron_gradient);
	RUN(test_tighten);
	RUN(test_extreme);
	RUN(test_minimise_nan);
	RUN(test_objective);
	DONE();
}
