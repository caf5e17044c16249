/*
 * test_ngbg.c - the n-gram as context-dependent background of the
 * log-linear output (lib/ngram/background.c, loglinear.c): the sparse
 * form of b(K; .) against the plain backoff query for every word, and
 * the output layer's sparse Z(K), log p, gradient and full distribution
 * against a dense O(V) computation in double, with and without the
 * classes of identical Phi rows, on one and three threads, for the
 * identity Phi too; a finite-difference check of the gradient.
 *
 * The n-gram is estimated from a random Markov corpus over 12 words that
 * also holds <unk>, so <unk> is listed after some contexts; the lexicon
 * lacks one n-gram word and holds two words the n-gram lacks (both map
 * to <unk>, with identical Phi rows, so they share a class).
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

enum { NW = 12,
       FEAT = 7,
       NPOS = 150,
       CTX = 2 };

static llr_ngram *markov_ngram(int order)
{
	llr_rng r;
	llr_rng_seed(&r, 77);
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(order, (size_t)1 << 26, &e);
	char line[512];
	for (int s = 0; s < 300; s++) {
		int len = 1 + (int)llr_rng_below(&r, 8), prev = (int)llr_rng_below(&r, NW);
		size_t k = 0;
		for (int i = 0; i < len; i++) {
			/* mostly a successor of the previous word, sometimes any */
			int w = llr_rng_uniform(&r) < 0.6 ? (prev * 3 + (int)llr_rng_below(&r, 3)) % NW : (int)llr_rng_below(&r, NW);
			if (llr_rng_uniform(&r) < 0.05)
				k += (size_t)snprintf(line + k, sizeof line - k, "%s<unk>", i ? " " : "");
			else
				k += (size_t)snprintf(line + k, sizeof line - k, "%sw%d", i ? " " : "", w);
			prev = w;
		}
		CHECK(llr_ngram_count_line(c, line, k, &e) == LLR_OK);
	}
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	o.discount_fallback = 1;
	llr_ngram *m = NULL;
	CHECK(llr_ngram_estimate(c, &o, &m, NULL, &e) == LLR_OK);
	llr_ngram_counter_free(c);
	return m;
}

/* The lexicon: </s>, <unk>, w0..w10 (not w11), zz1, zz2. */
static llr_strmap *lexicon_vocab(void)
{
	llr_strmap *v = llr_strmap_new();
	llr_strmap_add(v, "</s>", 4);
	llr_strmap_add(v, "<unk>", 5);
	char w[8];
	for (int i = 0; i < NW - 1; i++)
		llr_strmap_add(v, w, (size_t)snprintf(w, sizeof w, "w%d", i));
	llr_strmap_add(v, "zz1", 3);
	llr_strmap_add(v, "zz2", 3);
	return v;
}

