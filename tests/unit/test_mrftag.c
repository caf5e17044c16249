/*
 * test_mrftag.c - the MRF tagger of lib/family/mrf (tagger.h): on random
 * tiny chains, log Z and the Viterbi path against brute-force
 * enumeration of every tag sequence, the gradient of -log p(y | x)
 * against central finite differences, the features of a sentence, and
 * the model file's round trip (the same weights, bit for bit).
 */
#include <lbfgs.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "family/mrf/tagger.h"
#include "llrnn.h"
#include "test.h"

#define NF 6
#define NT 3

/* A random sentence of n positions with 1..3 features each, and tags. */
static void random_sentence(llr_rng *r, size_t n, mrft_feats *f, int32_t *y)
{
	static size_t ptr[16];
	static int32_t ids[64];
	size_t k = 0;
	ptr[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = 1 + (size_t)(llr_rng_uniform(r) * 3);
		for (size_t j = 0; j < m; j++)
			ids[k++] = (int32_t)(llr_rng_uniform(r) * NF);
		ptr[i + 1] = k;
		y[i] = (int32_t)(llr_rng_uniform(r) * NT);
	}
	*f = (mrft_feats){.ptr = ptr, .ids = ids, .n = n};
}

static void random_weights(llr_rng *r, double *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = llr_rng_normal(r);
}

/* log Z and the best path by enumerating all T^n sequences. */
static double brute(const double *w, const mrft_feats *f, int32_t *best, double *bscore)
{
	size_t n = f->n, total = 1;
	int32_t y[16];
	for (size_t i = 0; i < n; i++)
		total *= NT;
	double m = -INFINITY, z = 0;
	for (size_t c = 0; c < total; c++) {
		size_t x = c;
		for (size_t i = 0; i < n; i++, x /= NT)
			y[i] = (int32_t)(x % NT);
		double s = mrft_score(NF, NT, w, f, y);
		z += exp(s);
		if (s > m) {
			m = s;
			memcpy(best, y, n * sizeof *y);
		}
	}
	*bscore = m;
	return log(z);
}

static void test_brute_force(void)
{
	llr_rng r;
	llr_rng_seed(&r, 7);
	mrft_ws ws = {0};
	double w[mrft_nparams(NF, NT)];
	CHECK(mrft_ws_reserve(&ws, NT, 8) == LLR_OK);
	for (int rep = 0; rep < 40; rep++) {
		size_t n = 1 + (size_t)(llr_rng_uniform(&r) * 6);
		mrft_feats f;
		int32_t y[16], best[16], vb[16];
		random_sentence(&r, n, &f, y);
		random_weights(&r, w, mrft_nparams(NF, NT));
		double bs, logz = brute(w, &f, best, &bs);
		CHECK_NEAR(mrft_logz(&ws, NF, NT, w, &f), logz, 1e-9 * (1 + fabs(logz)));
		double vs = mrft_viterbi(&ws, NF, NT, w, &f, vb);
		CHECK_NEAR(vs, bs, 1e-9 * (1 + fabs(bs)));
		CHECK_NEAR(mrft_score(NF, NT, w, &f, vb), bs, 1e-9 * (1 + fabs(bs)));
		CHECK_NEAR(mrft_nll(&ws, NF, NT, w, &f, y, NULL), logz - mrft_score(NF, NT, w, &f, y), 1e-9 * (1 + fabs(logz)));
	}
	mrft_ws_free(&ws);
}

