/*
 * test_ffnet.c - the feed-forward LM's network (lib/nn/ffnet.c) against
 * finite differences: every parameter block (embeddings and <s>, each
 * hidden layer, the direct connections, the output) with a softmax and
 * with a log-linear output over overlapping real-valued features, with
 * and without hidden layers, and with dropout (its masks drawn again from
 * one seed for every evaluation); that its distributions sum to 1 and
 * agree with its scores.  Tolerances: gradcheck.h's (atol 2e-3, rtol 2e-2,
 * step 1e-2).
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

enum { V = 13, F = 9, FIN = 7, N = 11 };

/* V x cols rows of 1 to 3 entries, real-valued. */
static llr_csr *features(int cols, llr_rng *r)
{
	return random_rows(V, cols, 3, 0.3, 1, r);
}

typedef struct ffcase {
	llr_ffnet *f;
	int32_t ctx[N * 8], tg[N];
	uint64_t drop_seed; /* dropout's masks from this seed; 0: none */
	float *gsave;
} ffcase;

/* The training loss with the masks of k->drop_seed, the gradient array
 * left as it was. */
static double ff_train_loss(ffcase *k)
{
	size_t np;
	float *g = llr_ffnet_grads(k->f, &np);
	memcpy(k->gsave, g, np * sizeof *g);
	llr_rng r;
	llr_rng_seed(&r, k->drop_seed);
	double nll;
	int64_t ntok;
	llr_err e = {0};
	CHECK(llr_ffnet_train_step(k->f, N, k->ctx, k->tg, &r, &nll, &ntok, &e) == 0);
	memcpy(g, k->gsave, np * sizeof *g);
	return nll;
}

static double ff_loss(void *c)
{
	ffcase *k = c;
	if (k->drop_seed)
		return ff_train_loss(k);
	float lp[N];
	llr_err e = {0};
	CHECK(llr_ffnet_score(k->f, N, k->ctx, k->tg, lp, NULL, &e) == 0);
	double s = 0;
	for (int n = 0; n < N; n++)
		s -= lp[n];
	return s;
}

/* Every tensor of a net of this configuration against finite differences. */
static void check_config(int output, int order, int layers, int direct, float dropout)
{
	llr_rng r;
	llr_rng_seed(&r, (uint64_t)(7 + 100 * output + 10 * order + layers + 3 * direct + (dropout > 0 ? 1000 : 0)));
	llr_csr *phi = features(F, &r), *psi = features(FIN, &r);
	float logb[V];
	for (int v = 0; v < V; v++)
		logb[v] = (float)(-2.5 + llr_rng_uniform(&r));
	llr_ffnet_config c = {.order = order, .embed = 4, .hidden = 5, .layers = layers, .direct = direct, .output = output, .vocab = V,
	                      .dropout = dropout};
	llr_err e = {0};
	ffcase k = {.f = llr_ffnet_new(&c, phi, psi, logb, &e), .drop_seed = dropout > 0 ? 99 : 0};
	CHECK(k.f != NULL);
	if (!k.f)
		goto out;
	llr_ffnet_init(k.f, &r);
	size_t np;
	float *p = llr_ffnet_params(k.f, &np), *g = llr_ffnet_grads(k.f, NULL);
	fill(p, np, &r, 0.5); /* biases too, so that their gradients matter */
	int32_t rows = output == LLR_OUT_SOFTMAX ? V : FIN;
	for (int n = 0; n < N; n++) {
		k.tg[n] = n == 3 ? -1 : (int32_t)llr_rng_below(&r, V);
		for (int j = 0; j < order - 1; j++)
			k.ctx[n * (order - 1) + j] = llr_rng_below(&r, 4) == 0 ? LLR_BOS_ID : (int32_t)llr_rng_below(&r, (uint64_t)rows);
	}
	memset(g, 0, np * sizeof *g);
	k.gsave = malloc(np * sizeof *k.gsave);
	double nll;
	int64_t ntok;
	llr_rng dr;
	llr_rng_seed(&dr, k.drop_seed);
	CHECK(llr_ffnet_train_step(k.f, N, k.ctx, k.tg, k.drop_seed ? &dr : NULL, &nll, &ntok, &e) == 0);
	CHECK(ntok == N - 1);
	CHECK_NEAR(nll, ff_loss(&k), 1e-4);
	if (k.drop_seed) {
		/* the masks change the loss; scoring never drops */
		k.drop_seed = 0;
		double plain = ff_loss(&k);
		CHECK(fabs(plain - nll) > 1e-3);
		k.drop_seed = 99;
	}
	for (size_t i = 0; i < llr_ffnet_n_tensors(k.f); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_ffnet_tensor_info(k.f, i, &name, &nd, sh, &off);
		size_t cnt = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		char what[64];
		snprintf(what, sizeof what, "%s %s n=%d L=%d%s%s", output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear", name, order, layers,
		         direct ? " direct" : "", dropout > 0 ? " dropout" : "");
		CHECK(gradcheck(what, p + off, g + off, cnt, ff_loss, &k, 60, &r) == 0);
		CHECK(g_max_analytic > 1e-4);
	}
out:
	free(k.gsave);
	llr_ffnet_free(k.f);
	llr_csr_free(phi);
	llr_csr_free(psi);
}

