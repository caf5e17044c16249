/*
 * test_net.c - properties of the whole network (lib/nn/net.c): one-hot
 * LL-RNN = softmax RNN, normalisation, padding, step-by-step inference
 * against batch scoring, batch independence, output slicing, determinism,
 * bad input, and a tiny model that learns a tiny corpus with plain SGD.
 * Gradients themselves are checked in test_grad.c.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"

enum { V = 11, F = 8, E = 6, H = 7 };

static llr_csr *rand_phi(int rows, int cols, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(cols);
	for (int v = 0; v < rows; v++) {
		int32_t c[4];
		float x[4];
		int k = 1 + (int)llr_rng_below(r, 4);
		for (int j = 0; j < k; j++) {
			c[j] = (int32_t)llr_rng_below(r, (uint64_t)cols);
			x[j] = j ? (float)(0.5 + llr_rng_uniform(r)) : 1.0f;
		}
		llr_csr_builder_row(b, c, x, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct fixture {
	llr_csr *phi;
	float logb[V];
	llr_net *net;
} fixture;

static void fx_init(fixture *fx, int output, float dropout, uint64_t seed)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	fx->phi = rand_phi(V, F, &r);
	for (int v = 0; v < V; v++)
		fx->logb[v] = (float)log(0.01 + llr_rng_uniform(&r));
	llr_net_config cf = {.vocab = V, .feat_out = F, .feat_in = F, .embed = E, .hidden = H, .layers = 2, .dropout = dropout, .output = output};
	if (output == LLR_OUT_SOFTMAX)
		cf.feat_out = cf.feat_in = 0;
	llr_err e = {0};
	fx->net = llr_net_new(&cf, output == LLR_OUT_SOFTMAX ? NULL : fx->phi, NULL, fx->logb, &e);
	if (!fx->net) {
		printf("# llr_net_new: %s\n", e.msg);
		exit(1);
	}
	llr_net_init(fx->net, &r);
	/* larger weights than the init, so that outputs differ visibly */
	size_t n;
	float *p = llr_net_params(fx->net, &n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(llr_rng_uniform(&r) - 0.5);
}

static void fx_free(fixture *fx)
{
	llr_net_free(fx->net);
	llr_csr_free(fx->phi);
}

/* Sentences (ids in [0, V)) into a time-major batch with <s> inputs:
 * input[0] = <s>, input[t] = s[t-1]; target[t] = s[t]; padding after. */
static void make_batch(int B, int T, const int *const *sents, const int *lens, int32_t *in, int32_t *tg, int32_t pad_in)
{
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			int n = t * B + b;
			in[n] = t == 0 ? LLR_BOS_ID : (t < lens[b] ? sents[b][t - 1] : pad_in);
			tg[n] = t < lens[b] ? sents[b][t] : -1;
		}
}

static const int s0[] = {3, 1, 4, 1, 5, 9, 2, 0};
static const int s1[] = {2, 7, 0};
static const int s2[] = {10, 6, 6, 8, 0};
static const int *const sents[] = {s0, s1, s2};
static const int lens[] = {8, 3, 5};

