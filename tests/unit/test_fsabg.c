/*
 * test_fsabg.c - an automaton as a factor of the background of the
 * log-linear output (lib/fsa/, loglinear.c, issue 51): the sparse
 * normaliser over the allowed tokens (arcs, the default arc's share of
 * the row pass, </s> with its final weight) against a dense sum in
 * double over every word with b_fsa = 0 outside the language, for the
 * loss, log p, the gradient E_p[phi] - phi(y) and the whole
 * distribution, alone over the unigram background and times an n-gram
 * background, for a regular expression (default arcs, excluded tokens)
 * and a weighted OpenFst text automaton; a finite-difference check of
 * the gradient through the constrained normaliser; the same with phi's
 * classes (words of identical rows merged, the pass over the rows run
 * over the classes), so that the default arc's share of that pass is
 * checked class-merged; a rejected prefix
 * (state -1) gives -inf everywhere and never NaN; the fsa/ members read
 * back equal.
 */
#include <stdlib.h>
#include <unistd.h>

#include "llrnn.h"
#include "nn.h"
#include "fsa_vocab.h"
#include "test.h"
#include "gradcheck.h"

enum { NW = 12,
       FEAT = 7,
       NPOS = 150,
       CTX = 2,
       W = CTX + 1 };

static llr_ngram *markov_ngram(void)
{
	llr_rng r;
	llr_rng_seed(&r, 77);
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(3, (size_t)1 << 26, &e);
	char line[512];
	for (int s = 0; s < 300; s++) {
		int len = 1 + (int)llr_rng_below(&r, 8), prev = (int)llr_rng_below(&r, NW);
		size_t k = 0;
		for (int i = 0; i < len; i++) {
			int w = llr_rng_uniform(&r) < 0.6 ? (prev * 3 + (int)llr_rng_below(&r, 3)) % NW : (int)llr_rng_below(&r, NW);
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

/* V random rows; with dup, word v >= DUP repeats the row of v % DUP, so
 * that phi has DUP classes. */
enum { DUP = 5 };
static llr_csr *make_phi(int V, int dup, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(FEAT);
	int32_t cols[DUP][4];
	float vals[DUP][4];
	int nk[DUP];
	for (int v = 0; v < V; v++) {
		int u = v % DUP, k = 1 + (int)llr_rng_below(r, 3);
		if (!dup || v < DUP) {
			for (int j = 0; j < k; j++) {
				cols[u][j] = (int32_t)llr_rng_below(r, FEAT);
				vals[u][j] = (float)(0.3 + llr_rng_uniform(r)) * (llr_rng_uniform(r) < 0.2f ? -1.0f : 1.0f);
			}
			nk[u] = k;
		}
		llr_csr_builder_row(b, cols[u], vals[u], (size_t)nk[u], NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

/* A weighted acceptor in OpenFst text: w0 (cost 0.5) or w1, then any of
 * w2 w3 w4 with costs, looping, final with cost 0.25. */
static const char weighted_fst[] = "0 1 w0 0.5\n0 1 w1\n1 2 w2 1.5\n1 2 w3\n2 1 w4 0.75\n2 2 w2 2\n1 0.25\n2\n";

typedef struct fix {
	llr_ngram *m;
	llr_strmap *vocab;
	llr_ngram_bg *g;
	llr_fsa *a;
	int V;
	llr_csr *phi;
	float *logb;
	int32_t ctx[NPOS * W], tg[NPOS];
	float A[FEAT * NPOS];
	llr_ll o;
	llr_ll_classes cls;
	int has_cls;
	float *work;
	double *chunk;
} fix;

/* ln b_fsa(q; v), -inf where not allowed. */
static double fsa_lnb(const fix *x, int32_t q, int32_t v)
{
	if (q < 0)
		return -INFINITY;
	if (v == 0)
		return (double)llr_fsa_final(x->a, q);
	float w;
	return llr_fsa_next(x->a, q, v, &w) >= 0 ? (double)w : -INFINITY;
}

static void fix_init(fix *x, int ngram, int weighted, int classes)
{
	llr_rng r;
	llr_rng_seed(&r, 11 + ngram + 2 * weighted + 4 * classes);
	llr_err e = {0};
	memset(x, 0, sizeof *x);
	x->vocab = fsa_test_vocab(NW);
	x->V = (int)llr_strmap_size(x->vocab);
	x->m = markov_ngram();
	x->g = llr_ngram_bg_new(x->m, x->vocab, &e);
	CHECK(x->g != NULL);
	x->logb = malloc((size_t)x->V * sizeof *x->logb);
	memcpy(x->logb, llr_ngram_bg_logb1(x->g), (size_t)x->V * sizeof *x->logb);
	if (weighted) {
		char path[] = "/tmp/test_fsabg.XXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0 && write(fd, weighted_fst, sizeof weighted_fst - 1) == (ssize_t)(sizeof weighted_fst - 1));
		close(fd);
		x->a = llr_fsa_read(path, x->vocab, &e);
		unlink(path);
	} else {
		x->a = llr_fsa_regex("w0 [^ w1 w2]* (w3|w4) w5?", x->vocab, &e);
	}
	CHECK(x->a != NULL);
	x->phi = make_phi(x->V, classes, &r);
	int32_t NV = llr_ngram_vocab_size(x->m), S = llr_fsa_states(x->a);
	for (int n = 0; n < NPOS; n++) {
		for (int k = 0; k < CTX; k++)
			x->ctx[n * W + k] = (int32_t)llr_rng_below(&r, (uint64_t)NV);
		int32_t q = (int32_t)llr_rng_below(&r, (uint64_t)S);
		x->ctx[n * W + CTX] = q;
		/* a target the automaton allows in q, or -1 */
		int32_t ok[64], nok = 0;
		for (int v = 0; v < x->V; v++)
			if (fsa_lnb(x, q, v) > -INFINITY)
				ok[nok++] = v;
		CHECK(nok > 0);
		x->tg[n] = n % 13 == 7 ? -1 : ok[llr_rng_below(&r, (uint64_t)nok)];
	}
	for (int i = 0; i < FEAT * NPOS; i++)
		x->A[i] = (float)(3.0 * (llr_rng_uniform(&r) - 0.5));
	x->o = (llr_ll){x->V, FEAT, x->phi, x->logb, 0, NULL, ngram ? x->g : NULL, ngram ? CTX : 0, NULL, NULL, 0, 0, x->a};
	if (classes) {
		CHECK(llr_ll_classes_build(&x->cls, x->phi, x->logb, &e) == LLR_OK);
		CHECK(x->cls.C == DUP);
		x->o.cls = &x->cls;
		x->has_cls = 1;
	}
	if (!ngram) /* the context is the state alone */
		for (int n = 0; n < NPOS; n++)
			x->ctx[n] = x->ctx[n * W + CTX];
	x->work = malloc(llr_ll_work_size(x->V, 3) * sizeof(float));
	x->chunk = malloc(llr_ll_chunk_size(NPOS) * sizeof(double));
}

static void fix_free(fix *x)
{
	if (x->has_cls)
		llr_ll_classes_free(&x->cls);
	llr_csr_free(x->phi);
	llr_fsa_free(x->a);
	llr_ngram_bg_free(x->g);
	llr_strmap_free(x->vocab);
	llr_ngram_free(x->m);
	free(x->logb);
	free(x->work);
	free(x->chunk);
}

/* Dense reference at position n: l[v] = ln b(K; v) + s_v (-inf where
 * b = 0), and log Z over the allowed words. */
static double dense(const fix *x, const float *A, int n, double *l)
{
	int ng = x->o.bg != NULL;
	const int32_t *c = x->ctx + (size_t)n * (ng ? W : 1);
	int32_t q = c[ng ? CTX : 0];
	double mx = -INFINITY, z = 0;
	for (int v = 0; v < x->V; v++) {
		l[v] = (ng ? llr_ngram_bg_logp(x->g, c, CTX, v) : (double)x->logb[v]) + fsa_lnb(x, q, v);
		for (int32_t k = x->phi->indptr[v]; k < x->phi->indptr[v + 1]; k++)
			l[v] += (double)x->phi->data[k] * A[(size_t)x->phi->indices[k] * NPOS + n];
		mx = fmax(mx, l[v]);
	}
	for (int v = 0; v < x->V; v++)
		z += exp(l[v] - mx);
	return mx + log(z);
}

static double fsa_loss(void *p)
{
	fix *x = p;
	double nll = 0;
	llr_ll_run(&x->o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = NPOS, .lda = NPOS, .A = x->A, .target = x->tg, .nll = &nll, .work = x->work, .chunk = x->chunk, .threads = 1, .ctx = x->ctx});
	return nll;
}

static void fsa_case(int ngram, int weighted, int threads, int classes)
{
	fix x;
	fix_init(&x, ngram, weighted, classes);
	int V = x.V, F = FEAT, N = NPOS;
	float *lt = calloc(N, sizeof *lt), *dA = calloc((size_t)F * N, sizeof *dA), *all = calloc((size_t)N * V, sizeof *all);
	double nll = 0, nllg = 0, ne = -1, ned = -1, l[64], ref = 0, wlp = 0, wdA = 0, wall = 0;
	size_t excluded = 0;
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = N, .A = x.A, .target = x.tg, .nll = &nll, .logp_t = lt, .norm_err = &ne, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = N, .A = x.A, .target = x.tg, .nll = &nllg, .dA = dA, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = N, .lda = N, .A = x.A, .norm_err = &ned, .logp_all = all, .work = x.work, .chunk = x.chunk, .threads = threads, .ctx = x.ctx}) == LLR_OK);
	for (int n = 0; n < N; n++) {
		double lz = dense(&x, x.A, n, l);
		for (int v = 0; v < V; v++) {
			float got = all[(size_t)n * V + v];
			CHECK(!isnan(got));
			if (l[v] == -INFINITY) {
				excluded++;
				CHECK(got == -INFINITY);
			} else {
				wall = fmax(wall, fabs(got - (l[v] - lz)));
			}
		}
		int y = x.tg[n];
		if (y < 0)
			continue;
		ref -= l[y] - lz;
		wlp = fmax(wlp, fabs(lt[n] - (l[y] - lz)));
		double g[FEAT] = {0};
		for (int v = 0; v < V; v++)
			for (int32_t k = x.phi->indptr[v]; k < x.phi->indptr[v + 1]; k++)
				g[x.phi->indices[k]] += exp(l[v] - lz) * x.phi->data[k] - (v == y ? x.phi->data[k] : 0.0);
		for (int f = 0; f < F; f++)
			wdA = fmax(wdA, fabs(dA[(size_t)f * N + n] - g[f]));
	}
	printf("# ngram %d weighted %d threads %d classes %d: %zu excluded, |log p - dense| %.2g, |dA - dense| %.2g, |logp_all - dense| %.2g, norm %.2g %.2g\n",
	       ngram, weighted, threads, classes, excluded, wlp, wdA, wall, ne, ned);
	CHECK(excluded > (size_t)N); /* the automaton does exclude words */
	CHECK_NEAR(nll, ref, 1e-6 * fabs(ref));
	CHECK_NEAR(nllg, ref, 1e-6 * fabs(ref));
	CHECK(wlp < 2e-5);
	CHECK(wdA < 2e-5);
	CHECK(wall < 2e-5);
	CHECK(fabs(ne) < 1e-5);
	CHECK(fabs(ned) < 1e-5);
	if (threads == 1) {
		llr_rng grng;
		llr_rng_seed(&grng, 0x51);
		CHECK(gradcheck("automaton background dA", x.A, dA, (size_t)F * N, fsa_loss, &x, 200, &grng) == 0);
		CHECK(g_max_analytic > 0.05);
	}
	free(lt), free(dA), free(all);
	fix_free(&x);
}

static void test_regex_unigram(void)
{
	fsa_case(0, 0, 1, 0);
	fsa_case(0, 0, 3, 0);
}

static void test_regex_ngram(void)
{
	fsa_case(1, 0, 1, 0);
	fsa_case(1, 0, 3, 0);
}

static void test_weighted_ngram(void)
{
	fsa_case(1, 1, 1, 0);
	fsa_case(0, 1, 1, 0);
}

/* phi's classes: the pass over the rows runs over DUP classes, the
 * allowed tokens' and the default arc's corrections per word. */
static void test_classes(void)
{
	fsa_case(0, 0, 1, 1);
	fsa_case(1, 0, 3, 1);
	fsa_case(1, 1, 1, 1);
	fsa_case(0, 1, 1, 1);
}

/* A rejected prefix (state -1): every log p -inf, no NaN; its target's
 * loss is +inf, which scoring accepts (a zeroprob) and training does
 * not. */
static void test_rejected_prefix(void)
{
	fix x;
	fix_init(&x, 0, 0, 0);
	int V = x.V, N = NPOS;
	for (int n = 0; n < N; n++)
		x.ctx[n] = n % 3 ? x.ctx[n] : -1;
	float *all = calloc((size_t)N * V, sizeof *all), *lt = calloc(N, sizeof *lt), *dA = calloc((size_t)FEAT * N, sizeof *dA);
	double nll = 0, ne = -1;
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = N, .lda = N, .A = x.A, .norm_err = &ne, .logp_all = all, .work = x.work, .chunk = x.chunk, .threads = 1, .ctx = x.ctx}) == LLR_OK);
	int bad = 0;
	for (int n = 0; n < N; n += 3)
		for (int v = 0; v < V; v++)
			bad += all[(size_t)n * V + v] != -INFINITY;
	CHECK(bad == 0);
	CHECK(fabs(ne) < 1e-5);
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = N, .A = x.A, .target = x.tg, .nll = &nll, .logp_t = lt, .work = x.work, .chunk = x.chunk, .threads = 1, .ctx = x.ctx}) == LLR_OK);
	CHECK(nll == INFINITY);
	CHECK(x.tg[0] < 0 || lt[0] == -INFINITY);
	CHECK(llr_ll_run(&x.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = N, .A = x.A, .target = x.tg, .nll = &nll, .dA = dA, .work = x.work, .chunk = x.chunk, .threads = 1, .ctx = x.ctx}) == LLR_ENAN);
	free(all), free(lt), free(dA);
	fix_free(&x);
}

