/*
 * test_llfactor.c - the factored normaliser of the log-linear output
 * (llfactor.c): rows built as sums of parts from three groups of
 * features, like an open vocabulary's signatures, give the loss of the
 * pass over the rows, and its gradient, when Z comes from the factors
 * (and the gradient passes finite differences); the factoring is
 * declined when it would not pay; a sum that underflows falls back to
 * the rows; and a network scores the same with its rows factored, and
 * checks the groups it is given.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

/* Features 0..11 are group 0 (suffixes), 12..17 group 1 (orthographic
 * classes), 18..29 group 2 (the rest). */
#define NF 30
static const int32_t group_of[NF] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                     2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};

/* Up to k distinct features of [lo, hi) into cols/vals (real values). */
static int pick(int32_t *cols, float *vals, int k, int lo, int hi, llr_rng *r)
{
	int n = 0;
	for (int i = 0; i < k; i++) {
		int32_t f = lo + (int32_t)llr_rng_below(r, (uint64_t)(hi - lo));
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= cols[j] == f;
		if (dup)
			continue;
		cols[n] = f;
		vals[n++] = (float)(0.5 + llr_rng_uniform(r));
	}
	return n;
}

/* V rows, each a suffix part of a pool of 40, an orthographic part of
 * 6 and a part of the rest of 5 (some rows repeat); the part rows are
 * drawn once, so parts recur across rows. */