static void test_onehot_equals_softmax(void)
{
	fixture sm;
	fx_init(&sm, LLR_OUT_SOFTMAX, 0, 1);
	llr_csr *eye = llr_csr_identity(V, NULL);
	float ub[V];
	for (int v = 0; v < V; v++)
		ub[v] = (float)-log((double)V);
	llr_net_config cf = *llr_net_cfg(sm.net);
	cf.output = LLR_OUT_LOGLINEAR;
	llr_net *ll = llr_net_new(&cf, eye, NULL, ub, NULL);
	CHECK(ll != NULL);
	size_t n1, n2;
	float *p1 = llr_net_params(sm.net, &n1), *p2 = llr_net_params(ll, &n2);
	CHECK(n1 == n2);
	memcpy(p2, p1, n1 * sizeof *p1);
	int32_t in[24], tg[24];
	make_batch(3, 8, sents, lens, in, tg, 0);
	llr_batch bt = {.B = 3, .T = 8, .input = in, .target = tg};
	double a = 0, b = 0;
	int64_t na = 0, nb = 0;
	memset(llr_net_grads(sm.net, NULL), 0, n1 * sizeof(float));
	memset(llr_net_grads(ll, NULL), 0, n2 * sizeof(float));
	CHECK_OK(llr_net_train_step(sm.net, &bt, NULL, &a, &na, NULL));
	CHECK_OK(llr_net_train_step(ll, &bt, NULL, &b, &nb, NULL));
	CHECK(na == 16 && nb == 16);
	CHECK_NEAR(a, b, 1e-6 * fabs(a));
	CHECK(a > 0);
	float *g1 = llr_net_grads(sm.net, NULL), *g2 = llr_net_grads(ll, NULL);
	double e = 0;
	for (size_t i = 0; i < n1; i++)
		e = fmax(e, fabs(g1[i] - g2[i]));
	CHECK(e < 1e-6);
	float l1[24], l2[24];
	CHECK_OK(llr_net_score(sm.net, &bt, l1, NULL, NULL));
	CHECK_OK(llr_net_score(ll, &bt, l2, NULL, NULL));
	e = 0;
	for (int i = 0; i < 24; i++)
		e = fmax(e, fabs(l1[i] - l2[i]));
	CHECK(e < 1e-6);
	llr_net_free(ll);
	llr_csr_free(eye);
	fx_free(&sm);
}

/* score's norm_err, and step outputs summing to 1, for both outputs. */
static void test_normalised(void)
{
	for (int kind = LLR_OUT_LOGLINEAR; kind <= LLR_OUT_SOFTMAX; kind++) {
		fixture fx;
		fx_init(&fx, kind, 0, 2);
		int32_t in[24], tg[24];
		make_batch(3, 8, sents, lens, in, tg, 0);
		llr_batch bt = {.B = 3, .T = 8, .input = in, .target = tg};
		float lp[24];
		double ne = -1;
		CHECK_OK(llr_net_score(fx.net, &bt, lp, &ne, NULL));
		CHECK(fabs(ne) < 1e-4);
		llr_net_state *s = llr_net_state_new(fx.net, 3);
		float all[3 * V];
		double worst = 0;
		for (int t = 0; t < 8; t++) {
			CHECK_OK(llr_net_step(fx.net, s, in + 3 * t, NULL, all, NULL));
			for (int b = 0; b < 3; b++) {
				double z = 0;
				for (int v = 0; v < V; v++)
					z += exp((double)all[b * V + v]);
				worst = fmax(worst, fabs(z - 1));
			}
		}
		CHECK(worst < 1e-5);
		llr_net_state_free(s);
		fx_free(&fx);
	}
}

/* Longer padding, with garbage input ids at padded steps, changes nothing
 * at the real positions; padded positions get log p = 0. */
