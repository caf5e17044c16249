/*
 * test_encdec.c - the encoder-decoder's layers and network: finite-
 * difference gradient checks of the attention (dot, bilinear, MLP) alone
 * and of the whole network (softmax and log-linear outputs, with and
 * without the source-conditioned background, with dropout), the
 * step-by-step decoder against forced decoding, the primed background
 * itself, and the priming table's estimates.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

static llr_csr *rand_csr(int V, int F, int maxnnz, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(F);
	for (int v = 0; v < V; v++) {
		int32_t cols[16];
		float vals[16];
		int k = 1 + (int)llr_rng_below(r, (uint64_t)maxnnz);
		for (int j = 0; j < k; j++) {
			cols[j] = (int32_t)llr_rng_below(r, (uint64_t)F);
			vals[j] = llr_rng_uniform(r) < 0.5 ? 1.0f : (float)(0.3 + llr_rng_uniform(r));
		}
		llr_csr_builder_row(b, cols, vals, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

/* ------------------------------------------------------------ attention */

enum { AB = 3,
       AS = 4,
       AC = 5,
       AA = 3 };

typedef struct att_ctx {
	llr_attn a;
	float q[AB * AC], M[AS * AB * AC], W[AC * AC], Wq[AC * AA], Wk[AC * AA], c[AA], v[AA];
	float K[AS * AB * AC], w[AB * AC], alpha[AB * AS], ctx[AB * AC], Q[AB * AA], U[AB * AS * AA];
} att_ctx;

/* loss = sum_b w_b . ctx_b, keys recomputed from M */
static double att_loss(void *p)
{
	att_ctx *x = p;
	llr_attn_keys(&x->a);
	llr_attn_forward(&x->a, x->q, AC, x->alpha, x->ctx, AC, x->Q, x->U);
	double s = 0;
	for (int i = 0; i < AB * AC; i++)
		s += (double)x->w[i] * x->ctx[i];
	return s;
}