/* Phi: random rows, zz1 and zz2 (the last two) identical. */
static llr_csr *make_phi(int V, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(FEAT);
	int32_t cols[4];
	float vals[4];
	int k = 0;
	for (int v = 0; v < V; v++) {
		if (v < V - 1) {
			k = 1 + (int)llr_rng_below(r, 3);
			for (int j = 0; j < k; j++) {
				cols[j] = (int32_t)llr_rng_below(r, FEAT);
				vals[j] = (float)(0.3 + llr_rng_uniform(r)) * (llr_rng_uniform(r) < 0.2f ? -1.0f : 1.0f);
			}
		}
		llr_csr_builder_row(b, cols, vals, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct fix {
	llr_ngram *m;
	llr_strmap *vocab;
	llr_ngram_bg *g;
	int V, F;
	llr_csr *phi;
	int32_t ctx[NPOS * CTX], tg[NPOS];
	float A[FEAT * NPOS];
	llr_ll o;
	llr_ll_classes cls;
	float *work;
	double *chunk;
} fix;

static void fix_init(fix *x, int identity)
{
	llr_rng r;
	llr_rng_seed(&r, 5 + identity);
	llr_err e = {0};
	memset(x, 0, sizeof *x);
	x->m = markov_ngram(3);
	x->vocab = lexicon_vocab();
	x->g = llr_ngram_bg_new(x->m, x->vocab, &e);
	CHECK(x->g != NULL);
	x->V = (int)llr_strmap_size(x->vocab);
	x->F = identity ? x->V : FEAT;
	x->phi = identity ? llr_csr_identity(x->V, NULL) : make_phi(x->V, &r);
	int32_t NV = llr_ngram_vocab_size(x->m), bos = llr_ngram_bos(x->m);
	for (int n = 0; n < NPOS; n++) {
		/* sentence starts, full contexts, and random pairs */
		for (int k = 0; k < CTX; k++)
			x->ctx[n * CTX + k] = (int32_t)llr_rng_below(&r, (uint64_t)NV);
		if (n % 5 == 0) {
			x->ctx[n * CTX] = -1;
			x->ctx[n * CTX + 1] = bos;
		} else if (n % 5 == 1) {
			x->ctx[n * CTX] = bos;
		}
		x->tg[n] = n % 13 == 7 ? -1 : (int32_t)llr_rng_below(&r, (uint64_t)x->V);
	}
	float *A = identity ? NULL : x->A;
	if (!identity)
		for (int i = 0; i < FEAT * NPOS; i++)
			A[i] = (float)(3.0 * (llr_rng_uniform(&r) - 0.5));
	x->o = (llr_ll){x->V, x->F, x->phi, llr_ngram_bg_logb1(x->g), identity, NULL, x->g, CTX, NULL, NULL, 0, 0, NULL};
	x->work = malloc(llr_ll_work_size(x->V, 3) * sizeof(float));
	x->chunk = malloc(llr_ll_chunk_size(NPOS) * sizeof(double));
}

static void fix_free(fix *x)
{
	llr_ll_classes_free(&x->cls);
	llr_csr_free(x->phi);
	llr_ngram_bg_free(x->g);
	llr_strmap_free(x->vocab);
	llr_ngram_free(x->m);
	free(x->work);
	free(x->chunk);
}

/* The dense reference at position n: l[x] = ln b(K; x) + s_x (double)
 * and log Z. */
static double dense(const fix *x, const float *A, int lda, int n, double *l)
{
	double mx = -INFINITY, z = 0;
	for (int v = 0; v < x->V; v++) {
		l[v] = llr_ngram_bg_logp(x->g, x->ctx + n * CTX, CTX, v);
		for (int32_t k = x->phi->indptr[v]; k < x->phi->indptr[v + 1]; k++)
			l[v] += (double)x->phi->data[k] * A[(size_t)x->phi->indices[k] * lda + n];
		mx = fmax(mx, l[v]);
	}
	for (int v = 0; v < x->V; v++)
		z += exp(l[v] - mx);
	return mx + log(z);
}

/* The sparse form of b(K; .) is the backoff query, word by word. */
static void test_expand(void)
{
	fix x;
	fix_init(&x, 0);
	CHECK(llr_ngram_bg_absent(x.g) == 2);
	CHECK(llr_ngram_bg_ctxlen(x.g) == CTX);
	int32_t xs[64];
	double lnb[64], worst = 0;
	size_t listed = 0, unk_listed = 0;
	int32_t unk = 1;
	for (int n = 0; n < NPOS; n++) {
		double logc;
		size_t k = llr_ngram_bg_expand(x.g, x.ctx + n * CTX, CTX, &logc, xs, lnb);
		CHECK(k <= (size_t)x.V);
		listed += k;
		for (int v = 0; v < x.V; v++) {
			double b = logc + (double)llr_ngram_bg_logb1(x.g)[v];
			int seen = 0;
			for (size_t i = 0; i < k; i++)
				if (xs[i] == v) {
					b = lnb[i];
					seen++;
				}
			CHECK(seen <= 1);
			unk_listed += seen && v == unk;
			worst = fmax(worst, fabs(b - llr_ngram_bg_logp(x.g, x.ctx + n * CTX, CTX, v)));
		}
	}
	/* the query sums log10 in float, the expansion in double */
	printf("# |sparse ln b - query ln b| %.2g over %zu listed\n", worst, listed);
	CHECK(worst < 1e-5);
	CHECK(listed > NPOS);  /* contexts do list continuations */
	CHECK(unk_listed > 0); /* and <unk> among them */
	fix_free(&x);
}

static double bg_loss(void *p)
{
	fix *x = p;
	double nll = 0;
	llr_ll_run(&x->o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = NPOS, .lda = NPOS, .A = x->A, .target = x->tg, .nll = &nll, .work = x->work, .chunk = x->chunk, .threads = 1, .ctx = x->ctx});
	return nll;
}

/* Loss, log p, gradient and distribution against the dense sums. */
static void bg_case(int identity, int classes, int threads)
{
	fix x;
	fix_init(&x, identity);
	int V = x.V, F = x.F, N = NPOS;
	float *A = identity ? calloc((size_t)F * N, sizeof *A) : x.A;
	if (identity) {
		llr_rng r;
		llr_rng_seed(&r, 9);
		for (size_t i = 0; i < (size_t)F * N; i++)
			A[i] = (float)(3.0 * (llr_rng_uniform(&r) - 0.5));
	}
	llr_err e = {0};
	if (classes) {
		CHECK(llr_ll_classes_build(&x.cls, x.phi, x.o.logb, &e) == LLR_OK);
		CHECK(x.cls.C == V - 1);
		x.o.cls = &x.cls;
	}
	float *lt = calloc(N, sizeof *lt), *dA = calloc((size_t)F * N, sizeof *dA), *all = calloc((size_t)N * V, sizeof *all);
	double nll = 0, nllg = 0, ne = -1, l[64], ref = 0, wlp = 0, wdA = 0, wall = 0;
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = N, .A = A, .target = x.tg, .nll = &nll, .logp_t = lt, .norm_err = &ne, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = N, .A = A, .target = x.tg, .nll = &nllg, .dA = dA, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	double ned = -1;
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = N, .lda = N, .A = A, .norm_err = &ned, .logp_all = all, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	for (int n = 0; n < N; n++) {
		double lz = dense(&x, A, N, n, l);
		for (int v = 0; v < V; v++)
			wall = fmax(wall, fabs(all[(size_t)n * V + v] - (l[v] - lz)));
		int y = x.tg[n];
		if (y < 0) {
			CHECK(lt[n] == 0.0f);
			for (int f = 0; f < F; f++)
				wdA = fmax(wdA, fabs(dA[(size_t)f * N + n]));
			continue;
		}
		ref -= l[y] - lz;
		wlp = fmax(wlp, fabs(lt[n] - (l[y] - lz)));
		/* E_p[phi] - phi(y) */
		double g[64] = {0};
		for (int v = 0; v < V; v++)
			for (int32_t k = x.phi->indptr[v]; k < x.phi->indptr[v + 1]; k++)
				g[x.phi->indices[k]] += exp(l[v] - lz) * x.phi->data[k] - (v == y ? x.phi->data[k] : 0.0);
		for (int f = 0; f < F; f++)
			wdA = fmax(wdA, fabs(dA[(size_t)f * N + n] - g[f]));
	}
	printf("# identity %d classes %d threads %d: |log p - dense| %.2g, |dA - dense| %.2g, |logp_all - dense| %.2g, norm %.2g %.2g\n", identity, classes, threads, wlp, wdA, wall, ne, ned);
	CHECK_NEAR(nll, ref, 1e-6 * fabs(ref));
	CHECK_NEAR(nllg, ref, 1e-6 * fabs(ref));
	CHECK(wlp < 2e-5);
	CHECK(wdA < 2e-5);
	CHECK(wall < 2e-5);
	CHECK(fabs(ne) < 1e-5);
	CHECK(fabs(ned) < 1e-5);
	if (!identity && !classes && threads == 1) {
		llr_rng grng;
		llr_rng_seed(&grng, 0x1234);
		CHECK(gradcheck("n-gram background dA", A, dA, (size_t)F * N, bg_loss, &x, 200, &grng) == 0);
		CHECK(g_max_analytic > 0.05);
	}
	if (identity)
		free(A);
	free(lt), free(dA), free(all);
	fix_free(&x);
}

static void test_loglinear_ngram(void)
{
	bg_case(0, 0, 1);
}

static void test_loglinear_ngram_classes_threads(void)
{
	bg_case(0, 1, 1);
	bg_case(0, 1, 3);
	bg_case(0, 0, 3);
}

static void test_softmax_ngram(void)
{
	bg_case(1, 0, 1);
}

/* ------------------------------------------------- in the net and model */

static llr_lexicon *ngram_lexicon(void)
{
	llr_err e = {0};
	llr_rng r;
	llr_rng_seed(&r, 31);
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = lexicon_vocab();
	x->features = llr_strmap_new();
	char f[8];
	for (int i = 0; i < FEAT; i++)
		llr_strmap_add(x->features, f, (size_t)snprintf(f, sizeof f, "F%d", i));
	int V = (int)llr_strmap_size(x->vocab);
	x->phi = make_phi(V, &r);
	x->ngram = markov_ngram(3);
	x->bg = llr_ngram_bg_new(x->ngram, x->vocab, &e);
	x->logb = malloc((size_t)V * sizeof *x->logb);
	memcpy(x->logb, llr_ngram_bg_logb1(x->bg), (size_t)V * sizeof *x->logb);
	x->eos_id = 0;
	x->unk_id = 1;
	return x;
}

typedef struct net_ctx {
	llr_net *net;
	llr_batch bt;
} net_ctx;

static double net_nll(void *p)
{
	net_ctx *c = p;
	float lp[64];
	llr_net_score(c->net, &c->bt, lp, NULL, NULL);
	double s = 0;
	for (int n = 0; n < c->bt.T * c->bt.B; n++)
		s -= lp[n];
	return s;
}

/* Batch scoring (contexts from the batch), step-by-step inference
 * (contexts from the state), threads, the gradient end to end, and the
 * model file round trip. */
static void test_net_model(void)
{
	llr_err e = {0};
	llr_net_config c = {.embed = 5, .hidden = 6, .layers = 1, .output = LLR_OUT_LOGLINEAR};
	llr_rnnlm *m = llr_rnnlm_new(ngram_lexicon(), &c, &e);
	CHECK(m != NULL);
	if (!m)
		return;
	llr_rng r;
	llr_rng_seed(&r, 3);
	llr_net_init_scheme(m->net, &r, LLR_INIT_TORCH);
	enum { B = 3,
	       T = 7 };
	int32_t in[T * B], tg[T * B];
	int V = (int)llr_strmap_size(m->lex->vocab);
	for (int b = 0; b < B; b++) {
		int len = T - 2 * b;
		for (int t = 0; t < T; t++) {
			int32_t y = t < len - 1 ? 2 + (int32_t)llr_rng_below(&r, (uint64_t)(V - 2)) : t == len - 1 ? 0
			                                                                                           : -1;
			tg[t * B + b] = y;
			in[t * B + b] = t == 0 ? LLR_BOS_ID : tg[(t - 1) * B + b] >= 0 ? tg[(t - 1) * B + b]
			                                                               : 0;
		}
	}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg};
	float lp[T * B], lp2[T * B];
	double ne = -1;
	CHECK(llr_net_score(m->net, &bt, lp, &ne, &e) == LLR_OK);
	CHECK(fabs(ne) < 1e-5);
	/* one stream at a time through llr_net_step */
	llr_net_state *st = llr_net_state_new(m->net, 1);
	float *all = malloc((size_t)V * sizeof *all);
	double worst = 0;
	for (int b = 0; b < B; b++) {
		llr_net_state_reset(st);
		for (int t = 0; t < T && tg[t * B + b] >= 0; t++) {
			CHECK(llr_net_step(m->net, st, &in[t * B + b], NULL, all, &e) == LLR_OK);
			worst = fmax(worst, fabs(all[tg[t * B + b]] - lp[t * B + b]));
			double z = 0;
			for (int v = 0; v < V; v++)
				z += exp(all[v]);
			CHECK(fabs(z - 1) < 1e-5);
		}
	}
	printf("# |step log p - batch log p| %.2g\n", worst);
	CHECK(worst < 1e-5);
	llr_net_state_free(st);
	free(all);
	/* two scoring threads: the same numbers */
	CHECK(llr_net_set_score_threads(m->net, 2, &e) == LLR_OK);
	CHECK(llr_net_score(m->net, &bt, lp2, NULL, &e) == LLR_OK);
	worst = 0;
	for (int n = 0; n < T * B; n++)
		worst = fmax(worst, fabs(lp[n] - lp2[n]));
	CHECK(worst < 1e-5);
	CHECK(llr_net_set_score_threads(m->net, 1, &e) == LLR_OK);
	/* the gradient of the whole net with this background */
	size_t np;
	float *P = llr_net_params(m->net, &np), *G = llr_net_grads(m->net, &np);
	memset(G, 0, np * sizeof *G);
	double nll;
	int64_t ntok;
	CHECK(llr_net_train_step(m->net, &bt, NULL, &nll, &ntok, &e) == LLR_OK);
	net_ctx nc = {m->net, bt};
	CHECK_NEAR(nll, net_nll(&nc), 1e-4 * nll);
	CHECK(gradcheck("net with n-gram background", P, G, np, net_nll, &nc, 150, &r) == 0);
	/* with a zero adaptor the net predicts the n-gram, renormalised over
	 * the lexicon, after the words of the stream since <s> */
	float *keep = malloc(np * sizeof *keep);
	memcpy(keep, P, np * sizeof *keep);
	for (size_t i = 0; i < llr_net_n_tensors(m->net); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_net_tensor_info(m->net, i, &name, &nd, sh, &off);
		if (!strncmp(name, "out/", 4))
			memset(P + off, 0, (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1) * sizeof *P);
	}
	CHECK(llr_net_score(m->net, &bt, lp2, NULL, &e) == LLR_OK);
	worst = 0;
	const llr_ngram_bg *g = m->lex->bg;
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T && tg[t * B + b] >= 0; t++) {
			int32_t ctx[2];
			ctx[0] = t >= 1 ? (t >= 2 ? llr_ngram_bg_map(g, in[(t - 1) * B + b]) : llr_ngram_bos(m->lex->ngram)) : -1;
			ctx[1] = t >= 1 ? llr_ngram_bg_map(g, in[t * B + b]) : llr_ngram_bos(m->lex->ngram);
			double z = 0;
			for (int v = 0; v < V; v++)
				z += exp(llr_ngram_bg_logp(g, ctx, 2, v));
			worst = fmax(worst, fabs(lp2[t * B + b] - (llr_ngram_bg_logp(g, ctx, 2, tg[t * B + b]) - log(z))));
		}
	printf("# zero adaptor: |log p - n-gram log p| %.2g\n", worst);
	CHECK(worst < 1e-5);
	memcpy(P, keep, np * sizeof *keep);
	free(keep);
	/* the model file carries the n-gram */
	char path[512];
	snprintf(path, sizeof path, "%s/ngbg.model", test_tmpdir());
	CHECK(llr_rnnlm_save(path, m, NULL, &e) == LLR_OK);
	llr_rnnlm *l = NULL;
	CHECK(llr_rnnlm_load(path, &l, &e) == LLR_OK);
	if (l) {
		CHECK(l->lex->ngram != NULL && llr_ngram_order(l->lex->ngram) == 3);
		CHECK(llr_rnnlm_fits(l, m->lex, &e) == LLR_OK);
		CHECK(llr_net_score(l->net, &bt, lp2, NULL, &e) == LLR_OK);
		CHECK(!memcmp(lp, lp2, sizeof lp));
		llr_rnnlm_free(l);
	}
	/* a background that is not the n-gram's unigram level is refused */
	m->lex->logb[3] -= 0.5f;
	llr_net *bad = llr_rnnlm_net_new(m->lex, &c, &e);
	CHECK(bad == NULL && e.code == LLR_EINVAL);
	llr_net_free(bad);
	m->lex->logb[3] += 0.5f;
	llr_rnnlm_free(m);
}