/* The fsa/ members written and read back: the same answers everywhere. */
static void test_members(void)
{
	fix x;
	fix_init(&x, 0, 1, 0);
	llr_err e = {0};
	char path[] = "/tmp/test_fsabg_tar.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	llr_meta *m = llr_meta_new();
	CHECK(llr_fsa_meta(x.a, m) == LLR_OK);
	llr_tensor_writer *w = llr_tw_open(path, "features", m, &e);
	CHECK(w != NULL && llr_fsa_write(w, x.a, &e) == LLR_OK && llr_tw_close(w, &e) == LLR_OK);
	llr_meta_free(m);
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	CHECK(r != NULL);
	llr_fsa *b = llr_fsa_get_members(r, llr_tr_meta(r), x.vocab, &e);
	CHECK(b != NULL);
	int diff = llr_fsa_states(b) != llr_fsa_states(x.a) || llr_fsa_start(b) != llr_fsa_start(x.a);
	for (int32_t q = 0; !diff && q < llr_fsa_states(b); q++) {
		diff |= llr_fsa_final(b, q) != llr_fsa_final(x.a, q) || llr_fsa_dist(b, q) != llr_fsa_dist(x.a, q);
		for (int v = 0; v < x.V; v++) {
			float w1 = 0, w2 = 0;
			diff |= llr_fsa_next(b, q, v, &w1) != llr_fsa_next(x.a, q, v, &w2) || w1 != w2;
		}
	}
	CHECK(diff == 0);
	llr_fsa_free(b);
	llr_tr_close(r);
	unlink(path);
	fix_free(&x);
}

int main(void)
{
	PLAN(6);
	RUN(test_regex_unigram);
	RUN(test_regex_ngram);
	RUN(test_weighted_ngram);
	RUN(test_classes);
	RUN(test_rejected_prefix);
	RUN(test_members);
	DONE();
}