static void test_gradient(void)
{
	llr_rng r;
	llr_rng_seed(&r, 11);
	mrft_ws ws = {0};
	const size_t np = mrft_nparams(NF, NT);
	double w[mrft_nparams(NF, NT)], g[mrft_nparams(NF, NT)];
	CHECK(mrft_ws_reserve(&ws, NT, 8) == LLR_OK);
	for (int rep = 0; rep < 10; rep++) {
		size_t n = 1 + (size_t)(llr_rng_uniform(&r) * 6);
		mrft_feats f;
		int32_t y[16];
		random_sentence(&r, n, &f, y);
		random_weights(&r, w, np);
		memset(g, 0, sizeof g);
		mrft_nll(&ws, NF, NT, w, &f, y, g);
		double worst = 0;
		for (size_t i = 0; i < np; i++) {
			const double h = 1e-5, keep = w[i];
			w[i] = keep + h;
			double up = mrft_nll(&ws, NF, NT, w, &f, y, NULL);
			w[i] = keep - h;
			double down = mrft_nll(&ws, NF, NT, w, &f, y, NULL);
			w[i] = keep;
			double d = fabs((up - down) / (2 * h) - g[i]);
			worst = d > worst ? d : worst;
		}
		CHECK(worst < 1e-6);
		if (worst >= 1e-6)
			printf("#   sentence of %zu: largest gradient error %g\n", n, worst);
	}
	mrft_ws_free(&ws);
}

static int has(const llr_strmap *m, const char *s)
{
	return llr_strmap_get(m, s, strlen(s)) >= 0;
}

static void test_features(void)
{
	llr_strmap *m = llr_strmap_new();
	mrft_feats f = {0};
	llr_err e = {0};
	const char *words[] = {"Le", "chat", "dort", "."};
	size_t lens[] = {2, 4, 4, 1};
	CHECK(mrft_features(&f, m, 1, 1, words, lens, 4, &e) == LLR_OK);
	CHECK(f.n == 4);
	CHECK(has(m, "BIAS") && has(m, "W-1=<s>") && has(m, "W0=Le") && has(m, "W1=chat") && has(m, "W1=</s>"));
	CHECK(has(m, "PRE:c") && has(m, "PRE:cha") && !has(m, "PRE:chat") && has(m, "SUF:at$"));
	CHECK(has(m, "ORTH:cap") && has(m, "ORTH:punct"));
	/* position 1 (chat): bias, three words, its shape */
	int32_t w0 = llr_strmap_get(m, "W0=chat", 7), found = 0;
	for (size_t k = f.ptr[1]; k < f.ptr[2]; k++)
		found |= f.ids[k] == w0;
	CHECK(found);
	/* a lookup without add leaves out what the map lacks */
	size_t before = llr_strmap_size(m);
	const char *other[] = {"chien"};
	size_t olen[] = {5};
	CHECK(mrft_features(&f, m, 0, 1, other, olen, 1, &e) == LLR_OK);
	CHECK(llr_strmap_size(m) == before);
	for (size_t k = f.ptr[0]; k < f.ptr[1]; k++)
		CHECK(strcmp(llr_strmap_str(m, f.ids[k]), "W0=chien"));
	mrft_feats_free(&f);
	llr_strmap_free(m);
}

/* m saved to a temporary file and loaded again into *back: the load's
 * status (its message printed when it fails). */
static int save_load(const mrft_model *m, mrft_model **back)
{
	char path[] = "/tmp/test_mrftag.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	llr_err e = {0};
	int rc = mrft_model_save(path, m, &e);
	CHECK(rc == LLR_OK);
	if (rc == LLR_OK)
		rc = mrft_model_load(path, back, &e);
	if (rc != LLR_OK)
		printf("#   %s\n", e.msg);
	remove(path);
	return rc;
}

static void test_round_trip(void)
{
	llr_rng r;
	llr_rng_seed(&r, 3);
	mrft_model m = {.T = NT, .M = 1, .F = NF};
	m.tags = llr_strmap_new();
	m.feats = llr_strmap_new();
	m.meta = llr_meta_new();
	const char *tn[] = {"DET", "NOUN", "VERB"};
	for (int i = 0; i < NT; i++)
		llr_strmap_add(m.tags, tn[i], strlen(tn[i]));
	for (int i = 0; i < NF; i++) {
		char b[16];
		snprintf(b, sizeof b, "W0=w%d", i);
		llr_strmap_add(m.feats, b, strlen(b));
	}
	double w[mrft_nparams(NF, NT)];
	random_weights(&r, w, mrft_nparams(NF, NT));
	m.w = w;
	mrft_model *back = NULL;
	CHECK(save_load(&m, &back) == LLR_OK);
	if (back) {
		CHECK(back->T == NT && back->F == NF && back->M == 1);
		CHECK(!memcmp(back->w, w, sizeof w));
		CHECK(!strcmp(llr_strmap_str(back->tags, 2), "VERB"));
	}
	mrft_model_free(back);
	llr_strmap_free(m.tags);
	llr_strmap_free(m.feats);
	llr_meta_free(m.meta);
}