static void test_grad_softmax(void)
{
	check_config(LLR_OUT_SOFTMAX, 3, 1, 0, 0);
	check_config(LLR_OUT_SOFTMAX, 4, 2, 1, 0);
	check_config(LLR_OUT_SOFTMAX, 2, 0, 0, 0);
	check_config(LLR_OUT_SOFTMAX, 4, 2, 1, 0.3f);
}

static void test_grad_loglinear(void)
{
	check_config(LLR_OUT_LOGLINEAR, 3, 1, 1, 0);
	check_config(LLR_OUT_LOGLINEAR, 5, 2, 0, 0);
	check_config(LLR_OUT_LOGLINEAR, 3, 0, 0, 0);
	check_config(LLR_OUT_LOGLINEAR, 3, 1, 1, 0.4f);
	check_config(LLR_OUT_LOGLINEAR, 3, 0, 0, 0.3f);
}

/* llr_ffnet_dist's rows sum to 1 and hold llr_ffnet_score's numbers. */
static void test_dist(void)
{
	llr_rng r;
	llr_rng_seed(&r, 5);
	llr_csr *phi = features(F, &r);
	float logb[V];
	for (int v = 0; v < V; v++)
		logb[v] = (float)-log((double)V);
	llr_ffnet_config c = {.order = 3, .embed = 4, .hidden = 6, .layers = 1, .direct = 1, .output = LLR_OUT_LOGLINEAR, .vocab = V};
	llr_err e = {0};
	llr_ffnet *f = llr_ffnet_new(&c, phi, NULL, logb, &e);
	CHECK(f != NULL);
	llr_ffnet_init(f, &r);
	int32_t ctx[2 * N], tg[N];
	float lp[N], all[N * V];
	for (int n = 0; n < N; n++) {
		tg[n] = (int32_t)llr_rng_below(&r, V);
		ctx[2 * n] = n ? (int32_t)llr_rng_below(&r, V) : LLR_BOS_ID;
		ctx[2 * n + 1] = (int32_t)llr_rng_below(&r, V);
	}
	CHECK(llr_ffnet_score(f, N, ctx, tg, lp, NULL, &e) == 0);
	CHECK(llr_ffnet_dist(f, N, ctx, all, &e) == 0);
	for (int n = 0; n < N; n++) {
		double s = 0;
		for (int v = 0; v < V; v++)
			s += exp(all[n * V + v]);
		CHECK_NEAR(s, 1.0, 1e-5);
		CHECK_NEAR(all[n * V + tg[n]], lp[n], 1e-5);
	}
	llr_ffnet_free(f);
	llr_csr_free(phi);
}

/* Orders, layers and outputs it refuses. */
static void test_bad_config(void)
{
	llr_err e = {0};
	llr_ffnet_config c = {.order = 1, .embed = 4, .hidden = 4, .layers = 1, .output = LLR_OUT_SOFTMAX, .vocab = V};
	CHECK(llr_ffnet_new(&c, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "order 1"));
	c.order = LLR_FF_MAX_ORDER + 1;
	CHECK(llr_ffnet_new(&c, NULL, NULL, NULL, &e) == NULL);
	c.order = 3;
	c.layers = 0;
	c.direct = 1;
	CHECK(llr_ffnet_new(&c, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "direct"));
	c.layers = 1;
	c.direct = 0;
	c.dropout = 1.0f;
	CHECK(llr_ffnet_new(&c, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "dropout 1"));
	c.dropout = 0.0f;
	c.output = LLR_OUT_LOGLINEAR;
	CHECK(llr_ffnet_new(&c, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "phi"));
}

int main(void)
{
	PLAN(5);
	RUN(test_grad_softmax);
	RUN(test_grad_loglinear);
	RUN(test_dist);
	RUN(test_bad_config);
	llr_blas_set_threads(2);
	RUN(test_grad_loglinear);
	DONE();
}
