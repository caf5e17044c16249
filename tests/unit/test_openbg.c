/*
 * test_openbg.c - unit tests for the open background (lib/ngram/openbg.c)
 * and the spelling model in a lexicon (lib/lexicon/lexicon.c): the
 * stream and model round trips give identical p_spell and lambda; the
 * open background's mass over the vocabulary and over every other string
 * is one (the strings enumerated up to a length, the longer ones by the
 * spelling model's own tail); lambda's Good-Turing estimate and its
 * bounds; a bad spell.lambda is refused naming the key.
 */
#include <math.h>

#include "llrnn.h"
#include "spelling_fixture.h"
#include "test.h"

/* The training types of the spelling model, each once. */
static const char *const words[] = {"le", "la", "les", "un", "une", "sel", "lune", "nu"};
#define NWORDS (sizeof words / sizeof *words)

/* A lexicon of </s>, <unk> and the first nv words, identity phi, a
 * background that gives <unk> 0.1 and the rest unevenly, and a spelling
 * model of the given order. */
static llr_lexicon *spell_lexicon(size_t nv, int order, double lambda)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	x->features = llr_strmap_new();
	llr_strmap_add(x->vocab, LLR_EOS, strlen(LLR_EOS));
	llr_strmap_add(x->vocab, LLR_UNK, strlen(LLR_UNK));
	for (size_t i = 0; i < nv; i++)
		llr_strmap_add(x->vocab, words[i], strlen(words[i]));
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	char f[16];
	for (int32_t i = 0; i < V; i++)
		llr_strmap_add(x->features, f, (size_t)snprintf(f, sizeof f, "TOP:%d", i));
	x->phi = llr_csr_identity(V, NULL);
	x->logb = malloc((size_t)V * sizeof *x->logb);
	double rest = 0;
	for (int32_t i = 0; i < V; i++)
		rest += i == 1 ? 0 : 1.0 + i;
	for (int32_t i = 0; i < V; i++)
		x->logb[i] = (float)log(i == 1 ? 0.1 : 0.9 * (1.0 + i) / rest);
	x->eos_id = 0;
	x->unk_id = 1;
	x->spell = fixture_spelling(words, NWORDS, order);
	x->spell_lambda = lambda;
	return x;
}

static int write_lexicon(const char *path, const llr_lexicon *x, llr_err *e)
{
	llr_meta *m = llr_meta_new();
	if (llr_lexicon_to_meta(x, m) < 0)
		return LLR_ENOMEM;
	llr_tensor_writer *w = llr_tw_open(path, "features", m, e);
	llr_meta_free(m);
	if (!w)
		return LLR_EIO;
	int rc = llr_lexicon_write(w, x, e);
	if (rc < 0) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, e);
}

static int read_lexicon(const char *path, llr_lexicon **x, llr_err *e)
{
	llr_tensor_reader *r = llr_tr_open(path, "features", e);
	if (!r)
		return LLR_EIO;
	int rc = llr_lexicon_read(r, x, e);
	llr_tr_close(r);
	return rc;
}

static const char *const probes[] = {"le", "les", "lune", "zorglub", "4817", "<unk>", "</s>", "été", "\xff\xfe", "a b", ""};
#define NPROBES (sizeof probes / sizeof *probes)

static void same_spelling(const llr_lexicon *a, const llr_lexicon *b)
{
	CHECK(b->spell != NULL);
	if (!b->spell)
		return;
	CHECK(a->spell_lambda == b->spell_lambda);
	CHECK(llr_ngram_order(llr_spelling_ngram(a->spell)) == llr_ngram_order(llr_spelling_ngram(b->spell)));
	for (size_t i = 0; i < NPROBES; i++) {
		double la = llr_spelling_logp(a->spell, probes[i], strlen(probes[i]));
		double lb = llr_spelling_logp(b->spell, probes[i], strlen(probes[i]));
		if (la != lb)
			printf("# '%s': %.17g written, %.17g read\n", probes[i], la, lb);
		CHECK(la == lb);
	}
}

/* The stream (features) and the model file carry the spelling model:
 * identical log-probabilities and lambda after the round trip. */