static void attention_case(int kind, int shared)
{
	llr_rng r;
	llr_rng_seed(&r, 100 + kind + 10 * shared);
	static att_ctx x;
	memset(&x, 0, sizeof x);
	int32_t len[AB] = {AS, 2, 0};
	fill(x.q, AB * AC, &r, 1.0);
	fill(x.M, AS * AB * AC, &r, 1.0);
	fill(x.W, AC * AC, &r, 0.7);
	fill(x.Wq, AC * AA, &r, 0.7);
	fill(x.Wk, AC * AA, &r, 0.7);
	fill(x.c, AA, &r, 0.5);
	fill(x.v, AA, &r, 1.0);
	fill(x.w, AB * AC, &r, 1.0);
	x.a = (llr_attn){.kind = kind, .B = AB, .S = AS, .C = AC, .H = AC, .A = AA, .shared = shared, .len = shared ? NULL : len, .M = x.M, .K = x.K, .W = kind == LLR_ATT_MLP ? x.Wq : x.W, .Wk = x.Wk, .c = x.c, .v = x.v};
	att_loss(&x);
	/* alpha is a distribution over the first len positions */
	for (int b = 0; b < AB; b++) {
		int L = shared ? AS : len[b];
		double s = 0;
		for (int j = 0; j < AS; j++) {
			s += x.alpha[b * AS + j];
			if (j >= L)
				CHECK(x.alpha[b * AS + j] == 0.0f);
		}
		CHECK_NEAR(s, L ? 1.0 : 0.0, 1e-6);
	}
	/* analytic gradients */
	float dq[AB * AC] = {0}, dM[AS * AB * AC] = {0}, dK[AS * AB * AC] = {0}, dQ[AB * AA], dW[AC * AC] = {0};
	float dWq[AC * AA] = {0}, dWk[AC * AA] = {0}, dc[AA] = {0}, dv[AA] = {0}, de[AB * AS];
	llr_attn_backward(&x.a, x.q, AC, x.alpha, x.U, x.w, AC, dq, AC, dM, dK, dQ, kind == LLR_ATT_MLP ? dWq : dW, dv, de);
	llr_attn_keys_backward(&x.a, dK, dM, dW, dWk, dc);
	int nM = shared ? AS * AC : AS * AB * AC;
	char nm[64];
	const char *kn = llr_attention_name(kind);
	snprintf(nm, sizeof nm, "attention %s%s q", kn, shared ? " shared" : "");
	CHECK(gradcheck(nm, x.q, dq, AB * AC, att_loss, &x, AB * AC, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	snprintf(nm, sizeof nm, "attention %s%s memory", kn, shared ? " shared" : "");
	CHECK(gradcheck(nm, x.M, dM, (size_t)nM, att_loss, &x, (size_t)nM, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	if (kind == LLR_ATT_BILINEAR) {
		snprintf(nm, sizeof nm, "attention bilinear%s W", shared ? " shared" : "");
		CHECK(gradcheck(nm, x.W, dW, AC * AC, att_loss, &x, AC * AC, &r) == 0);
		CHECK(g_max_analytic > 5 * ATOL);
	}
	if (kind == LLR_ATT_MLP) {
		float *ps[] = {x.Wq, x.Wk, x.c, x.v}, *gs[] = {dWq, dWk, dc, dv};
		size_t ns[] = {AC * AA, AC * AA, AA, AA};
		const char *names[] = {"Wq", "Wk", "c", "v"};
		for (int i = 0; i < 4; i++) {
			snprintf(nm, sizeof nm, "attention mlp%s %s", shared ? " shared" : "", names[i]);
			CHECK(gradcheck(nm, ps[i], gs[i], ns[i], att_loss, &x, ns[i], &r) == 0);
			CHECK(g_max_analytic > 5 * ATOL);
		}
	}
	/* a wrong gradient is caught */
	dq[1] += 0.5f;
	g_quiet = 1;
	CHECK(gradcheck("attention, corrupted q (expect 1 bad)", x.q, dq, AB * AC, att_loss, &x, AB * AC, &r) == 1);
	g_quiet = 0;
}

static void test_attention_dot(void)
{
	attention_case(LLR_ATT_DOT, 0);
	attention_case(LLR_ATT_DOT, 1);
}

static void test_attention_bilinear(void)
{
	attention_case(LLR_ATT_BILINEAR, 0);
	attention_case(LLR_ATT_BILINEAR, 1);
}

static void test_attention_mlp(void)
{
	attention_case(LLR_ATT_MLP, 0);
	attention_case(LLR_ATT_MLP, 1);
}

/* --------------------------------------------------------- the network */

enum { VS = 6,
       FS = 5,
       V = 7,
       F = 5,
       B = 3,
       S = 6,
       T = 5 };

typedef struct net_fix {
	llr_csr *spsi, *phi;
	float logb[V];
	float table[VS * V];
	int32_t src[S * B], slen[B], in[T * B], tg[T * B];
} net_fix;

static void make_fixture(net_fix *f, llr_rng *r)
{
	f->spsi = rand_csr(VS, FS, 3, r);
	f->phi = rand_csr(V, F, 3, r);
	for (int v = 0; v < V; v++)
		f->logb[v] = (float)log(0.05 + llr_rng_uniform(r));
	for (int s = 0; s < VS; s++) {
		double z = 0;
		for (int x = 0; x < V; x++)
			z += f->table[s * V + x] = (float)(0.05 + llr_rng_uniform(r));
		for (int x = 0; x < V; x++)
			f->table[s * V + x] = (float)(f->table[s * V + x] / z);
	}
	int sl[B] = {6, 3, 1}, tl[B] = {5, 3, 1};
	for (int b = 0; b < B; b++) {
		f->slen[b] = sl[b];
		for (int j = 0; j < S; j++)
			f->src[j * B + b] = j < sl[b] ? (int32_t)llr_rng_below(r, VS) : 99; /* padding: ignored */
		for (int t = 0; t < T; t++) {
			f->tg[t * B + b] = t < tl[b] ? (int32_t)llr_rng_below(r, V) : -1;
			f->in[t * B + b] = t == 0 ? LLR_BOS_ID : t < tl[b] ? f->tg[(t - 1) * B + b]
			                                                   : 0;
		}
	}
}

static void free_fixture(net_fix *f)
{
	llr_csr_free(f->spsi);
	llr_csr_free(f->phi);
}

static llr_encdec *make_net(net_fix *f, int att, int output, int primed, float dropout, int layers, llr_rng *r, llr_err *e)
{
	llr_encdec_config c = {
	    .src_vocab = VS,
	    .src_feat = FS,
	    .vocab = V,
	    .feat_out = output == LLR_OUT_SOFTMAX ? V : F,
	    .feat_in = output == LLR_OUT_SOFTMAX ? V : F,
	    .embed = 4,
	    .hidden = 8,
	    .enc_layers = layers,
	    .attn_hidden = 4,
	    .attention = att,
	    .output = output,
	    .primed = primed,
	    .dropout = dropout,
	};
	int sm = output == LLR_OUT_SOFTMAX;
	llr_encdec *m = llr_encdec_new(&c, f->spsi, sm ? NULL : f->phi, NULL, sm ? NULL : f->logb, primed ? f->table : NULL, e);
	if (!m)
		return NULL;
	llr_encdec_init(m, r);
	size_t np;
	float *P = llr_encdec_params(m, &np);
	fill(P, np, r, 0.9); /* larger than init: more signal */
	for (size_t i = 0; i < llr_encdec_n_tensors(m); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_encdec_tensor_info(m, i, &name, &nd, sh, &off);
		/* larger weights where the signal is weak: the attention, the
		 * encoder's recurrence, the output */
		size_t n = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		if (!strcmp(name, "att/v"))
			fill(P + off, n, r, 4.0);
		else if (!strncmp(name, "att/", 4))
			fill(P + off, n, r, 1.0);
		else if (strstr(name, "/wh") || !strcmp(name, "out/w"))
			fill(P + off, n, r, 2.0);
	}
	if (primed)
		P[np - 1] = 0.8f; /* beta */
	return m;
}

typedef struct net_ctx {
	llr_encdec *m;
	llr_encdec_batch bt;
	uint64_t seed;
} net_ctx;

static double net_loss(void *p)
{
	net_ctx *c = p;
	llr_rng r;
	llr_rng_seed(&r, c->seed);
	double nll = 0;
	int64_t nt = 0;
	if (llr_encdec_train_step(c->m, &c->bt, c->seed ? &r : NULL, &nll, &nt, NULL) != LLR_OK)
		return NAN;
	return nll;
}

static void net_case(int att, int output, int primed, float dropout)
{
	llr_rng r;
	llr_rng_seed(&r, 7 + att * 3 + output * 11 + primed * 17);
	net_fix f;
	make_fixture(&f, &r);
	llr_err e = {0};
	llr_encdec *m = make_net(&f, att, output, primed, dropout, 2, &r, &e);
	CHECK(m != NULL);
	if (!m) {
		printf("#   %s\n", e.msg);
		free_fixture(&f);
		return;
	}
	net_ctx c = {m, {.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg}, dropout > 0 ? 5 : 0};
	size_t np;
	float *P = llr_encdec_params(m, &np), *G = llr_encdec_grads(m, NULL);
	memset(G, 0, np * sizeof *G);
	double l0 = net_loss(&c);
	CHECK(isfinite(l0) && l0 > 0);
	float *g = malloc(np * sizeof *g);
	memcpy(g, G, np * sizeof *g);
	char tag[64];
	snprintf(tag, sizeof tag, "%s %s%s%s", llr_attention_name(att), output == LLR_OUT_SOFTMAX ? "softmax" : "ll",
	         primed ? " primed" : "", dropout > 0 ? " dropout" : "");
	for (size_t i = 0; i < llr_encdec_n_tensors(m); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_encdec_tensor_info(m, i, &name, &nd, sh, &off);
		size_t n = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		char nm[128];
		snprintf(nm, sizeof nm, "encdec %s %s", tag, name);
		CHECK(gradcheck(nm, P + off, g + off, n, net_loss, &c, n, &r) == 0);
		if (!(g_max_analytic > 5 * ATOL))
			printf("#   %s: max |analytic| %.3g, not above 5 * atol\n", nm, g_max_analytic);
		CHECK(g_max_analytic > 5 * ATOL);
	}
	/* negative control: a zeroed gradient of the decoder's recurrent weights */
	for (size_t i = 0; i < llr_encdec_n_tensors(m); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_encdec_tensor_info(m, i, &name, &nd, sh, &off);
		if (strcmp(name, "dec/wr"))
			continue;
		size_t n = (size_t)sh[0] * (size_t)sh[1];
		float *zero = calloc(n, sizeof *zero);
		g_quiet = 1;
		CHECK(zero && gradcheck("dec/wr zeroed (expect bad)", P + off, zero, n, net_loss, &c, n, &r) > 0);
		g_quiet = 0;
		free(zero);
	}
	free(g);
	llr_encdec_free(m);
	free_fixture(&f);
}

static void test_encdec_dot(void)
{
	net_case(LLR_ATT_DOT, LLR_OUT_SOFTMAX, 0, 0.0f);
	net_case(LLR_ATT_DOT, LLR_OUT_LOGLINEAR, 0, 0.0f);
	net_case(LLR_ATT_DOT, LLR_OUT_LOGLINEAR, 1, 0.0f);
}

static void test_encdec_bilinear(void)
{
	net_case(LLR_ATT_BILINEAR, LLR_OUT_SOFTMAX, 0, 0.0f);
	net_case(LLR_ATT_BILINEAR, LLR_OUT_LOGLINEAR, 1, 0.0f);
}

static void test_encdec_mlp(void)
{
	net_case(LLR_ATT_MLP, LLR_OUT_LOGLINEAR, 0, 0.0f);
	net_case(LLR_ATT_MLP, LLR_OUT_LOGLINEAR, 1, 0.0f);
}

/* The source-conditioned background: softmax and log-linear outputs,
 * and with dropout (the masks are the same at every evaluation). */
static void test_encdec_primed(void)
{
	net_case(LLR_ATT_MLP, LLR_OUT_SOFTMAX, 1, 0.0f);
	net_case(LLR_ATT_BILINEAR, LLR_OUT_LOGLINEAR, 1, 0.3f);
}

/* Step by step, with slots reordered, the decoder gives the log-
 * probabilities of forced decoding; the attention rows are distributions. */
static void test_encdec_step(void)
{
	int kinds[3] = {LLR_ATT_DOT, LLR_ATT_BILINEAR, LLR_ATT_MLP};
	for (int ki = 0; ki < 3; ki++) {
		llr_rng r;
		llr_rng_seed(&r, 31 + ki);
		net_fix f;
		make_fixture(&f, &r);
		llr_err e = {0};
		llr_encdec *m = make_net(&f, kinds[ki], LLR_OUT_LOGLINEAR, ki == 2, 0.0f, 2, &r, &e);
		CHECK(m != NULL);
		if (!m) {
			free_fixture(&f);
			continue;
		}
		float logp[T * B];
		CHECK(llr_encdec_score(m, &(llr_encdec_batch){.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg}, logp, NULL, &e) == LLR_OK);
		llr_encdec_state *st = llr_encdec_state_new(m, 2);
		for (int b = 0; b < B; b++) {
			int32_t src[S];
			for (int j = 0; j < f.slen[b]; j++)
				src[j] = f.src[j * B + b];
			CHECK(llr_encdec_start(m, st, src, f.slen[b], &e) == LLR_OK);
			float lp[2 * V], at[2 * S];
			for (int t = 0; t < T && f.tg[t * B + b] >= 0; t++) {
				/* slot 1 follows the sentence, slot 0 a decoy; then swap */
				int32_t in[2] = {t ? (f.in[t * B + b] + 1) % V : LLR_BOS_ID, f.in[t * B + b]};
				CHECK(llr_encdec_step(m, st, 2, in, lp, at, &e) == LLR_OK);
				CHECK_NEAR(lp[V + f.tg[t * B + b]], logp[t * B + b], 2e-5);
				double z = 0, za = 0;
				for (int x = 0; x < V; x++)
					z += exp(lp[V + x]);
				for (int j = 0; j < f.slen[b]; j++)
					za += at[f.slen[b] + j];
				CHECK_NEAR(z, 1.0, 1e-5);
				CHECK_NEAR(za, 1.0, 1e-5);
				int from[2] = {1, 1};
				llr_encdec_state_select(st, from, 2);
				/* slot 0 now holds the sentence too: copy it back to slot 1 */
				int back[2] = {0, 0};
				llr_encdec_state_select(st, back, 2);
			}
		}
		llr_encdec_state_free(st);
		llr_encdec_free(m);
		free_fixture(&f);
	}
}

/* With a zero adaptor and beta 1, a primed network predicts tbar(x | C):
 * the background is exactly the bag of the source's table rows. */
static void test_encdec_background(void)
{
	llr_rng r;
	llr_rng_seed(&r, 41);
	net_fix f;
	make_fixture(&f, &r);
	llr_err e = {0};
	for (int output = LLR_OUT_LOGLINEAR; output <= LLR_OUT_SOFTMAX; output++) {
		llr_encdec *m = make_net(&f, LLR_ATT_MLP, output, 1, 0.0f, 1, &r, &e);
		CHECK(m != NULL);
		if (!m)
			continue;
		size_t np;
		float *P = llr_encdec_params(m, &np);
		for (size_t i = 0; i < llr_encdec_n_tensors(m); i++) {
			const char *name;
			int nd;
			int64_t sh[2];
			size_t off;
			llr_encdec_tensor_info(m, i, &name, &nd, sh, &off);
			if (!strncmp(name, "out/", 4))
				memset(P + off, 0, (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1) * sizeof *P);
			if (!strcmp(name, "prime/beta"))
				P[off] = 1.0f;
		}
		llr_encdec_state *st = llr_encdec_state_new(m, 1);
		int32_t src[3] = {1, 4, 1};
		CHECK(llr_encdec_start(m, st, src, 3, &e) == LLR_OK);
		float lp[V];
		int32_t in[1] = {LLR_BOS_ID};
		CHECK(llr_encdec_step(m, st, 1, in, lp, NULL, &e) == LLR_OK);
		for (int x = 0; x < V; x++) {
			double tb = (f.table[1 * V + x] * 2.0 + f.table[4 * V + x]) / 3.0;
			CHECK_NEAR(lp[x], log(tb), 1e-5);
		}
		/* an empty source: the uniform distribution */
		CHECK(llr_encdec_start(m, st, src, 0, &e) == LLR_OK);
		CHECK(llr_encdec_step(m, st, 1, in, lp, NULL, &e) == LLR_OK);
		for (int x = 0; x < V; x++)
			CHECK_NEAR(lp[x], -log((double)V), 1e-5);
		llr_encdec_state_free(st);
		llr_encdec_free(m);
	}
	free_fixture(&f);
}

/* Bad configurations and batches are refused with a message. */
static void test_encdec_errors(void)
{
	llr_rng r;
	llr_rng_seed(&r, 3);
	net_fix f;
	make_fixture(&f, &r);
	llr_err e = {0};
	llr_encdec_config c = {.src_vocab = VS, .src_feat = FS, .vocab = V, .embed = 3, .hidden = 5, .enc_layers = 1, .attention = LLR_ATT_DOT, .output = LLR_OUT_SOFTMAX};
	CHECK(llr_encdec_new(&c, f.spsi, NULL, NULL, NULL, NULL, &e) == NULL && e.code == LLR_EINVAL && strstr(e.msg, "even"));
	c.hidden = 4;
	c.primed = 1;
	CHECK(llr_encdec_new(&c, f.spsi, NULL, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "table"));
	c.primed = 0;
	c.attention = 9;
	CHECK(llr_encdec_new(&c, f.spsi, NULL, NULL, NULL, NULL, &e) == NULL && strstr(e.msg, "attention"));
	llr_encdec *m = make_net(&f, LLR_ATT_DOT, LLR_OUT_SOFTMAX, 0, 0.0f, 1, &r, &e);
	int32_t bad = f.src[0];
	f.src[0] = VS;
	double nll;
	int64_t nt;
	llr_encdec_batch bt = {.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg};
	CHECK(llr_encdec_train_step(m, &bt, NULL, &nll, &nt, &e) == LLR_EINVAL && strstr(e.msg, "source position 0"));
	f.src[0] = bad;
	f.slen[1] = S + 1;
	CHECK(llr_encdec_train_step(m, &bt, NULL, &nll, &nt, &e) == LLR_EINVAL && strstr(e.msg, "source length"));
	f.slen[1] = 2;
	f.tg[0] = V;
	CHECK(llr_encdec_score(m, &bt, NULL, NULL, &e) == LLR_EINVAL && strstr(e.msg, "target"));
	llr_encdec_free(m);
	free_fixture(&f);
}

/* ------------------------------------------------------ priming table */

static void test_prime_table(void)
{
	/* pairs: s0 -> x0; s0 s1 -> x0 x1; s2 -> x2 */
	int32_t src[] = {0, 0, 1, 2}, tgt[] = {0, 0, 1, 2};
	size_t soff[] = {0, 1, 3, 4}, toff[] = {0, 1, 3, 4};
	float t[4 * 3];
	llr_err e = {0};
	CHECK(llr_prime_table(4, 3, 3, src, soff, tgt, toff, 0, 0.1, t, &e) == LLR_OK);
	double u[3] = {3.0 / 7, 2.0 / 7, 2.0 / 7}; /* add-one: (count + 1) / (4 + 3) */
	double n0[3] = {1.5, 0.5, 0.0}, n1[3] = {0.5, 0.5, 0.0};
	for (int x = 0; x < 3; x++) {
		CHECK_NEAR(t[0 * 3 + x], (n0[x] + 0.1 * u[x]) / 2.1, 1e-6);
		CHECK_NEAR(t[1 * 3 + x], (n1[x] + 0.1 * u[x]) / 1.1, 1e-6);
		CHECK_NEAR(t[3 * 3 + x], u[x], 1e-6); /* never seen: the unigram */
	}
	/* EM: s0 explains x0, so s1 takes x1 */
	float t5[4 * 3];
	CHECK(llr_prime_table(4, 3, 3, src, soff, tgt, toff, 5, 0.1, t5, &e) == LLR_OK);
	CHECK(t5[1 * 3 + 1] > t[1 * 3 + 1] + 0.1);
	CHECK(t5[0 * 3 + 0] > t[0 * 3 + 0]);
	for (int s = 0; s < 4; s++) {
		double z = 0;
		for (int x = 0; x < 3; x++) {
			z += t5[s * 3 + x];
			CHECK(t5[s * 3 + x] > 0);
		}
		CHECK_NEAR(z, 1.0, 1e-5);
	}
	tgt[1] = 7;
	CHECK(llr_prime_table(4, 3, 3, src, soff, tgt, toff, 0, 0.1, t, &e) == LLR_EINVAL && strstr(e.msg, "pair 1"));
	size_t none[] = {0, 0};
	CHECK(llr_prime_table(4, 3, 1, src, none, tgt, none, 0, 0.1, t, &e) == LLR_EEMPTY);
}

/* ------------------------------------------------------------ search */

/* Forced-decoding log-probability of ids[0..len) for source src. */
static double forced_logp(llr_encdec *m, const int32_t *src, int slen, const int32_t *ids, int len)
{
	int32_t in[64], tg[64];
	float lp[64];
	for (int t = 0; t < len; t++) {
		in[t] = t ? ids[t - 1] : LLR_BOS_ID;
		tg[t] = ids[t];
	}
	int32_t sl[1] = {slen};
	llr_err e = {0};
	if (llr_encdec_score(m, &(llr_encdec_batch){.B = 1, .S = slen, .T = len, .src = src, .src_len = sl, .input = in, .target = tg}, lp, NULL, &e) < 0)
		return NAN;
	double s = 0;
	for (int t = 0; t < len; t++)
		s += lp[t];
	return s;
}

static void test_encdec_search(void)
{
	llr_rng r;
	llr_rng_seed(&r, 51);
	net_fix f;
	make_fixture(&f, &r);
	llr_err e = {0};
	llr_encdec *m1 = make_net(&f, LLR_ATT_MLP, LLR_OUT_LOGLINEAR, 1, 0.0f, 1, &r, &e);
	llr_encdec *m2 = make_net(&f, LLR_ATT_DOT, LLR_OUT_SOFTMAX, 0, 0.0f, 2, &r, &e);
	CHECK(m1 && m2);
	if (!m1 || !m2)
		return;
	int32_t src[4] = {2, 0, 5, 3}, eos = 1;
	enum { K = 4 };
	llr_encdec_state *s1 = llr_encdec_state_new(m1, K), *s2 = llr_encdec_state_new(m2, K);
	llr_hyp h[K], g[1];
	int n = 0;
	/* greedy is the argmax at every step */
	llr_search_opts go = {.beam = 1, .nbest = 1, .max_len = 12, .len_norm = 0.0, .attention = 1};
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK);
	CHECK(llr_encdec_search(&m1, &s1, 1, eos, &go, g, &n, &e) == LLR_OK && n == 1);
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK);
	int32_t x = LLR_BOS_ID;
	float lp[V];
	for (int t = 0; t < g[0].len; t++) {
		CHECK(llr_encdec_step(m1, s1, 1, &x, lp, NULL, &e) == LLR_OK);
		x = llr_argmax(lp, V);
		CHECK(x == g[0].ids[t]);
	}
	CHECK_NEAR(g[0].logp, forced_logp(m1, src, 4, g[0].ids, g[0].len), 1e-4);
	for (int t = 0; t < g[0].len; t++) {
		double z = 0;
		for (int j = 0; j < 4; j++)
			z += g[0].attn[t * 4 + j];
		CHECK_NEAR(z, 1.0, 1e-5);
	}
	/* beam: n-best sorted by score, each logp that of forced decoding */
	llr_search_opts bo = {.beam = K, .nbest = K, .max_len = 12, .len_norm = 1.0};
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK);
	CHECK(llr_encdec_search(&m1, &s1, 1, eos, &bo, h, &n, &e) == LLR_OK && n == K);
	for (int i = 0; i < n; i++) {
		CHECK_NEAR(h[i].logp, forced_logp(m1, src, 4, h[i].ids, h[i].len), 1e-4);
		CHECK_NEAR(h[i].score, h[i].logp / h[i].len, 1e-9);
		CHECK(h[i].attn == NULL);
		if (i)
			CHECK(h[i].score <= h[i - 1].score);
		CHECK(!h[i].finished || h[i].ids[h[i].len - 1] == eos);
	}
	/* the beam's best by logp is no worse than greedy's here */
	double best = -INFINITY;
	for (int i = 0; i < n; i++)
		if (h[i].finished && h[i].logp > best)
			best = h[i].logp;
	CHECK(best >= g[0].logp - 1e-6);
	for (int i = 0; i < n; i++)
		llr_hyp_clear(&h[i]);
	/* an ensemble of a model with itself is that model */
	llr_encdec *mm[2] = {m1, m1};
	llr_encdec_state *s1b = llr_encdec_state_new(m1, K), *ss[2] = {s1, s1b};
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK && llr_encdec_start(m1, s1b, src, 4, &e) == LLR_OK);
	CHECK(llr_encdec_search(mm, ss, 2, eos, &go, h, &n, &e) == LLR_OK && n == 1);
	CHECK(h[0].len == g[0].len && !memcmp(h[0].ids, g[0].ids, (size_t)g[0].len * sizeof *g[0].ids));
	CHECK_NEAR(h[0].logp, g[0].logp, 1e-5);
	llr_hyp_clear(&h[0]);
	/* two models: the first token's log p is the renormalised mean */
	llr_encdec *m12[2] = {m1, m2};
	llr_encdec_state *s12[2] = {s1, s2};
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK && llr_encdec_start(m2, s2, src, 4, &e) == LLR_OK);
	llr_search_opts one = {.beam = 1, .nbest = 1, .max_len = 1, .len_norm = 0.0};
	CHECK(llr_encdec_search(m12, s12, 2, eos, &one, h, &n, &e) == LLR_OK && n == 1 && h[0].len == 1 && !h[0].finished == (h[0].ids[0] != eos));
	float la[V], lb[V];
	x = LLR_BOS_ID;
	CHECK(llr_encdec_start(m1, s1, src, 4, &e) == LLR_OK && llr_encdec_start(m2, s2, src, 4, &e) == LLR_OK);
	CHECK(llr_encdec_step(m1, s1, 1, &x, la, NULL, &e) == LLR_OK && llr_encdec_step(m2, s2, 1, &x, lb, NULL, &e) == LLR_OK);
	double z = 0;
	for (int v = 0; v < V; v++)
		z += exp(0.5 * (la[v] + lb[v]));
	int32_t y = h[0].ids[0];
	CHECK_NEAR(h[0].logp, 0.5 * (la[y] + lb[y]) - log(z), 1e-5);
	for (int v = 0; v < V; v++)
		CHECK(0.5 * (la[v] + lb[v]) <= 0.5 * (la[y] + lb[y]) + 1e-6);
	llr_hyp_clear(&h[0]);
	/* bad options and mismatched vocabularies are refused */
	llr_search_opts bad = {.beam = 2, .nbest = 3, .max_len = 5};
	CHECK(llr_encdec_search(&m1, &s1, 1, eos, &bad, h, &n, &e) == LLR_EINVAL);
	llr_hyp_clear(&g[0]);
	llr_encdec_state_free(s1);
	llr_encdec_state_free(s1b);
	llr_encdec_state_free(s2);
	llr_encdec_free(m1);
	llr_encdec_free(m2);
	free_fixture(&f);
}

