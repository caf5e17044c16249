/*
 * mrf_eval.c - CPU seconds of one evaluation of the chain MRF's
 * objective as train --mrf makes it (lib/family/mrf/estimate.c): the dual
 * tightened by S sub-gradient steps from the last evaluation's, then the
 * bound with its gradient, at the parameters of a saved model and a
 * corpus of N tokens.  Prints, per evaluation, the thread CPU seconds,
 * the bound, and the gradient's norm and a weighted checksum, so two
 * builds of the library can be compared on the same model (the same
 * numbers to rounding; the seconds).  A measuring tool for
 * bench/README.md, not part of llrnn; built against a build tree's
 * static library and its tools' BLAS choice (libcli's constructor picks
 * OpenBLAS's kernels for this CPU, as the tools do):
 *
 *   cc -O2 -Ilib -Itools -o mrf_eval bench/mrf_eval.c build/libcli.a build/libllrnn.a \
 *      $(pkg-config --libs openblas libarchive libutf8proc) -llbfgs -lm -lpthread
 *   OPENBLAS_NUM_THREADS=1 ./mrf_eval MODEL N [evaluations [steps]]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "family/mrf/mrf.h"

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "mrf_eval");
	if (argc < 3) {
		fprintf(stderr, "usage: mrf_eval MODEL N [evaluations [steps]]\n");
		return 2;
	}
	mrf_model *m = NULL;
	llr_err err = {0};
	if (mrf_model_load(argv[1], &m, &err) < 0) {
		fprintf(stderr, "mrf_eval: %s\n", err.msg);
		return 1;
	}
	int64_t N = atoll(argv[2]);
	int evals = argc > 3 ? atoi(argv[3]) : 1, steps = argc > 4 ? atoi(argv[4]) : 200;
	size_t np = mrf_nparams(&m->d), nd = (size_t)m->d.K * m->d.V;
	mrf_ws *w = mrf_ws_new(&m->d);
	double *delta = calloc(nd, sizeof *delta), *g = malloc(np * sizeof *g);
	if (!w || !delta || !g) {
		fprintf(stderr, "mrf_eval: out of memory\n");
		return 1;
	}
	printf("V %d K %d D %d N %lld steps %d\n", m->d.V, m->d.K, m->d.D, (long long)N, steps);
	for (int e = 0; e < evals; e++) {
		double t0 = cpu_now();
		double bt = mrf_tighten(w, &m->d, m->par, N, delta, steps, 1e3, MRF_CHAIN_AUTO);
		double t1 = cpu_now();
		memset(g, 0, np * sizeof *g);
		double b = mrf_bound(w, &m->d, m->par, N, delta, MRF_CHAIN_AUTO, g, NULL);
		double t2 = cpu_now(), gn = 0, ck = 0;
		for (size_t i = 0; i < np; i++) {
			gn += g[i] * g[i];
			ck += g[i] * (double)(i % 7 + 1);
		}
		printf("eval %d cpu %.3f (tighten %.3f, gradient %.3f) bound %.12g tightened %.12g |g| %.12g checksum %.12g\n", e,
		       t2 - t0, t1 - t0, t2 - t1, b, bt, sqrt(gn), ck);
	}
	mrf_ws_free(w);
	mrf_model_free(m);
	free(delta);
	free(g);
	return 0;
}