static void test_round_trip(void)
{
	llr_err e = {0};
	llr_lexicon *x = spell_lexicon(NWORDS, 4, 0.125);
	CHECK(x->spell != NULL);
	char path[512];
	snprintf(path, sizeof path, "%s/openbg.fz", test_tmpdir());
	CHECK(write_lexicon(path, x, &e) == LLR_OK);
	llr_lexicon *y = NULL;
	if (read_lexicon(path, &y, &e) != LLR_OK)
		printf("# read: %s\n", e.msg);
	CHECK(y != NULL);
	if (y) {
		same_spelling(x, y);
		CHECK(!strcmp(llr_meta_get(y->meta, "spell.order"), "4"));
		CHECK(llr_lexicon_same(x, y, "a", "b", &e) == LLR_OK);
	}
	llr_lexicon_free(y);
	remove(path);

	/* the model: llr_rnnlm_save writes the lexicon, llr_rnnlm_load reads it */
	llr_net_config c = {.embed = 4, .hidden = 5, .layers = 1, .output = LLR_OUT_SOFTMAX};
	llr_rnnlm *m = llr_rnnlm_new(x, &c, &e);
	CHECK(m != NULL);
	if (!m) {
		printf("# model: %s\n", e.msg);
		llr_lexicon_free(x);
		return;
	}
	snprintf(path, sizeof path, "%s/openbg.llrnn", test_tmpdir());
	CHECK(llr_rnnlm_save(path, m, NULL, &e) == LLR_OK);
	llr_rnnlm *m2 = NULL;
	if (llr_rnnlm_load(path, &m2, &e) != LLR_OK)
		printf("# load: %s\n", e.msg);
	CHECK(m2 != NULL);
	if (m2)
		same_spelling(m->lex, m2->lex);
	llr_rnnlm_free(m2);
	llr_rnnlm_free(m);
	remove(path);
}

/* p_spell summed over every string of at most L characters (the seen
 * characters, and one unseen one standing for the U unseen ones), the
 * strings in the vocabulary apart; b summed the same way. */
typedef struct {
	double spell_all, spell_out, b_out, unseen_out;
} sums;

static sums enumerate(const llr_lexicon *x, const llr_openbg *g, int L)
{
	const llr_ngram *m = llr_spelling_ngram(x->spell);
	const char *alpha[64];
	int na = 0;
	for (int32_t i = 0; i < llr_ngram_vocab_size(m); i++)
		if (i != llr_ngram_bos(m) && i != llr_ngram_eos(m) && i != llr_ngram_unk(m))
			alpha[na++] = llr_ngram_token(m, i);
	double U = 1112064.0 - na;
	alpha[na++] = "\xce\xa9"; /* never seen */
	sums s = {0, 0, 0, 0};
	char buf[64];
	for (int len = 0; len <= L; len++) {
		int idx[8] = {0};
		for (;;) {
			size_t bl = 0;
			int unseen = 0;
			for (int i = 0; i < len; i++) {
				size_t k = strlen(alpha[idx[i]]);
				memcpy(buf + bl, alpha[idx[i]], k);
				bl += k;
				unseen += idx[i] == na - 1;
			}
			double w = pow(U, unseen), p = exp(llr_spelling_logp(x->spell, buf, bl)) * w;
			s.spell_all += p;
			if (llr_openbg_word(g, buf, bl) < 0) {
				s.spell_out += p;
				s.b_out += exp(llr_openbg_logb(g, buf, bl)) * w;
				s.unseen_out += exp(llr_openbg_unseen_logp(g, buf, bl)) * w;
			}
			int i = 0;
			while (i < len && ++idx[i] == na)
				idx[i++] = 0;
			if (i == len)
				break;
		}
	}
	return s;
}

/* The open background sums to one: the vocabulary (V less <unk>) has
 * 1 - lambda, every other string together lambda.  The strings up to 4
 * characters are enumerated; those longer hold p_spell's remaining mass
 * (1 less the enumerated mass less the vocabulary strings longer than 4,
 * here only "</s>"), renormalised as b renormalises it. */
