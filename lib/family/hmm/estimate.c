/*
 * estimate.c - the HMM tagger's side of train(1) ("HMM taggers"): its
 * option (--hmm chooses it), and `train --hmm -o MODEL [file ...]`,
 * which counts word/TAG text (tok --tags: one sentence a line, each
 * token split at its last '/'; blank lines skipped), estimates TnT's
 * interpolation weights and suffix weight from the counts (model.c) and
 * writes the model.  Not a gradient-step family: no job for the
 * training driver.
 */
#include "family/hmm/hmm.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#define SECTION "HMM taggers (train --hmm):"
static const llr_train_opt opts[] = {
	{"hmm", 0, LLR_TOPT_FLAG, LLR_TOPT_SELECTS, .help = "estimate a trigram HMM tagger (TnT) from word/TAG text instead",
	 .section = SECTION},
	{0},
};

/* While counting, BOS and EOS are these ids (tags are fewer than 2^20);
 * trigram keys are a << 40 | b << 20 | c. */
#define C_BOS 0xffffeu
#define C_EOS 0xfffffu

struct hmm_counter {
	llr_strmap *tags, *words;
	hmm_counts pairs; /* word << 20 | tag */
	hmm_counts tri;
	int32_t *seq; /* a sentence's tags */
	size_t cap;
	int64_t sentences, tokens;
};
typedef hmm_counter counter;