static void test_padding(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR, 0, 3);
	int32_t in1[24], tg1[24], in2[36], tg2[36];
	make_batch(3, 8, sents, lens, in1, tg1, 0);
	make_batch(3, 12, sents, lens, in2, tg2, -7);
	llr_batch b1 = {.B = 3, .T = 8, .input = in1, .target = tg1};
	llr_batch b2 = {.B = 3, .T = 12, .input = in2, .target = tg2};
	double a = 0, b = 0;
	int64_t na = 0, nb = 0;
	size_t np;
	float *g = llr_net_grads(fx.net, &np);
	float *ga = malloc(np * sizeof *ga);
	memset(g, 0, np * sizeof *g);
	CHECK_OK(llr_net_train_step(fx.net, &b1, NULL, &a, &na, NULL));
	memcpy(ga, g, np * sizeof *g);
	memset(g, 0, np * sizeof *g);
	CHECK_OK(llr_net_train_step(fx.net, &b2, NULL, &b, &nb, NULL));
	CHECK(na == nb);
	CHECK_NEAR(a, b, 1e-6 * fabs(a));
	double e = 0;
	for (size_t i = 0; i < np; i++)
		e = fmax(e, fabs(ga[i] - g[i]));
	CHECK(e < 1e-5);
	float l1[24], l2[36];
	CHECK_OK(llr_net_score(fx.net, &b1, l1, NULL, NULL));
	CHECK_OK(llr_net_score(fx.net, &b2, l2, NULL, NULL));
	e = 0;
	for (int i = 0; i < 24; i++)
		e = fmax(e, fabs(l1[i] - l2[i]));
	CHECK(e < 1e-6);
	int zero = 1;
	for (int i = 0; i < 36; i++)
		if (tg2[i] < 0)
			zero &= l2[i] == 0.0f;
	CHECK(zero);
	free(ga);
	fx_free(&fx);
}

/* llr_net_step position by position = llr_net_score on the batch; each
 * sentence alone = the same sentence in a batch. */
static void test_step_and_alone(void)
{
	for (int kind = LLR_OUT_LOGLINEAR; kind <= LLR_OUT_SOFTMAX; kind++) {
		fixture fx;
		fx_init(&fx, kind, 0, 4);
		int32_t in[24], tg[24];
		make_batch(3, 8, sents, lens, in, tg, 0);
		llr_batch bt = {.B = 3, .T = 8, .input = in, .target = tg};
		float lp[24];
		CHECK_OK(llr_net_score(fx.net, &bt, lp, NULL, NULL));
		llr_net_state *s = llr_net_state_new(fx.net, 3);
		float all[3 * V];
		double e = 0;
		for (int t = 0; t < 8; t++) {
			CHECK_OK(llr_net_step(fx.net, s, in + 3 * t, NULL, all, NULL));
			for (int b = 0; b < 3; b++)
				if (tg[t * 3 + b] >= 0)
					e = fmax(e, fabs(all[b * V + tg[t * 3 + b]] - lp[t * 3 + b]));
		}
		CHECK(e < 1e-5);
		/* state copy: stream 0's state into stream 2, then both
		 * streams fed the same input agree */
		llr_net_state_copy(s, 2, s, 0);
		int32_t x[3] = {4, 5, 4};
		CHECK_OK(llr_net_step(fx.net, s, x, NULL, all, NULL));
		e = 0;
		for (int v = 0; v < V; v++)
			e = fmax(e, fabs(all[v] - all[2 * V + v]));
		CHECK(e == 0);
		llr_net_state_reset(s);
		llr_net_state_free(s);

		e = 0;
		for (int b = 0; b < 3; b++) {
			int32_t i1[8], t1[8];
			const int *one[1] = {sents[b]};
			make_batch(1, lens[b], one, &lens[b], i1, t1, 0);
			llr_batch b1 = {.B = 1, .T = lens[b], .input = i1, .target = t1};
			float l1[8];
			CHECK_OK(llr_net_score(fx.net, &b1, l1, NULL, NULL));
			for (int t = 0; t < lens[b]; t++)
				e = fmax(e, fabs(l1[t] - lp[t * 3 + b]));
		}
		CHECK(e < 1e-5);
		fx_free(&fx);
	}
}

/* Batched scoring packs the streams by length (no padding computed): a
 * stream with no target at all, a skipped target inside a stream and
 * streams of every length give each stream's numbers scored alone. */