static void test_mass(void)
{
	llr_err e = {0};
	const double lambda = 0.2;
	llr_lexicon *x = spell_lexicon(5, 3, lambda); /* le la les un une */
	llr_openbg *g = llr_openbg_new(x, &e);
	CHECK(g != NULL);
	if (!g) {
		printf("# %s\n", e.msg);
		llr_lexicon_free(x);
		return;
	}
	CHECK(llr_openbg_lambda(g) == lambda);
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	double inV = 0, sv = 0;
	for (int32_t v = 0; v < V; v++) {
		const char *w = llr_strmap_str(x->vocab, v);
		if (v == x->unk_id) {
			CHECK(llr_openbg_word(g, w, strlen(w)) == -1);
			continue;
		}
		CHECK(llr_openbg_word(g, w, strlen(w)) == v);
		double lb = llr_openbg_logb(g, w, strlen(w));
		/* (1 - lambda) b_V(w), b_V the background less <unk>'s 0.1 */
		CHECK_NEAR(lb, log(1 - lambda) + (double)x->logb[v] - log(0.9), 1e-6);
		inV += exp(lb);
		sv += exp(llr_spelling_logp(x->spell, w, strlen(w)));
	}
	CHECK_NEAR(inV, 1 - lambda, 1e-6);
	CHECK_NEAR(llr_openbg_log_outside(g), log1p(-sv), 1e-12);
	CHECK(sv > 0.05 && sv < 0.95);

	sums s = enumerate(x, g, 4);
	double eos = exp(llr_spelling_logp(x->spell, LLR_EOS, strlen(LLR_EOS)));
	double tail = 1 - s.spell_all - eos; /* longer than 4, outside V' */
	double total = inV + s.b_out + lambda * tail / (1 - sv);
	printf("# b: vocabulary %.9f, outside up to 4 characters %.9f, longer %.9f, total %.12f\n", inV, s.b_out,
	       lambda * tail / (1 - sv), total);
	CHECK(tail > 0 && tail < 1);
	CHECK(s.b_out > 0.5 * lambda);
	CHECK_NEAR(total, 1, 1e-6);
	/* the baseline's spread of p(<unk> | K): the renormalised p_spell
	 * sums to 1 over the strings outside V' */
	CHECK_NEAR(s.unseen_out + tail / (1 - sv), 1, 1e-6);
	/* outside V', b is lambda times the renormalised p_spell */
	CHECK_NEAR(s.b_out, lambda * s.spell_out / (1 - sv), 1e-9);
	/* every string gets a finite log b */
	for (size_t i = 0; i < NPROBES; i++) {
		double lb = llr_openbg_logb(g, probes[i], strlen(probes[i]));
		CHECK(isfinite(lb) && lb < 0);
	}
	/* the string <unk> is an unseen string: p_spell, renormalised */
	CHECK_NEAR(llr_openbg_logb(g, LLR_UNK, 5),
	           log(lambda) + llr_spelling_logp(x->spell, LLR_UNK, 5) - log1p(-sv), 1e-12);
	CHECK_NEAR(llr_openbg_unseen_logp(g, "zorglub", 7), llr_spelling_logp(x->spell, "zorglub", 7) - log1p(-sv), 1e-12);
	llr_openbg_free(g);
	llr_lexicon_free(x);
}

static void test_lambda(void)
{
	CHECK_NEAR(llr_open_lambda(3, 0, 10), 0.3, 1e-15);
	CHECK_NEAR(llr_open_lambda(3, 2, 10), 0.5, 1e-15);
	CHECK_NEAR(llr_open_lambda(0, 0, 10), 0.1, 1e-15);  /* the floor: one event */
	CHECK_NEAR(llr_open_lambda(10, 5, 10), 0.9, 1e-15); /* the ceiling */
	llr_err e = {0};
	/* no spelling model, or lambda out of (0, 1): refused */
	llr_lexicon *x = spell_lexicon(3, 2, 0.1);
	llr_spelling_free(x->spell);
	x->spell = NULL;
	CHECK(llr_openbg_new(x, &e) == NULL);
	CHECK(strstr(e.msg, "no spelling model") != NULL);
	llr_lexicon_free(x);
	x = spell_lexicon(3, 2, 1.0);
	CHECK(llr_openbg_new(x, &e) == NULL);
	CHECK(strstr(e.msg, "not in (0, 1)") != NULL);
	/* and a file whose meta says so is refused when read */
	char path[512];
	snprintf(path, sizeof path, "%s/openbg-bad.fz", test_tmpdir());
	CHECK(write_lexicon(path, x, &e) == LLR_OK);
	llr_lexicon *y = NULL;
	CHECK(read_lexicon(path, &y, &e) == LLR_EFORMAT);
	CHECK(y == NULL);
	CHECK(strstr(e.msg, "meta: spell.lambda: '1' is not a number in (0, 1)") != NULL);
	remove(path);
	llr_lexicon_free(x);
}

int main(void)
{
	PLAN(3);
	RUN(test_round_trip);
	RUN(test_mass);
	RUN(test_lambda);
	DONE();
}