/* A model of few tags and many features (more than INT32_MAX / 4096,
 * which a corpus gives with a wide word window) is written by training,
 * so it loads: the bound on F is the trainer's (its parameters fit
 * liblbfgs's int), not one for the largest tag set. */
static void test_many_features(void)
{
	enum { T = 2, F = INT32_MAX / MRFT_MAX_TAGS + 2 };
	mrft_model m = {.T = T, .M = 8, .F = F};
	m.tags = llr_strmap_new();
	m.feats = llr_strmap_new();
	m.meta = llr_meta_new();
	m.w = llr_calloc(mrft_nparams(F, T), sizeof *m.w);
	CHECK(m.tags && m.feats && m.meta && m.w);
	if (!m.tags || !m.feats || !m.meta || !m.w)
		return;
	llr_strmap_add(m.tags, "A", 1);
	llr_strmap_add(m.tags, "B", 1);
	char b[32];
	for (int i = 0; i < F; i++)
		llr_strmap_add(m.feats, b, (size_t)snprintf(b, sizeof b, "W0=w%d", i));
	m.w[mrft_nparams(F, T) - 1] = 0.5;
	mrft_model *back = NULL;
	CHECK(save_load(&m, &back) == LLR_OK);
	CHECK(back && back->F == F && back->w[mrft_nparams(F, T) - 1] == 0.5);
	mrft_model_free(back);
	llr_strmap_free(m.tags);
	llr_strmap_free(m.feats);
	llr_meta_free(m.meta);
	free(m.w);
}

/* liblbfgs's returns: those of a run that took place are stop reasons;
 * those of one that did not (out of memory for its work space, a
 * parameter refused) are errors, not a model to save with its starting
 * weights as if a line search had ended it. */
static void test_lbfgs_stop(void)
{
	CHECK(!strcmp(mrf_lbfgs_stop(LBFGS_SUCCESS, 0), "converged"));
	CHECK(!strcmp(mrf_lbfgs_stop(LBFGSERR_MAXIMUMITERATION, 0), "epochs"));
	CHECK(!strcmp(mrf_lbfgs_stop(LBFGSERR_ROUNDING_ERROR, 0), "line-search"));
	CHECK(!strcmp(mrf_lbfgs_stop(LBFGSERR_INCREASEGRADIENT, 0), "line-search"));
	CHECK(!strcmp(mrf_lbfgs_stop(1, 1), "max-time"));
	CHECK(mrf_lbfgs_stop(LBFGSERR_OUTOFMEMORY, 0) == NULL);
	CHECK(mrf_lbfgs_stop(LBFGSERR_INVALID_N, 0) == NULL);
	CHECK(mrf_lbfgs_stop(LBFGSERR_UNKNOWNERROR, 0) == NULL);
	llr_err e = {0};
	CHECK(mrf_lbfgs_err(LBFGSERR_OUTOFMEMORY, 10, &e) == LLR_ENOMEM && strstr(e.msg, "out of memory"));
	CHECK(mrf_lbfgs_err(LBFGSERR_INVALID_N, 10, &e) == LLR_EINVAL);
}

int main(void)
{
	PLAN(6);
	RUN(test_brute_force);
	RUN(test_gradient);
	RUN(test_features);
	RUN(test_round_trip);
	RUN(test_many_features);
	RUN(test_lbfgs_stop);
	DONE();
}
