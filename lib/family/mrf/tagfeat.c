/*
 * tagfeat.c - the features of the MRF tagger's positions (tagger.h):
 * for position i of a sentence, "BIAS"; the word at each offset o in
 * -M..M as "W<o>=<word>" (W-1=, W0=, W1=; "<s>" before the sentence, "</s>" after it);
 * llr_extract's orthographic classes (ORTH:...) and suffixes of 1..4
 * characters (SUF:...) of the word itself; and its prefixes of 1..3
 * characters, "PRE:<prefix>" (only those shorter than the word).  Not
 * here: the weights and the chain (tagchain.c).
 */
#include "family/mrf/tagger.h"

#include <stdlib.h>

int mrft_word_feature(llr_buf *b, const char *w, size_t len)
{
	llr_buf_clear(b);
	if (llr_buf_append(b, "W0=", 3) < 0 || llr_buf_append(b, w, len) < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

typedef struct adder {
	mrft_feats *f;
	llr_strmap *map;
	int add;
} adder;

static int push(adder *a, const char *name, size_t len)
{
	mrft_feats *f = a->f;
	int32_t id = a->add ? llr_strmap_add(a->map, name, len) : llr_strmap_get(a->map, name, len);
	if (id < 0 && a->add)
		return LLR_ENOMEM;
	if (id < 0)
		return LLR_OK;
	if (f->ptr[f->n + 1] == f->cap_ids) {
		size_t cap = f->cap_ids ? 2 * f->cap_ids : 256;
		int32_t *ids = llr_reallocarray(f->ids, cap, sizeof *ids);
		if (!ids)
			return LLR_ENOMEM;
		f->ids = ids;
		f->cap_ids = cap;
	}
	f->ids[f->ptr[f->n + 1]++] = id;
	return LLR_OK;
}

static int emit(const char *name, size_t len, float value, void *ctx)
{
	(void)value;
	return push(ctx, name, len);
}

/* "W<o>=<word>" for the word at offset o of position i. */
static int window_word(adder *a, int o, const char *const *words, const size_t *lens, size_t n, size_t i)
{
	llr_buf *b = &a->f->name;
	llr_buf_clear(b);
	long j = (long)i + o;
	const char *w = j < 0 ? "<s>" : j >= (long)n ? "</s>" : words[j];
	size_t len = j < 0 ? 3 : j >= (long)n ? 4 : lens[j];
	if (llr_buf_printf(b, "W%d=", o) < 0 || llr_buf_append(b, w, len) < 0)
		return LLR_ENOMEM;
	return push(a, b->data, b->len);
}

static int prefixes(adder *a, const char *w, size_t len)
{
	size_t chars = 0, at[MRFT_PREFIX + 1] = {0};
	for (size_t k = 0; k < len; k++)
		if (((unsigned char)w[k] & 0xC0) != 0x80) {
			if (chars <= MRFT_PREFIX)
				at[chars] = k;
			chars++;
		}
	for (size_t k = 1; k <= MRFT_PREFIX && k < chars; k++) {
		llr_buf *b = &a->f->name;
		llr_buf_clear(b);
		if (llr_buf_append(b, "PRE:", 4) < 0 || llr_buf_append(b, w, at[k]) < 0)
			return LLR_ENOMEM;
		int rc = push(a, b->data, b->len);
		if (rc < 0)
			return rc;
	}
	return LLR_OK;
}

int mrft_features(mrft_feats *out, llr_strmap *feats, int add, int32_t M, const char *const *words, const size_t *lens, size_t n,
                  llr_err *err)
{
	if (n + 1 > out->cap_pos) {
		size_t cap = n + n / 2 + 16;
		size_t *p = llr_reallocarray(out->ptr, cap, sizeof *p);
		if (!p)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		out->ptr = p;
		out->cap_pos = cap;
	}
	adder a = {out, feats, add};
	const llr_extractors x = {.ortho = 1, .suffix = MRFT_SUFFIX};
	out->n = 0;
	out->ptr[0] = 0;
	for (size_t i = 0; i < n; i++) {
		out->n = i; /* push appends to position i: ptr[i+1] is its end */
		out->ptr[i + 1] = out->ptr[i];
		int rc = push(&a, "BIAS", 4);
		for (int o = -M; rc >= 0 && o <= M; o++)
			rc = window_word(&a, o, words, lens, n, i);
		if (rc >= 0)
			rc = llr_extract(&x, words[i], lens[i], emit, &a);
		if (rc >= 0)
			rc = prefixes(&a, words[i], lens[i]);
		if (rc == LLR_EUTF8)
			return llr_err_set(err, rc, "word %zu: invalid UTF-8", i + 1);
		if (rc < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for the features");
	}
	out->n = n;
	return LLR_OK;
}

void mrft_feats_free(mrft_feats *f)
{
	free(f->ptr);
	free(f->ids);
	llr_buf_free(&f->name);
	*f = (mrft_feats){0};
}
