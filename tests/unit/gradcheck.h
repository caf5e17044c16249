/*
 * gradcheck.h - the finite-difference gradient checker of the C unit
 * tests (test_grad.c, test_charcnn.c, test_treeout.c) and their small
 * helpers (random weights, random word-feature rows).  Included once per test program, after test.h.
 *
 * Everything runs in float32 as the library does; the loss is summed in
 * double.  Central differences with step g_eps (EPS = 1e-2 unless a test
 * sets it; the effective step is recomputed after float rounding); a
 * component passes when
 *   |numeric - analytic| <= ATOL + RTOL * max(|numeric|, |analytic|)
 * with ATOL = 2e-3, RTOL = 2e-2.  With float32 the differences carry about
 * 1e-7 * |loss| / EPS of rounding noise and O(EPS^2) truncation error, both
 * well below that.  Layers with kinks (max-pooling, relu) use a smaller
 * step, so that no perturbation crosses one.
 */
#ifndef LLR_GRADCHECK_H
#define LLR_GRADCHECK_H

#include "llrnn.h"

#define EPS 1e-2
#define ATOL 2e-3
#define RTOL 2e-2

typedef double (*loss_fn)(void *ctx);

/* The largest |analytic| component the last gradcheck compared: a check
 * that passes on an all-zero gradient proves nothing. */
static double g_max_analytic;
static int g_quiet;        /* set: gradcheck prints no failing components */
static double g_eps = EPS; /* the step */

/* Compare g (analytic) with central differences of f over `count` random
 * components of p (all of them when count >= n).  Returns the number of
 * failing components; prints the first few. */
static int gradcheck(const char *what, float *p, const float *g, size_t n, loss_fn f, void *ctx, size_t count, llr_rng *rng)
{
	int bad = 0;
	double worst = 0;
	g_max_analytic = 0;
	for (size_t k = 0; k < (count < n ? count : n); k++) {
		size_t i = count >= n ? k : (size_t)llr_rng_below(rng, n);
		float save = p[i];
		float up = (float)(save + g_eps), dn = (float)(save - g_eps);
		p[i] = up;
		double fp = f(ctx);
		p[i] = dn;
		double fm = f(ctx);
		p[i] = save;
		double num = (fp - fm) / ((double)up - (double)dn);
		double ana = g[i];
		g_max_analytic = fmax(g_max_analytic, fabs(ana));
		double err = fabs(num - ana);
		double tol = ATOL + RTOL * fmax(fabs(num), fabs(ana));
		double rel = err / (fmax(fabs(num), fabs(ana)) + 1e-6);
		if (rel > worst && err > ATOL)
			worst = rel;
		if (!(err <= tol)) {
			if (bad < 5 && !g_quiet)
				printf("#   %s[%zu]: numeric %.6g analytic %.6g\n", what, i, num, ana);
			bad++;
		}
	}
	printf("#   %s: %zu components, worst relative error above atol %.3g, %d bad\n", what, count < n ? count : n, worst, bad);
	return bad;
}

static inline void fill(float *a, size_t n, llr_rng *r, double scale)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (float)((2 * llr_rng_uniform(r) - 1) * scale);
}

/* A rows x cols matrix of random sparse rows (word features, phi or
 * psi): 1 to maxk (at most 4) entries a row in random columns (a column
 * drawn twice sums), each lo + width * u, u uniform in [0, 1) and drawn
 * only when width > 0. */
static inline llr_csr *random_rows(int rows, int cols, int maxk, double lo, double width, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(cols);
	for (int v = 0; v < rows; v++) {
		int32_t c[4];
		float x[4];
		int k = 1 + (int)llr_rng_below(r, (uint64_t)maxk);
		for (int j = 0; j < k; j++) {
			c[j] = (int32_t)llr_rng_below(r, (uint64_t)cols);
			x[j] = width > 0 ? (float)(lo + width * llr_rng_uniform(r)) : (float)lo;
		}
		llr_csr_builder_row(b, c, x, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

static inline double dot_d(const float *a, const float *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

#endif