static void test_score_packed(void)
{
	for (int kind = LLR_OUT_LOGLINEAR; kind <= LLR_OUT_SOFTMAX; kind++) {
		fixture fx;
		fx_init(&fx, kind, 0, 8);
		enum { B = 5, T = 9 };
		const int *ss[B] = {s1, s0, s2, s0, s1};
		int ls[B] = {3, 8, 0, 5, 1};
		int32_t in[B * T], tg[B * T];
		make_batch(B, T, ss, ls, in, tg, 0);
		tg[2 * B + 1] = -1; /* stream 1 skips its target at step 2 */
		llr_batch bt = {.B = B, .T = T, .input = in, .target = tg};
		float lp[B * T];
		double ne = 1;
		CHECK_OK(llr_net_score(fx.net, &bt, lp, &ne, NULL));
		CHECK(fabs(ne) < 1e-5);
		double e = 0;
		int zero = 1;
		for (int b = 0; b < B; b++) {
			int32_t i1[T], t1[T];
			float l1[T];
			for (int t = 0; t < T; t++) {
				i1[t] = in[t * B + b];
				t1[t] = tg[t * B + b];
			}
			llr_batch b1 = {.B = 1, .T = T, .input = i1, .target = t1};
			CHECK_OK(llr_net_score(fx.net, &b1, l1, NULL, NULL));
			for (int t = 0; t < T; t++) {
				e = fmax(e, fabs(l1[t] - lp[t * B + b]));
				if (tg[t * B + b] < 0)
					zero &= lp[t * B + b] == 0.0f;
			}
		}
		CHECK(e < 1e-5);
		CHECK(zero);
		/* only empty streams: nothing to score, all zeros */
		int32_t in0[2 * 3], tg0[2 * 3];
		for (int n = 0; n < 6; n++) {
			in0[n] = n < 2 ? LLR_BOS_ID : 0;
			tg0[n] = -1;
		}
		llr_batch b0 = {.B = 2, .T = 3, .input = in0, .target = tg0};
		float l0[6] = {1, 1, 1, 1, 1, 1};
		CHECK_OK(llr_net_score(fx.net, &b0, l0, NULL, NULL));
		for (int n = 0; n < 6; n++)
			CHECK(l0[n] == 0.0f);
		fx_free(&fx);
	}
}

/* Scoring on threads: each stream gets exactly what llr_net_score gives
 * its group alone, within float rounding of a one-thread call, zeros at
 * padding; more threads than streams, back to one, and a bad id. */
static void test_score_threads(void)
{
	for (int kind = LLR_OUT_LOGLINEAR; kind <= LLR_OUT_SOFTMAX; kind++) {
		fixture fx, ref;
		fx_init(&fx, kind, 0, 11);
		fx_init(&ref, kind, 0, 11);
		enum { B = 7, T = 9 };
		const int *ss[B] = {s1, s0, s2, s0, s1, s2, s0};
		int ls[B] = {3, 8, 0, 5, 1, 4, 8};
		int32_t in[B * T], tg[B * T];
		make_batch(B, T, ss, ls, in, tg, 0);
		llr_batch bt = {.B = B, .T = T, .input = in, .target = tg};
		float lp1[B * T], lpt[B * T];
		double ne1 = 1, net = 1;
		CHECK_OK(llr_net_score(fx.net, &bt, lp1, &ne1, NULL));
		const int nth[] = {3, B, 16};
		for (int i = 0; i < 3; i++) {
			CHECK_OK(llr_net_set_score_threads(fx.net, nth[i], NULL));
			memset(lpt, 0xff, sizeof lpt);
			CHECK_OK(llr_net_score(fx.net, &bt, lpt, &net, NULL));
			int close = 1, pad = 1;
			for (int k = 0; k < B * T; k++) {
				close &= fabsf(lpt[k] - lp1[k]) <= 1e-5f * (1 + fabsf(lp1[k]));
				if (tg[k] < 0)
					pad &= lpt[k] == 0.0f;
			}
			CHECK(close && pad);
			CHECK(fabs(net) < 1e-5 && fabs(net - ne1) < 1e-6);
		}
		/* one stream per group: exactly that stream scored alone */
		CHECK_OK(llr_net_set_score_threads(fx.net, B, NULL));
		CHECK_OK(llr_net_score(fx.net, &bt, lpt, NULL, NULL));
		int exact = 1;
		for (int b = 0; b < B; b++) {
			int L = ls[b] > 0 ? ls[b] : 1;
			int32_t i1[T], t1[T];
			float l1[T];
			for (int t = 0; t < L; t++) {
				i1[t] = in[t * B + b];
				t1[t] = tg[t * B + b];
			}
			llr_batch b1 = {.B = 1, .T = L, .input = i1, .target = t1};
			CHECK_OK(llr_net_score(ref.net, &b1, l1, NULL, NULL));
			for (int t = 0; t < L; t++)
				exact &= l1[t] == lpt[t * B + b];
		}
		CHECK(exact);
		/* a target out of range is an error on threads too */
		tg[3 * B + 1] = V;
		llr_err e = {0};
		CHECK(llr_net_score(fx.net, &bt, lpt, NULL, &e) == LLR_EINVAL && e.code == LLR_EINVAL);
		tg[3 * B + 1] = s0[3];
		/* back to one thread: the first call's numbers, exactly */
		CHECK_OK(llr_net_set_score_threads(fx.net, 1, NULL));
		CHECK_OK(llr_net_score(fx.net, &bt, lpt, NULL, NULL));
		CHECK(!memcmp(lpt, lp1, sizeof lp1));
		CHECK_OK(llr_net_set_score_threads(fx.net, 2, NULL)); /* freed with the net */
		fx_free(&fx);
		fx_free(&ref);
	}
}