/* ---------------------------------------------------------- model files */

static llr_strmap *names(const char *prefix, int n, int special)
{
	llr_strmap *m = llr_strmap_new();
	char b[32];
	for (int i = 0; i < n - (special ? 2 : 0); i++) {
		snprintf(b, sizeof b, "%s%d", prefix, i);
		llr_strmap_add(m, b, strlen(b));
	}
	if (special) {
		llr_strmap_add(m, LLR_EOS, strlen(LLR_EOS));
		llr_strmap_add(m, LLR_UNK, strlen(LLR_UNK));
	}
	return m;
}

/* A model over the fixture: lexicon (V words, phi), source (VS tokens). */
static llr_encdec_model *make_model(net_fix *f, int att, int primed, llr_rng *r)
{
	llr_encdec_model *m = calloc(1, sizeof *m);
	m->lex = calloc(1, sizeof *m->lex);
	m->lex->vocab = names("w", V, 1);
	m->lex->features = names("F:", F, 0);
	m->lex->phi = llr_csr_copy(f->phi, NULL);
	m->lex->logb = malloc(V * sizeof(float));
	memcpy(m->lex->logb, f->logb, sizeof f->logb);
	for (int v = 0; v < V; v++)
		m->lex->logb[v] = -fabsf(m->lex->logb[v]);
	m->lex->eos_id = V - 2;
	m->lex->unk_id = V - 1;
	m->src = calloc(1, sizeof *m->src);
	m->src->vocab = names("s", VS, 1);
	m->src->features = names("SF:", FS, 0);
	m->src->psi = llr_csr_copy(f->spsi, NULL);
	m->src->eos_id = VS - 2;
	m->src->unk_id = VS - 1;
	if (primed) {
		m->src->table = malloc(sizeof f->table);
		memcpy(m->src->table, f->table, sizeof f->table);
		m->src->prime_iters = 3;
		m->src->prime_k = 0.5;
	}
	m->meta = llr_meta_new();
	llr_meta_set(m->meta, "seed", "7");
	llr_encdec_config c = {.src_vocab = VS, .src_feat = FS, .vocab = V, .feat_out = F, .feat_in = F, .embed = 3, .hidden = 4, .enc_layers = 2, .attn_hidden = 3, .attention = att, .output = LLR_OUT_LOGLINEAR, .primed = primed, .dropout = 0.25f};
	llr_err e = {0};
	m->net = llr_encdec_model_net(&c, m->lex, m->src, &e);
	if (!m->net)
		printf("#   %s\n", e.msg);
	else
		llr_encdec_init(m->net, r);
	return m;
}