static int count_sentence(counter *c, size_t n, llr_err *err)
{
	uint64_t a = C_BOS, b = C_BOS;
	for (size_t i = 0; i <= n; i++) {
		uint64_t t = i < n ? (uint64_t)c->seq[i] : C_EOS;
		if (hmm_counts_add(&c->tri, a << 40 | b << 20 | t, 1) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for the tag trigrams");
		a = b;
		b = t;
	}
	c->sentences++;
	return LLR_OK;
}

int hmm_counter_line(hmm_counter *c, const char *line, size_t len, llr_err *err)
{
	size_t pos = 0, tl, n = 0;
	const char *t;
	while (llr_token_next(line, len, &pos, &t, &tl)) {
		const char *slash = NULL;
		for (size_t k = 0; k < tl; k++)
			if (t[k] == '/')
				slash = t + k;
		if (!slash || slash == t || slash == t + tl - 1)
			return llr_err_set(err, LLR_EFORMAT, "token '%.*s' has no /TAG (train --hmm reads word/TAG text: tok --tags)",
			                   (int)tl, t);
		int32_t tag = llr_strmap_add(c->tags, slash + 1, (size_t)(t + tl - slash - 1));
		int32_t word = llr_strmap_add(c->words, t, (size_t)(slash - t));
		if (tag < 0 || word < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (tag >= LLR_HMM_MAX_TAGS)
			return llr_err_set(err, LLR_ERANGE, "more than %d tags", LLR_HMM_MAX_TAGS);
		if (n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 256;
			int32_t *s = llr_reallocarray(c->seq, cap, sizeof *s);
			if (!s)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
			c->seq = s;
			c->cap = cap;
		}
		c->seq[n++] = tag;
		if (hmm_counts_add(&c->pairs, (uint64_t)word << 20 | (uint64_t)tag, 1) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		c->tokens++;
	}
	return n ? count_sentence(c, n, err) : LLR_OK;
}

/* a line of tagged text to the counter (llr_lines_each) */
static int count_line(void *c, const char *line, size_t len, llr_err *err)
{
	return hmm_counter_line(c, line, len, err);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The counts of c as a model h (c's maps move into h). */
static int build(counter *c, llr_hmm *h, llr_err *err)
{
	const int32_t T = (int32_t)llr_strmap_size(c->tags);
	const uint64_t S = (uint64_t)T + 2;
	h->T = T;
	h->tags = c->tags;
	h->words = c->words;
	c->tags = c->words = NULL;
	h->rare = LLR_HMM_RARE;
	h->max_suffix = LLR_HMM_SUFFIX;
	int rc = hmm_rows_from(&h->lex, &c->pairs, llr_strmap_size(h->words), err);
	if (rc < 0)
		return rc;
	uint64_t *keys = llr_malloc((c->tri.n + 1) * sizeof *keys);
	h->tri = llr_malloc((c->tri.n + 1) * 3 * sizeof *h->tri);
	h->tri_count = llr_malloc((c->tri.n + 1) * sizeof *h->tri_count);
	if (!keys || !h->tri || !h->tri_count) {
		free(keys);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu trigrams", c->tri.n);
	}
	size_t n = 0;
	for (size_t i = 0; i < c->tri.cap; i++) {
		if (c->tri.key[i] == UINT64_MAX)
			continue;
		uint64_t k = c->tri.key[i], t[3] = {k >> 40, k >> 20 & 0xfffff, k & 0xfffff};
		for (int j = 0; j < 3; j++)
			t[j] = t[j] == C_BOS ? HMM_BOS(S - 2) : t[j] == C_EOS ? HMM_EOS(S - 2) : t[j];
		keys[n++] = ((t[0] * S + t[1]) * S + t[2]) << 32 | i; /* the slot, to find the count (S^3 < 2^31) */
	}
	qsort(keys, n, sizeof *keys, cmp_u64);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = keys[i] >> 32;
		h->tri[3 * i] = (int32_t)(k / (S * S));
		h->tri[3 * i + 1] = (int32_t)(k / S % S);
		h->tri[3 * i + 2] = (int32_t)(k % S);
		h->tri_count[i] = c->tri.val[keys[i] & 0xffffffffu];
	}
	free(keys);
	h->ntri = n;
	if ((rc = hmm_derive(h, err)) < 0)
		return rc;
	llr_hmm_lambdas(h, h->lambda);
	h->theta = llr_hmm_theta(h->uni, T);
	return hmm_cache(h, err);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

hmm_counter *hmm_counter_new(void)
{
	hmm_counter *c = llr_calloc(1, sizeof *c);
	if (c && (!(c->tags = llr_strmap_new()) || !(c->words = llr_strmap_new()))) {
		hmm_counter_free(c);
		return NULL;
	}
	return c;
}

void hmm_counter_free(hmm_counter *c)
{
	if (!c)
		return;
	llr_strmap_free(c->tags);
	llr_strmap_free(c->words);
	hmm_counts_free(&c->pairs);
	hmm_counts_free(&c->tri);
	free(c->seq);
	free(c);
}

int hmm_counter_model(hmm_counter *c, llr_hmm **out, llr_err *err)
{
	*out = NULL;
	if (c->sentences == 0)
		return llr_err_set(err, LLR_EINVAL, "no tagged sentence (an empty corpus)");
	llr_hmm *h = llr_calloc(1, sizeof *h);
	if (!h)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int rc = build(c, h, err);
	if (rc < 0) {
		llr_hmm_free(h);
		return rc;
	}
	*out = h;
	return LLR_OK;
}

static int estimate(llr_train_args *a, llr_err *err)
{
	const char *out = llr_train_args_str(a, "o");
	if (!out || !strcmp(out, "-"))
		return llr_train_usage_err(err, "--hmm: -o FILE is required (the model file)");
	double t0 = now();
	hmm_counter *c = hmm_counter_new();
	int rc = c ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	int n = llr_train_args_noperands(a);
	for (int i = 0; rc == LLR_OK && i < (n ? n : 1); i++)
		rc = llr_lines_each(n ? llr_train_args_operand(a, i) : "-", count_line, c, err);
	llr_hmm *h = NULL;
	if (rc == LLR_OK && (rc = hmm_counter_model(c, &h, err)) == LLR_EINVAL)
		llr_err_prefix(err, "%s", n == 1 ? llr_train_args_operand(a, 0) : n ? "the input" : "<stdin>");
	if (rc == LLR_OK)
		rc = llr_hmm_save(out, h, err);
	if (rc == LLR_OK && !llr_train_args_int(a, "quiet")) {
		llr_train_note(a, "HMM tagger from %lld tokens, %lld sentences: %d tags, %zu words, %zu tag trigrams, in %.2fs",
		               (long long)c->tokens, (long long)c->sentences, h->T, llr_strmap_size(h->words), h->ntri, now() - t0);
		llr_train_note(a, "  lambda1 %.4f lambda2 %.4f lambda3 %.4f, theta %.4f; suffix models from %lld + %lld tokens", h->lambda[0],
		               h->lambda[1], h->lambda[2], h->theta, (long long)h->sm[0].total, (long long)h->sm[1].total);
	}
	llr_hmm_free(h);
	hmm_counter_free(c);
	return rc;
}

const llr_trainer llr_hmm_trainer = {
	.opts = opts,
	.synopsis = "train --hmm [-q] -o FILE [file ...]\n",
	.usage = "usage: train --hmm [-q] -o FILE [file ...]\n",
	.foreign = "not for an HMM tagger (--hmm)",
	.estimate = estimate,
};
