/*
 * test_opensig.c - the open-vocabulary output (issue 14): the log-linear
 * layer's normalisation with signature rows (llr_net_set_open), targets
 * outside the vocabulary (llr_batch xphi), the norm check's extra rows
 * (llr_net_set_norm_rows), and the errors.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"

enum { V = 11,
       F = 8,
       E = 6,
       H = 7,
       S = 5,
       UNK = 10 };

static llr_csr *rand_phi(int rows, int cols, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(cols);
	for (int v = 0; v < rows; v++) {
		int32_t c[4];
		float x[4];
		int k = 1 + (int)llr_rng_below(r, 3);
		for (int j = 0; j < k; j++) {
			c[j] = (int32_t)((v + 3 * j) % cols); /* distinct columns */
			x[j] = j ? (float)(0.5 + llr_rng_uniform(r)) : 1.0f;
		}
		llr_csr_builder_row(b, c, x, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct fixture {
	llr_csr *phi, *sig;
	float logb[V], logb_open[V], sig_logb[S];
	llr_net *net;
} fixture;

static void fx_init(fixture *fx, int output)
{
	llr_rng r;
	llr_rng_seed(&r, 5);
	fx->phi = rand_phi(V, F, &r);
	fx->sig = rand_phi(S, F, &r);
	for (int v = 0; v < V; v++) {
		fx->logb[v] = (float)log(0.01 + llr_rng_uniform(&r));
		fx->logb_open[v] = v == UNK ? -INFINITY : fx->logb[v] + (float)log(0.8);
	}
	for (int s = 0; s < S; s++)
		fx->sig_logb[s] = (float)log(0.04 * (0.5 + llr_rng_uniform(&r)));
	llr_net_config cf = {.vocab = V, .feat_out = F, .feat_in = F, .embed = E, .hidden = H, .layers = 1, .output = output};
	if (output == LLR_OUT_SOFTMAX)
		cf.feat_out = cf.feat_in = 0;
	fx->net = llr_net_new(&cf, output == LLR_OUT_SOFTMAX ? NULL : fx->phi, NULL, fx->logb, NULL);
	llr_net_init(fx->net, &r);
	size_t n;
	float *p = llr_net_params(fx->net, &n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(llr_rng_uniform(&r) - 0.5);
}

static void fx_free(fixture *fx)
{
	llr_net_free(fx->net);
	llr_csr_free(fx->phi);
	llr_csr_free(fx->sig);
}

/* After the prefix 3 1 4, every word of V but <unk> and every signature
 * row as a target, one stream each: their probabilities sum to one. */
static void test_open_sums_to_one(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	enum { B = V - 1 + S,
	       T = 4 };
	int32_t in[T * B], tg[T * B];
	for (int b = 0; b < B; b++) {
		int32_t pre[] = {LLR_BOS_ID, 3, 1, 4};
		for (int t = 0; t < T; t++) {
			in[t * B + b] = pre[t];
			tg[t * B + b] = t < T - 1 ? pre[t + 1] : (b < UNK ? b : V + (b - UNK));
		}
	}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float lp[T * B];
	CHECK_OK(llr_net_score(fx.net, &bt, lp, NULL, NULL));
	double sum = 0;
	for (int b = 0; b < B; b++)
		sum += exp((double)lp[(T - 1) * B + b]);
	CHECK_NEAR(sum, 1.0, 1e-5);
	/* the same positions alone (B = 1): the same numbers */
	int32_t in1[T], tg1[T];
	for (int t = 0; t < T; t++) {
		in1[t] = in[t * B + B - 1];
		tg1[t] = tg[t * B + B - 1];
	}
	llr_batch b1 = {.B = 1, .T = T, .input = in1, .target = tg1, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float l1[T];
	CHECK_OK(llr_net_score(fx.net, &b1, l1, NULL, NULL));
	CHECK_NEAR(l1[T - 1], lp[(T - 1) * B + B - 1], 1e-5);
	/* the norm check: V exactly, plus the signature rows as its extra
	 * rows, is 1; without them it misses their mass */
	llr_batch bv = {.B = 1, .T = T, .input = in1, .target = tg1};
	tg1[T - 1] = 0;
	double ne = -1;
	CHECK_OK(llr_net_score(fx.net, &bv, l1, &ne, NULL));
	CHECK(ne > 0.01);
	CHECK_OK(llr_net_set_norm_rows(fx.net, fx.sig, fx.sig_logb, NULL));
	CHECK_OK(llr_net_score(fx.net, &bv, l1, &ne, NULL));
	CHECK(ne >= 0 && ne < 1e-5);
	fx_free(&fx);
}

/* With no signature rows and the closed background, the open output is
 * the closed one. */
static void test_open_empty_is_closed(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	int32_t in[] = {LLR_BOS_ID, 3, 1, 4}, tg[] = {3, 1, 4, 0};
	llr_batch bt = {.B = 1, .T = 4, .input = in, .target = tg};
	float a[4], b[4];
	CHECK_OK(llr_net_score(fx.net, &bt, a, NULL, NULL));
	llr_csr *none = llr_csr_builder_finish(llr_csr_builder_new(F), NULL);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb, none, NULL, NULL));
	CHECK_OK(llr_net_score(fx.net, &bt, b, NULL, NULL));
	for (int t = 0; t < 4; t++)
		CHECK_NEAR(a[t], b[t], 1e-5);
	llr_csr_free(none);
	fx_free(&fx);
}

static void test_open_errors(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	llr_err e = {0};
	int32_t in[] = {LLR_BOS_ID, 3}, tg[] = {3, V};
	llr_batch bt = {.B = 1, .T = 2, .input = in, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float lp[2];
	/* rows outside V before llr_net_set_open */
	CHECK(llr_net_score(fx.net, &bt, lp, NULL, &e) == LLR_EINVAL && strstr(e.msg, "llr_net_set_open"));
	CHECK(llr_net_set_norm_rows(fx.net, fx.sig, fx.sig_logb, &e) == LLR_EINVAL);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	/* a target past the rows given */
	tg[1] = V + S;
	CHECK(llr_net_score(fx.net, &bt, lp, NULL, &e) == LLR_EINVAL && strstr(e.msg, "out of range"));
	/* not for training */
	tg[1] = 2;
	double nll;
	int64_t nt;
	bt.xphi = NULL;
	CHECK(llr_net_train_step(fx.net, &bt, NULL, &nll, &nt, &e) == LLR_EINVAL && strstr(e.msg, "training"));
	/* a NaN background */
	float bad[S];
	memcpy(bad, fx.sig_logb, sizeof bad);
	bad[2] = NAN;
	CHECK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, bad, &e) == LLR_ENAN);
	fx_free(&fx);
	/* a softmax output has no features to give unseen strings */
	fx_init(&fx, LLR_OUT_SOFTMAX);
	llr_csr *none = llr_csr_builder_finish(llr_csr_builder_new(F), NULL);
	CHECK(llr_net_set_open(fx.net, fx.logb, none, NULL, &e) == LLR_EINVAL && strstr(e.msg, "log-linear"));
	llr_csr_free(none);
	fx_free(&fx);
}

int main(void)
{
	PLAN(3);
	RUN(test_open_sums_to_one);
	RUN(test_open_empty_is_closed);
	RUN(test_open_errors);
	DONE();
}