/* The output layer in slices of positions gives the same numbers. */
static void test_slices(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR, 0, 5);
	enum { B = 20, T = 8, N = B * T };
	int32_t in[N], tg[N];
	llr_rng r;
	llr_rng_seed(&r, 9);
	for (int n = 0; n < N; n++) {
		in[n] = n < B ? LLR_BOS_ID : (int32_t)llr_rng_below(&r, V);
		tg[n] = n % 7 == 3 ? -1 : (int32_t)llr_rng_below(&r, V);
	}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg};
	size_t np;
	float *g = llr_net_grads(fx.net, &np);
	float *ga = malloc(np * sizeof *ga);
	double a = 0, b = 0;
	memset(g, 0, np * sizeof *g);
	CHECK_OK(llr_net_train_step(fx.net, &bt, NULL, &a, NULL, NULL));
	memcpy(ga, g, np * sizeof *g);
	float l1[N], l2[N];
	CHECK_OK(llr_net_score(fx.net, &bt, l1, NULL, NULL));
	/* 64 positions per slice: 160 = 64 + 64 + 32 */
	llr_net_set_out_budget(fx.net, (size_t)F * 2 * sizeof(float) * 64);
	memset(g, 0, np * sizeof *g);
	CHECK_OK(llr_net_train_step(fx.net, &bt, NULL, &b, NULL, NULL));
	CHECK_NEAR(a, b, 1e-9 * fabs(a));
	double e = 0;
	for (size_t i = 0; i < np; i++)
		e = fmax(e, fabs(ga[i] - g[i]));
	CHECK(e < 1e-5);
	CHECK_OK(llr_net_score(fx.net, &bt, l2, NULL, NULL));
	CHECK(memcmp(l1, l2, sizeof l1) == 0);
	free(ga);
	fx_free(&fx);
}

/* Same seed, same parameters, same loss and gradients, bit for bit,
 * with and without dropout. */