static llr_csr *factored_rows(int V, llr_rng *r)
{
	int32_t pc[51][4];
	float pv[51][4];
	int pn[51];
	for (int p = 0; p < 51; p++) {
		int lo = p < 40 ? 0 : p < 46 ? 12
		                             : 18,
		    hi = p < 40 ? 12 : p < 46 ? 18
		                              : 30;
		pn[p] = pick(pc[p], pv[p], p < 40 ? 3 : 2, lo, hi, r);
	}
	llr_csr_builder *b = llr_csr_builder_new(NF);
	for (int v = 0; v < V; v++) {
		int32_t cols[12];
		float vals[12];
		int n = 0, parts[3] = {(int)llr_rng_below(r, 40), 40 + (int)llr_rng_below(r, 6), 46 + (int)llr_rng_below(r, 5)};
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < pn[parts[i]]; j++) {
				cols[n] = pc[parts[i]][j];
				vals[n++] = pv[parts[i]][j];
			}
		llr_csr_builder_row(b, cols, vals, (size_t)n, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct run {
	double nll;
	float *lt;
	int rc;
} run;

/* The loss and log p of the targets; with dA (F x N, lda N), in
 * LLR_LL_GRAD mode, its gradient too. */
static run run_ll(const llr_ll *o, int N, const float *A, const int32_t *tg, int threads, float *dA)
{
	run x = {0, malloc((size_t)N * sizeof(float)), 0};
	float *work = malloc(llr_ll_work_size(o->cls ? LLR_MAX(o->V, o->cls->C) : o->V, threads) * sizeof(float));
	double *chunk = malloc(llr_ll_chunk_size(N) * sizeof(double));
	x.rc = llr_ll_run(o, &(llr_ll_io){.mode = dA ? LLR_LL_GRAD : LLR_LL_LOSS, .N = N, .lda = N, .A = A, .target = tg, .nll = &x.nll, .logp_t = x.lt, .dA = dA, .work = work, .chunk = chunk, .threads = threads});
	free(work);
	free(chunk);
	return x;
}

static run loss(const llr_ll *o, int N, const float *A, const int32_t *tg, int threads)
{
	return run_ll(o, N, A, tg, threads, NULL);
}

/* The loss and its gradient dA (F x N, lda N). */
static double grad(const llr_ll *o, int N, const float *A, const int32_t *tg, int threads, float *dA)
{
	run x = run_ll(o, N, A, tg, threads, dA);
	CHECK(x.rc == LLR_OK);
	free(x.lt);
	return x.nll;
}

typedef struct fd_ctx {
	const llr_ll *o;
	int N;
	float *A;
	const int32_t *tg;
} fd_ctx;

static double fd_loss(void *p)
{
	fd_ctx *c = p;
	run x = loss(c->o, c->N, c->A, c->tg, 1);
	free(x.lt);
	return x.nll;
}

static void test_factored_loss(void)
{
	llr_rng r;
	llr_rng_seed(&r, 41);
	int V = 600, N = 150; /* two full chunks and a tail */
	llr_csr *phi = factored_rows(V, &r);
	float *logb = malloc((size_t)V * sizeof *logb), *A = malloc((size_t)NF * N * sizeof *A);
	for (int v = 0; v < V; v++)
		logb[v] = v % 17 == 3 ? -INFINITY : (float)(-12.0 * llr_rng_uniform(&r));
	int32_t tg[150];
	for (int n = 0; n < N; n++)
		tg[n] = n % 11 == 5 ? -1 : (int32_t)llr_rng_below(&r, (uint64_t)V);
	for (int n = 0; n < N; n++)
		if (tg[n] >= 0 && isinf(logb[tg[n]]))
			tg[n]++;
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	llr_ll o = {.V = V, .F = NF, .phi = phi, .logb = logb, .cls = &k};
	for (int scale = 1; scale <= 8; scale *= 8) { /* scores of a few nats, then of tens */
		for (size_t i = 0; i < (size_t)NF * N; i++)
			A[i] = (float)(scale * (2.0 * llr_rng_uniform(&r) - 1.0));
		llr_ll_factors_free(k.fac);
		k.fac = NULL;
		run rows = loss(&o, N, A, tg, 1);
		CHECK(llr_ll_factors_build(&k, group_of, 3, NULL) == 1);
		const llr_ll_factors *fz = k.fac;
		CHECK(fz && fz->G == 3 && fz->nterm == k.C);
		/* each group's distinct parts: at most the pools' 40, 6 and
		 * 5, in some order; the prefixes partition the terms */
		int32_t np = 0;
		for (int i = 0; fz && i < 3; i++) {
			CHECK(fz->part[i]->rows <= 40);
			np += fz->part[i]->rows;
		}
		CHECK(fz && np == fz->parts && np <= 51 && fz->npre < k.C);
		for (int32_t q = 1; fz && q < fz->npre; q++)
			CHECK(fz->pre_end[q] > fz->pre_end[q - 1]);
		CHECK(fz && fz->pre_end[0] > 0 && fz->pre_end[fz->npre - 1] == fz->nterm);
		/* the terms carry every class's background once */
		double wsum = 0, bsum = 0;
		for (int32_t t = 0; fz && t < fz->nterm; t++)
			wsum += fz->w[t];
		for (int c = 0; c < k.C; c++)
			bsum += exp((double)k.logB[c]);
		CHECK_NEAR(wsum, bsum, 1e-12 * bsum);
		for (int threads = 1; threads <= 2; threads++) {
			run fac = loss(&o, N, A, tg, threads);
			CHECK(rows.rc == LLR_OK && fac.rc == LLR_OK);
			CHECK_NEAR(fac.nll, rows.nll, 1e-6 * fabs(rows.nll));
			double worst = 0;
			for (int n = 0; n < N; n++)
				worst = fmax(worst, fabs((double)fac.lt[n] - rows.lt[n]));
			CHECK(worst < 2e-5 * scale);
			free(fac.lt);
		}
		/* the gradient: the rows' (themselves checked in test_grad),
		 * and finite differences of the factored loss */
		float *dA = calloc((size_t)NF * N, sizeof *dA), *dAf = calloc((size_t)NF * N, sizeof *dAf);
		llr_ll_factors *keep = k.fac;
		k.fac = NULL;
		double gr = grad(&o, N, A, tg, 1, dA);
		k.fac = keep;
		for (int threads = 1; threads <= 2; threads++) {
			double gf = grad(&o, N, A, tg, threads, dAf);
			CHECK_NEAR(gf, gr, 1e-6 * fabs(gr));
			double worst = 0;
			for (size_t i = 0; i < (size_t)NF * N; i++)
				worst = fmax(worst, fabs((double)dAf[i] - dA[i]));
			CHECK(worst < 1e-5);
		}
		fd_ctx fc = {&o, N, A, tg};
		CHECK(gradcheck("factored loglinear dA", A, dAf, (size_t)NF * N, fd_loss, &fc, 200, &r) == 0);
		free(dA);
		free(dAf);
		free(rows.lt);
	}
	/* scores that are not numbers: the loss says so, as over the rows */
	A[7] = NAN;
	run bad = loss(&o, N, A, tg, 1);
	CHECK(bad.rc == LLR_ENAN);
	free(bad.lt);
	llr_ll_classes_free(&k);
	CHECK(k.fac == NULL);
	llr_csr_free(phi);
	free(logb);
	free(A);
}

/* Each row its own feature, all in one group: nothing to share, so the
 * factoring is declined and the classes are left as they were. */
static void test_declined(void)
{
	int V = 50;
	llr_csr *phi = llr_csr_identity(V, NULL);
	float logb[50];
	for (int v = 0; v < V; v++)
		logb[v] = -4.0f;
	int32_t groups[50] = {0};
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	CHECK(llr_ll_factors_build(&k, groups, 2, NULL) == 0);
	CHECK(k.fac == NULL && k.C == V);
	llr_ll_classes_free(&k);
	llr_csr_free(phi);
}

/* Backgrounds of e^-800: every term of the factored sum underflows in
 * double (each group's exponentials are shifted by the group's max, the
 * background is not), so the loss comes from the pass over the rows,
 * whose float logits carry the background: the same numbers exactly. */
static void test_underflow_falls_back(void)
{
	llr_rng r;
	llr_rng_seed(&r, 42);
	int V = 300, N = 70;
	llr_csr *phi = factored_rows(V, &r);
	float *logb = malloc((size_t)V * sizeof *logb), *A = malloc((size_t)NF * N * sizeof *A);
	for (int v = 0; v < V; v++)
		logb[v] = (float)(-800.0 - llr_rng_uniform(&r));
	for (size_t i = 0; i < (size_t)NF * N; i++)
		A[i] = (float)(2.0 * llr_rng_uniform(&r) - 1.0);
	int32_t tg[70];
	for (int n = 0; n < N; n++)
		tg[n] = (int32_t)llr_rng_below(&r, (uint64_t)V);
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	llr_ll o = {.V = V, .F = NF, .phi = phi, .logb = logb, .cls = &k};
	run rows = loss(&o, N, A, tg, 1);
	CHECK(llr_ll_factors_build(&k, group_of, 3, NULL) == 1);
	run fac = loss(&o, N, A, tg, 1);
	CHECK(rows.rc == LLR_OK && fac.rc == LLR_OK && isfinite(fac.nll));
	CHECK(fac.nll == rows.nll);
	free(rows.lt);
	free(fac.lt);
	llr_ll_classes_free(&k);
	llr_csr_free(phi);
	free(logb);
	free(A);
}

/* A network with an open output whose rows are factored
 * (llr_net_set_out_groups): llr_net_score gives the numbers of the pass
 * over the rows, on one thread and on three (the copies share the
 * factors); llr_net_set_open drops them; bad groups are refused. */
static void test_net_groups(void)
{
	llr_rng r;
	llr_rng_seed(&r, 43);
	int V = 400, S = 300;
	enum { B = 5,
	       T = 30 };
	llr_csr *phi = factored_rows(V, &r), *sig = factored_rows(S, &r);
	float *logb = malloc((size_t)V * sizeof *logb), *sig_logb = malloc((size_t)S * sizeof *sig_logb);
	for (int v = 0; v < V; v++)
		logb[v] = (float)(log(0.8 / V) + llr_rng_uniform(&r) - 0.5);
	for (int s = 0; s < S; s++)
		sig_logb[s] = (float)(log(0.2 / S) + 2.0 * llr_rng_uniform(&r) - 1.0);
	llr_net_config cf = {.vocab = V, .feat_out = NF, .feat_in = NF, .embed = 6, .hidden = 8, .layers = 1, .output = LLR_OUT_LOGLINEAR};
	llr_net *net = llr_net_new(&cf, phi, NULL, logb, NULL);
	CHECK(net != NULL);
	if (!net)
		return;
	llr_net_init(net, &r);
	size_t np;
	float *p = llr_net_params(net, &np);
	for (size_t i = 0; i < np; i++)
		p[i] = (float)(2.0 * llr_rng_uniform(&r) - 1.0);
	int32_t in[T * B], tg[T * B];
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			in[t * B + b] = t ? (int32_t)llr_rng_below(&r, (uint64_t)V) : LLR_BOS_ID;
			tg[t * B + b] = t % 3 ? (int32_t)llr_rng_below(&r, (uint64_t)V) : V + (int32_t)llr_rng_below(&r, (uint64_t)S);
		}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg};
	float rows[T * B], fac[T * B];
	llr_err e = {0};
	CHECK_OK(llr_net_set_open(net, logb, sig, sig_logb, NULL));
	CHECK_OK(llr_net_score(net, &bt, rows, NULL, NULL));
	int32_t bad[NF];
	memcpy(bad, group_of, sizeof bad);
	bad[20] = 3;
	CHECK(llr_net_set_out_groups(net, bad, 3, &e) == LLR_EINVAL && strstr(e.msg, "feature 20"));
	CHECK(llr_net_set_out_groups(net, group_of, 5, &e) == LLR_EINVAL && strstr(e.msg, "5 groups"));
	CHECK(llr_net_set_out_groups(net, group_of, 3, &e) == 1);
	for (int threads = 1; threads <= 3; threads += 2) {
		CHECK_OK(llr_net_set_score_threads(net, threads, NULL));
		CHECK_OK(llr_net_score(net, &bt, fac, NULL, NULL));
		int far = 0;
		for (int k = 0; k < T * B; k++)
			far += fabsf(fac[k] - rows[k]) > 1e-4f;
		CHECK(far == 0);
	}
	/* set up again: the pass over the rows, the same numbers exactly */
	CHECK_OK(llr_net_set_score_threads(net, 1, NULL));
	CHECK_OK(llr_net_set_open(net, logb, sig, sig_logb, NULL));
	CHECK_OK(llr_net_score(net, &bt, fac, NULL, NULL));
	CHECK(!memcmp(fac, rows, sizeof fac));
	llr_net_free(net);
	/* a softmax output has nothing to factor */
	llr_net_config cs = {.vocab = V, .embed = 6, .hidden = 8, .layers = 1, .output = LLR_OUT_SOFTMAX};
	net = llr_net_new(&cs, NULL, NULL, logb, NULL);
	CHECK(net && llr_net_set_out_groups(net, group_of, 3, NULL) == 0);
	llr_net_free(net);
	llr_csr_free(phi);
	llr_csr_free(sig);
	free(logb);
	free(sig_logb);
}

int main(void)
{
	PLAN(4);
	RUN(test_factored_loss);
	RUN(test_declined);
	RUN(test_underflow_falls_back);
	RUN(test_net_groups);
	DONE();
}
