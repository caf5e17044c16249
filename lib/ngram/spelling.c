/*
 * spelling.c - the spelling model of open-vocabulary scoring: p_spell(w), a
 * distribution over every finite string of Unicode scalar values.  A word
 * is the sentence "<s> c1 .. ck </s>" of its characters, scored by an
 * interpolated Kneser-Ney character n-gram (count.c, estimate.c), with
 * </s> as the end of the word.  A character the model never saw takes an
 * equal share of the model's <unk> probability:
 *     p(c | h) = p(<unk> | h) / U   for each of the U unseen scalar values
 * (U = 1,112,064 scalar values less the characters seen), and stands as
 * <unk> in later contexts.  Kneser-Ney gives </s> and <unk> a positive
 * probability after every context, so the masses of all strings sum to
 * one and no string gets probability zero.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

/* Unicode scalar values: U+0000..U+10FFFF without the 2,048 surrogates. */
#define SCALAR_VALUES 1112064.0

/* The sampler's cache: the cumulative distribution after a context (its
 * last order-1 ids), so a draw looks each context up once. */
#define CACHE_SLOTS 16384
typedef struct cdf_ent {
	int n;
	int32_t ctx[LLR_NGRAM_MAX_ORDER];
	double *cdf; /* V: cdf[x] = sum of p(y | ctx) for y <= x, <s> 0 */
} cdf_ent;

struct llr_spelling {
	llr_ngram *m;
	double log_unseen; /* ln of the share of one unseen character */
	cdf_ent *cache;    /* CACHE_SLOTS, made by the first draw */
	size_t cached;
	double *scratch; /* an uncached CDF (the cache is full) */
};

int llr_spelling_count(llr_ngram_counter *c, const char *w, size_t len, llr_err *err)
{
	char stack[256];
	size_t cap = 2 * len + 1;
	char *line = cap <= sizeof stack ? stack : malloc(cap);
	if (!line)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		int32_t cp;
		int k = llr_utf8_decode(w + i, len - i, &cp);
		if (k < 0 || cp == ' ' || cp == '\t' || cp == '\n' || cp == 0) {
			if (line != stack)
				free(line);
			return llr_err_set(err, LLR_EFORMAT, "'%.*s': %s", (int)(len > 40 ? 40 : len), w,
			                   k < 0 ? "not valid UTF-8" : "a word cannot hold a space, TAB, newline or NUL");
		}
		if (n)
			line[n++] = ' ';
		memcpy(line + n, w + i, (size_t)k);
		n += (size_t)k;
		i += (size_t)k;
	}
	int rc = n ? llr_ngram_count_line(c, line, n, err) : llr_err_set(err, LLR_EFORMAT, "an empty word");
	if (line != stack)
		free(line);
	return rc;
}

llr_spelling *llr_spelling_new(llr_ngram *m, llr_err *err)
{
	if (llr_ngram_unk(m) < 0 || llr_ngram_eos(m) < 0) {
		llr_err_set(err, LLR_EINVAL, "a spelling model needs <unk> and </s>");
		return NULL;
	}
	/* every other token must be one character the counting could make */
	for (int32_t x = 0; x < llr_ngram_vocab_size(m); x++) {
		if (x == llr_ngram_unk(m) || x == llr_ngram_eos(m) || x == llr_ngram_bos(m))
			continue;
		const char *t = llr_ngram_token(m, x);
		int32_t cp = 0;
		int k = llr_utf8_decode(t, strlen(t), &cp);
		if (k < 0 || (size_t)k != strlen(t) || cp == ' ' || cp == '\t') {
			llr_err_set(err, LLR_EINVAL, "not a character model: its token '%s' is not one character", t);
			return NULL;
		}
	}
	llr_spelling *s = llr_calloc(1, sizeof *s);
	if (!s) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	/* the characters seen: the vocabulary less <unk>, <s>, </s> */
	double seen = (double)llr_ngram_vocab_size(m) - 3;
	s->m = m;
	s->log_unseen = -log(SCALAR_VALUES - seen);
	return s;
}

void llr_spelling_free(llr_spelling *s)
{
	if (!s)
		return;
	llr_ngram_free(s->m);
	for (size_t i = 0; s->cache && i < CACHE_SLOTS; i++)
		free(s->cache[i].cdf);
	free(s->cache);
	free(s->scratch);
	free(s);
}

const llr_ngram *llr_spelling_ngram(const llr_spelling *s)
{
	return s->m;
}

double llr_spelling_log_unseen(const llr_spelling *s)
{
	return s->log_unseen;
}

double llr_spelling_logp(const llr_spelling *s, const char *w, size_t len)
{
	const llr_ngram *m = s->m;
	int N = llr_ngram_order(m);
	int32_t ctx[LLR_NGRAM_MAX_ORDER];
	int n = 1;
	ctx[0] = llr_ngram_bos(m);
	double lp = 0;
	for (size_t i = 0; i <= len;) {
		int32_t x;
		double extra = 0;
		if (i == len) {
			x = llr_ngram_eos(m);
			i++;
		} else {
			int32_t cp = 0;
			int k = llr_utf8_decode(w + i, len - i, &cp);
			x = -1; /* a byte that is not UTF-8 counts as an unseen character */
			if (k < 0)
				k = 1;
			else
				x = llr_spelling_char(m, w + i, (size_t)k, cp);
			if (x < 0) {
				x = llr_ngram_unk(m);
				extra = s->log_unseen;
			}
			i += (size_t)k;
		}
		lp += (double)llr_ngram_log10p(m, ctx, n, x, NULL) * M_LN10 + extra;
		if (n == N - 1) { /* keep the last N - 1 symbols */
			memmove(ctx, ctx + 1, (size_t)(n - 1) * sizeof *ctx);
			n--;
		}
		if (N > 1)
			ctx[n++] = x;
	}
	return lp;
}