static void test_determinism(void)
{
	fixture a, b;
	fx_init(&a, LLR_OUT_LOGLINEAR, 0.3f, 6);
	fx_init(&b, LLR_OUT_LOGLINEAR, 0.3f, 6);
	size_t n;
	float *pa = llr_net_params(a.net, &n), *pb = llr_net_params(b.net, NULL);
	CHECK(memcmp(pa, pb, n * sizeof *pa) == 0);
	llr_rng r1, r2;
	llr_rng_seed(&r1, 1);
	llr_rng_seed(&r2, 1);
	llr_net_init(a.net, &r1);
	llr_net_init(b.net, &r2);
	CHECK(memcmp(pa, pb, n * sizeof *pa) == 0);
	int32_t in[24], tg[24];
	make_batch(3, 8, sents, lens, in, tg, 0);
	llr_batch bt = {.B = 3, .T = 8, .input = in, .target = tg};
	double la = 0, lb = 0, lc = 0;
	memset(llr_net_grads(a.net, NULL), 0, n * sizeof(float));
	memset(llr_net_grads(b.net, NULL), 0, n * sizeof(float));
	CHECK_OK(llr_net_train_step(a.net, &bt, &r1, &la, NULL, NULL));
	CHECK_OK(llr_net_train_step(b.net, &bt, &r2, &lb, NULL, NULL));
	CHECK(la == lb);
	CHECK(memcmp(llr_net_grads(a.net, NULL), llr_net_grads(b.net, NULL), n * sizeof(float)) == 0);
	/* dropout changes the loss; without an rng there is none */
	CHECK_OK(llr_net_train_step(a.net, &bt, NULL, &lc, NULL, NULL));
	CHECK(lc != la);
	/* initialisation: forget-gate biases 1, other biases 0, weights
	 * within +-0.08 */
	int ok = 1;
	for (size_t i = 0; i < llr_net_n_tensors(a.net); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_net_tensor_info(a.net, i, &name, &nd, sh, &off);
		size_t m = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		for (size_t k = 0; k < m; k++) {
			float v = pa[off + k];
			if (!strcmp(name, "lstm0/b") || !strcmp(name, "lstm1/b"))
				ok &= v == ((k >= H && k < 2 * H) ? 1.0f : 0.0f);
			else if (!strcmp(name, "out/b"))
				ok &= v == 0.0f;
			else
				ok &= fabsf(v) <= 0.08f;
		}
	}
	CHECK(ok);
	fx_free(&a);
	fx_free(&b);
}

static void test_tensors(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR, 0, 7);
	static const char *names[] = {"embed", "bos", "lstm0/wx", "lstm0/wh", "lstm0/b", "lstm1/wx", "lstm1/wh", "lstm1/b", "out/w", "out/b"};
	static const int64_t shapes[][2] = {{F, E}, {E, 0}, {E, 4 * H}, {H, 4 * H}, {4 * H, 0}, {H, 4 * H}, {H, 4 * H}, {4 * H, 0}, {F, H}, {F, 0}};
	CHECK(llr_net_n_tensors(fx.net) == 10);
	size_t off = 0, np;
	llr_net_params(fx.net, &np);
	for (size_t i = 0; i < 10 && i < llr_net_n_tensors(fx.net); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t o;
		llr_net_tensor_info(fx.net, i, &name, &nd, sh, &o);
		CHECK(!strcmp(name, names[i]));
		CHECK(sh[0] == shapes[i][0] && (nd == 1 || sh[1] == shapes[i][1]));
		CHECK(nd == (shapes[i][1] ? 2 : 1));
		CHECK(o == off);
		off += (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
	}
	CHECK(off == np);
	fx_free(&fx);
}