static void test_encdec_model_file(void)
{
	llr_rng r;
	llr_rng_seed(&r, 61);
	net_fix f;
	make_fixture(&f, &r);
	llr_encdec_model *m = make_model(&f, LLR_ATT_MLP, 1, &r);
	CHECK(m->net != NULL);
	if (!m->net)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/encdec.model", test_tmpdir());
	llr_err e = {0};
	size_t n;
	float *P = llr_encdec_params(m->net, &n);
	/* a training state whose current weights differ from the best */
	llr_train_state ts = {.epoch = 2, .batch = 3, .step = 11, .best_valid = 1.5, .best_epoch = 1, .last_valid = 1.7, .lr = 0.002};
	llr_optim_config oc;
	llr_optim_defaults(&oc, LLR_OPT_ADAM);
	ts.optim = llr_optim_new(&oc, n, &e);
	ts.best = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		ts.best[i] = P[i] + 0.5f;
	llr_rng_seed(&ts.rng, 5);
	CHECK(llr_encdec_model_save(path, m, &ts, &e) == LLR_OK);
	llr_encdec_model *b = NULL;
	llr_train_state *tb = NULL;
	CHECK(llr_encdec_model_load(path, &b, &tb, &e) == LLR_OK);
	if (!b) {
		printf("#   %s\n", e.msg);
		return;
	}
	size_t nb;
	float *Pb = llr_encdec_params(b->net, &nb);
	CHECK(nb == n && !memcmp(Pb, P, n * sizeof(float))); /* current weights */
	CHECK(tb && tb->best && !memcmp(tb->best, ts.best, n * sizeof(float)));
	CHECK(tb && tb->step == 11 && tb->epoch == 2 && tb->rng.s[0] == ts.rng.s[0]);
	const llr_encdec_config *c = llr_encdec_cfg(b->net);
	CHECK(c->attention == LLR_ATT_MLP && c->primed && c->enc_layers == 2 && c->hidden == 4 && c->attn_hidden == 3 && fabs(c->dropout - 0.25) < 1e-7);
	CHECK(!strcmp(llr_meta_get(b->meta, "family"), "encdec") && !strcmp(llr_meta_get(b->meta, "seed"), "7"));
	CHECK(llr_encdec_model_fits(b, m->lex, m->src, &e) == LLR_OK);
	/* without the state: params/ are the best weights */
	llr_encdec_model *c2 = NULL;
	CHECK(llr_encdec_model_load(path, &c2, NULL, &e) == LLR_OK);
	CHECK(c2 && !memcmp(llr_encdec_params(c2->net, NULL), ts.best, n * sizeof(float)));
	llr_encdec_model_free(c2);
	/* saving again gives the same bytes */
	char path2[512];
	snprintf(path2, sizeof path2, "%s/encdec2.model", test_tmpdir());
	CHECK(llr_encdec_model_save(path2, b, tb, &e) == LLR_OK);
	FILE *f1 = fopen(path, "rb"), *f2 = fopen(path2, "rb");
	int same = f1 && f2;
	for (int ch1 = 0, ch2 = 0; same && ch1 != EOF;) {
		ch1 = fgetc(f1);
		ch2 = fgetc(f2);
		same = ch1 == ch2;
	}
	CHECK(same);
	if (f1)
		fclose(f1);
	if (f2)
		fclose(f2);
	/* a different table does not fit; an LM loader refuses, and back */
	m->src->table[3] *= 0.5f;
	CHECK(llr_encdec_model_fits(b, m->lex, m->src, &e) == LLR_EFORMAT && strstr(e.msg, "priming tables differ"));
	llr_rnnlm *lm = NULL;
	CHECK(llr_rnnlm_load(path, &lm, &e) < 0 && lm == NULL);
	llr_train_state_free(tb);
	llr_encdec_model_free(b);
	llr_encdec_model_free(m);
	llr_optim_free(ts.optim);
	free(ts.best);
	free_fixture(&f);
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(13);
	RUN(test_attention_dot);
	RUN(test_attention_bilinear);
	RUN(test_attention_mlp);
	RUN(test_encdec_dot);
	RUN(test_encdec_bilinear);
	RUN(test_encdec_mlp);
	RUN(test_encdec_primed);
	RUN(test_encdec_step);
	RUN(test_encdec_background);
	RUN(test_encdec_errors);
	RUN(test_encdec_search);
	RUN(test_prime_table);
	RUN(test_encdec_model_file);
	DONE();
}