/* Refusals: no <unk> in the n-gram for a word it lacks. */
static void test_refusals(void)
{
	const char *dir = test_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/nounk.arpa", dir);
	FILE *f = fopen(path, "w");
	fputs("\\data\\\nngram 1=3\n\n\\1-grams:\n-0.5\t</s>\n-99\t<s>\n-0.2\ta\n\n\\end\\\n", f);
	fclose(f);
	llr_err e = {0};
	llr_ngram *m = NULL;
	CHECK(llr_ngram_read_arpa(path, &m, &e) == LLR_OK);
	llr_strmap *v = llr_strmap_new();
	llr_strmap_add(v, "</s>", 4);
	llr_strmap_add(v, "a", 1);
	llr_ngram_bg *g = llr_ngram_bg_new(m, v, &e);
	CHECK(g != NULL);
	llr_ngram_bg_free(g);
	llr_strmap_add(v, "b", 1);
	g = llr_ngram_bg_new(m, v, &e);
	CHECK(g == NULL && e.code == LLR_EINVAL && strstr(e.msg, "'b'"));
	llr_strmap_free(v);
	llr_ngram_free(m);
}

int main(void)
{
	PLAN(6);
	RUN(test_expand);
	RUN(test_loglinear_ngram);
	RUN(test_loglinear_ngram_classes_threads);
	RUN(test_softmax_ngram);
	RUN(test_net_model);
	RUN(test_refusals);
	DONE();
}