/* ------------------------------------------------------------ sampling */

#define SAMPLE_MAX_CHARS 10000

int32_t llr_spelling_char(const llr_ngram *m, const char *b, size_t k, int32_t cp)
{
	if (cp == ' ' || cp == '\t')
		return -1;
	int32_t x = llr_ngram_word(m, b, k);
	return x < 0 || x == llr_ngram_bos(m) || x == llr_ngram_eos(m) || x == llr_ngram_unk(m) ? -1 : x;
}

/* One of the U scalar values the model never saw, uniformly (by
 * rejection: the seen ones are few), and what llr_spelling_logp scores as
 * unseen: a character that is not a token of the model, or a space or
 * TAB. */
static int draw_unseen(const llr_ngram *m, llr_rng *rng, char *b)
{
	for (;;) {
		int32_t c = (int32_t)llr_rng_below(rng, 0x110000 - 0x800);
		if (c >= 0xD800)
			c += 0x800; /* past the surrogates */
		int k = llr_utf8_encode(c, b);
		if (llr_spelling_char(m, b, (size_t)k, c) < 0)
			return k;
	}
}

/* The CDF after ctx[0..n), from the cache or computed (and cached while
 * there is room); NULL when out of memory. */
static const double *context_cdf(llr_spelling *s, const int32_t *ctx, int n, llr_err *err)
{
	const llr_ngram *m = s->m;
	int32_t V = llr_ngram_vocab_size(m), bos = llr_ngram_bos(m);
	if (!s->cache && !(s->cache = llr_calloc(CACHE_SLOTS, sizeof *s->cache))) {
		llr_err_set(err, LLR_ENOMEM, "spelling: out of memory");
		return NULL;
	}
	uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint32_t)ctx[i]) * 1099511628211ull;
	size_t i = (size_t)h & (CACHE_SLOTS - 1);
	for (; s->cache[i].cdf; i = (i + 1) & (CACHE_SLOTS - 1))
		if (s->cache[i].n == n && !memcmp(s->cache[i].ctx, ctx, (size_t)n * sizeof *ctx))
			return s->cache[i].cdf;
	double *cdf = llr_malloc((size_t)V * sizeof *cdf);
	if (!cdf) {
		llr_err_set(err, LLR_ENOMEM, "spelling: out of memory");
		return NULL;
	}
	double acc = 0;
	for (int32_t x = 0; x < V; x++) {
		if (x != bos)
			acc += pow(10.0, (double)llr_ngram_log10p(m, ctx, n, x, NULL));
		cdf[x] = acc;
	}
	if (s->cached < CACHE_SLOTS * 3 / 4) {
		s->cache[i].n = n;
		memcpy(s->cache[i].ctx, ctx, (size_t)n * sizeof *ctx);
		s->cache[i].cdf = cdf;
		s->cached++;
		return cdf;
	}
	/* the cache is full: this CDF lives until the next uncached one */
	free(s->scratch);
	s->scratch = cdf;
	return cdf;
}

int llr_spelling_sample(const llr_spelling *s, llr_rng *rng, llr_buf *out, double *logp, llr_err *err)
{
	const llr_ngram *m = s->m;
	int N = llr_ngram_order(m);
	int32_t V = llr_ngram_vocab_size(m), bos = llr_ngram_bos(m), eos = llr_ngram_eos(m), unk = llr_ngram_unk(m);
	int32_t ctx[LLR_NGRAM_MAX_ORDER];
	int n = 1;
	ctx[0] = bos;
	double lp = 0;
	llr_buf_clear(out);
	for (size_t chars = 0;; chars++) {
		if (chars > SAMPLE_MAX_CHARS)
			return llr_err_set(err, LLR_ERANGE, "spelling: drew more than %d characters", SAMPLE_MAX_CHARS);
		/* p(x | ctx) for every x but <s>, then one draw by its CDF */
		const double *cdf = context_cdf((llr_spelling *)s, ctx, n, err);
		if (!cdf)
			return LLR_ENOMEM;
		double u = llr_rng_uniform(rng) * cdf[V - 1];
		int32_t lo = 0, hi = V - 1; /* the first x with u < cdf[x] */
		while (lo < hi) {
			int32_t mid = lo + (hi - lo) / 2;
			if (u < cdf[mid])
				hi = mid;
			else
				lo = mid + 1;
		}
		int32_t x = lo;
		while (x == bos || cdf[x] == (x ? cdf[x - 1] : 0)) /* never a zero-width entry */
			x = x + 1 < V ? x + 1 : 0;
		lp += (double)llr_ngram_log10p(m, ctx, n, x, NULL) * M_LN10;
		if (x == eos)
			break;
		char b[4];
		int k;
		if (x == unk) {
			k = draw_unseen(m, rng, b);
			lp += s->log_unseen;
		} else {
			const char *t = llr_ngram_token(m, x);
			k = (int)strlen(t);
			memcpy(b, t, (size_t)k);
		}
		if (llr_buf_append(out, b, (size_t)k) < 0)
			return llr_err_set(err, LLR_ENOMEM, "spelling: out of memory");
		if (n == N - 1) {
			memmove(ctx, ctx + 1, (size_t)(n - 1) * sizeof *ctx);
			n--;
		}
		if (N > 1)
			ctx[n++] = x;
	}
	if (logp)
		*logp = lp;
	return LLR_OK;
}
