/*
 * vocab.c - the vocabulary: tokens with counts and dense ids, counted from
 * one-sentence-per-line token text (one </s> per sentence), merged from
 * `token<TAB>count` files, and sorted into the DESIGN order (count
 * descending, ties in byte order).  It does not print: vocab(1) writes the
 * TSV, and featurize maps tokens to ids with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct llr_vocab {
	llr_strmap *map;
	int64_t *counts;
	size_t cap;
};

llr_vocab *llr_vocab_new(void)
{
	llr_vocab *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	v->map = llr_strmap_new();
	if (!v->map) {
		free(v);
		return NULL;
	}
	return v;
}

void llr_vocab_free(llr_vocab *v)
{
	if (!v)
		return;
	llr_strmap_free(v->map);
	free(v->counts);
	free(v);
}

int32_t llr_vocab_add(llr_vocab *v, const char *tok, size_t len, int64_t count)
{
	int32_t id = llr_strmap_add(v->map, tok, len);
	if (id < 0)
		return LLR_ENOMEM;
	if ((size_t)id >= v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 1024;
		int64_t *c = llr_reallocarray(v->counts, cap, sizeof *c);
		if (!c)
			return LLR_ENOMEM;
		memset(c + v->cap, 0, (cap - v->cap) * sizeof *c);
		v->counts = c;
		v->cap = cap;
	}
	if (count > 0 && v->counts[id] > INT64_MAX - count)
		return LLR_ERANGE;
	v->counts[id] += count;
	return id;
}

static int add_err(int rc, llr_err *err)
{
	if (rc == LLR_ERANGE)
		return llr_err_set(err, LLR_ERANGE, "vocabulary: count overflows 64 bits");
	return llr_err_set(err, LLR_ENOMEM, "vocabulary: out of memory");
}

int llr_vocab_count_line(llr_vocab *v, const char *line, size_t len, llr_err *err)
{
	size_t pos = 0, ntok = 0, tl;
	const char *tok;
	while (llr_token_next(line, len, &pos, &tok, &tl)) {
		int32_t id = llr_vocab_add(v, tok, tl, 1);
		if (id < 0)
			return add_err(id, err);
		ntok++;
	}
	if (ntok) {
		int32_t id = llr_vocab_add(v, LLR_EOS, strlen(LLR_EOS), 1);
		if (id < 0)
			return add_err(id, err);
	}
	return LLR_OK;
}

static const llr_vocab *sort_v;

static int cmp_ids(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	int64_t cx = sort_v->counts[x], cy = sort_v->counts[y];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	size_t lx = llr_strmap_len(sort_v->map, x), ly = llr_strmap_len(sort_v->map, y);
	int c = memcmp(llr_strmap_str(sort_v->map, x), llr_strmap_str(sort_v->map, y), LLR_MIN(lx, ly));
	if (c)
		return c;
	return lx < ly ? -1 : lx > ly;
}

int llr_vocab_sort(llr_vocab *v, llr_err *err)
{
	size_t n = llr_strmap_size(v->map);
	int32_t *ids = llr_reallocarray(NULL, n ? n : 1, sizeof *ids);
	llr_strmap *map = llr_strmap_new();
	int64_t *counts = llr_reallocarray(NULL, n ? n : 1, sizeof *counts);
	if (!ids || !map || !counts)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		ids[i] = (int32_t)i;
	/* qsort has no context argument in C11; sorting is not reentrant
	 * across threads, which no caller needs. */
	sort_v = v;
	qsort(ids, n, sizeof *ids, cmp_ids);
	sort_v = NULL;
	for (size_t i = 0; i < n; i++) {
		if (llr_strmap_add(map, llr_strmap_str(v->map, ids[i]), llr_strmap_len(v->map, ids[i])) < 0)
			goto nomem;
		counts[i] = v->counts[ids[i]];
	}
	free(ids);
	llr_strmap_free(v->map);
	free(v->counts);
	v->map = map;
	v->counts = counts;
	v->cap = n ? n : 1;
	return LLR_OK;
nomem:
	free(ids);
	llr_strmap_free(map);
	free(counts);
	return llr_err_set(err, LLR_ENOMEM, "vocabulary: out of memory");
}

int llr_vocab_read(llr_vocab *v, llr_lines *l, llr_err *err)
{
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, err)) > 0) {
		if (len == 0)
			continue;
		const char *name = llr_lines_name(l);
		size_t no = llr_lines_lineno(l);
		const char *tab = memchr(line, '\t', len);
		if (!tab)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: expected token<TAB>count", name, no);
		size_t tlen = (size_t)(tab - line);
		if (tlen == 0)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: empty token", name, no);
		if (memchr(line, ' ', tlen))
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: token contains a space", name, no);
		const char *c = tab + 1, *end = line + len;
		if (c == end)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: missing count", name, no);
		int64_t count = 0;
		for (const char *p = c; p < end; p++) {
			if (*p < '0' || *p > '9')
				return llr_err_set(err, LLR_EFORMAT, "%s:%zu: bad count '%.*s' (want a non-negative integer)",
				                   name, no, (int)LLR_MIN((size_t)(end - c), 40), c);
			if (count > (INT64_MAX - (*p - '0')) / 10)
				return llr_err_set(err, LLR_ERANGE, "%s:%zu: count too large", name, no);
			count = count * 10 + (*p - '0');
		}
		int32_t id = llr_vocab_add(v, line, tlen, count);
		if (id == LLR_ERANGE)
			return llr_err_set(err, LLR_ERANGE, "%s:%zu: count overflows 64 bits", name, no);
		if (id < 0)
			return llr_err_set(err, LLR_ENOMEM, "vocabulary: out of memory");
	}
	return rc;
}

size_t llr_vocab_size(const llr_vocab *v)
{
	return llr_strmap_size(v->map);
}

int32_t llr_vocab_id(const llr_vocab *v, const char *tok, size_t len)
{
	return llr_strmap_get(v->map, tok, len);
}

const char *llr_vocab_token(const llr_vocab *v, int32_t id)
{
	if (id < 0 || (size_t)id >= llr_strmap_size(v->map))
		return NULL;
	return llr_strmap_str(v->map, id);
}

int64_t llr_vocab_count(const llr_vocab *v, int32_t id)
{
	if (id < 0 || (size_t)id >= llr_strmap_size(v->map))
		return 0;
	return v->counts[id];
}