static void test_errors(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR, 0, 8);
	int32_t in[24], tg[24];
	make_batch(3, 8, sents, lens, in, tg, 0);
	llr_batch bt = {.B = 3, .T = 8, .input = in, .target = tg};
	llr_err e = {0};
	double nll;
	tg[4] = V;
	CHECK(llr_net_train_step(fx.net, &bt, NULL, &nll, NULL, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "target") != NULL);
	tg[4] = 1;
	in[4] = V + 3;
	CHECK(llr_net_score(fx.net, &bt, NULL, NULL, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "input") != NULL);
	in[4] = 2;
	llr_csr *bad = llr_csr_identity(V, NULL); /* V columns, the net has F */
	bt.psi = bad;
	CHECK(llr_net_score(fx.net, &bt, NULL, NULL, &e) == LLR_EINVAL);
	bt.psi = NULL;
	llr_csr_free(bad);
	size_t n;
	float *p = llr_net_params(fx.net, &n);
	p[n - 1] = NAN; /* out/b */
	CHECK(llr_net_train_step(fx.net, &bt, NULL, &nll, NULL, &e) == LLR_ENAN);
	CHECK(strstr(e.msg, "not finite") != NULL);
	float lp[24];
	CHECK(llr_net_score(fx.net, &bt, lp, NULL, &e) == LLR_ENAN);
	llr_net_config cf = *llr_net_cfg(fx.net);
	cf.layers = 0;
	CHECK(llr_net_new(&cf, fx.phi, NULL, fx.logb, &e) == NULL && e.code == LLR_EINVAL);
	cf.layers = 2;
	cf.feat_out = F + 1;
	CHECK(llr_net_new(&cf, fx.phi, NULL, fx.logb, &e) == NULL && e.code == LLR_EINVAL);
	cf.feat_out = F;
	CHECK(llr_net_new(&cf, NULL, NULL, fx.logb, &e) == NULL && e.code == LLR_EINVAL);
	cf.dropout = 1.0f;
	CHECK(llr_net_new(&cf, fx.phi, NULL, fx.logb, &e) == NULL && e.code == LLR_EINVAL);
	llr_net_free(NULL);
	llr_net_state_free(NULL);
	fx_free(&fx);
}

/* A tiny model learns four fixed sentences with plain SGD. */
static void test_overfit(void)
{
	for (int kind = LLR_OUT_LOGLINEAR; kind <= LLR_OUT_SOFTMAX; kind++) {
		fixture fx;
		fx_init(&fx, kind, 0, 9);
		llr_rng r;
		llr_rng_seed(&r, 9);
		llr_net_init(fx.net, &r);
		static const int a[] = {1, 2, 3, 4, 5, 0}, b[] = {6, 7, 3, 8, 0}, c[] = {9, 10, 1, 2, 3, 0}, d[] = {5, 4, 0};
		const int *ss[] = {a, b, c, d};
		const int ls[] = {6, 5, 6, 3};
		int32_t in[24], tg[24];
		make_batch(4, 6, ss, ls, in, tg, 0);
		llr_batch bt = {.B = 4, .T = 6, .input = in, .target = tg};
		size_t n;
		float *p = llr_net_params(fx.net, &n), *g = llr_net_grads(fx.net, NULL);
		double first = 0, last = 0;
		int64_t nt = 0;
		for (int it = 0; it < 1000; it++) {
			double nll;
			memset(g, 0, n * sizeof *g);
			CHECK_OK(llr_net_train_step(fx.net, &bt, NULL, &nll, &nt, NULL));
			if (it == 0)
				first = nll / nt;
			last = nll / nt;
			for (size_t i = 0; i < n; i++)
				p[i] -= 2.0f * g[i] / (float)nt;
		}
		printf("#   %s: loss per token %.3f -> %.3f\n", kind == LLR_OUT_SOFTMAX ? "softmax" : "loglinear", first, last);
		CHECK(last < 0.25 * first);
		fx_free(&fx);
	}
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(12);
	RUN(test_onehot_equals_softmax);
	RUN(test_normalised);
	RUN(test_padding);
	RUN(test_step_and_alone);
	RUN(test_score_packed);
	RUN(test_score_threads);
	RUN(test_slices);
	RUN(test_determinism);
	RUN(test_tensors);
	RUN(test_errors);
	RUN(test_overfit);
	llr_blas_set_threads(2);
	RUN(test_step_and_alone);
	DONE();
}
