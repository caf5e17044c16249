/*
 * count.c - counting the n-grams of a corpus for estimation (estimate.c).
 *
 * Only the highest order N is counted, as lmplz does: every sentence is
 * "<s> w1 .. wk </s>" with its context padded by N-1 <s>, so the N-gram
 * ending at each word (and at </s>) is one key of N word ids.  The
 * shorter n-grams are derived from these: a key beginning with j >= 2
 * <s> stands for the n-gram from its last <s> on (order N-j+1, raw
 * count), and the suffixes give the lower orders their adjusted counts.
 *
 * The table is open addressing with linear probing; a slot is N uint32
 * ids and a uint64 count (0 = empty), kept at most 70% full, doubled when
 * fuller.  The bound max_bytes covers the table (after growing) and the
 * vocabulary; beyond it counting stops with LLR_ERANGE.  Not here: the
 * estimation (estimate.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#define COUNT_LOAD_NUM 7
#define COUNT_LOAD_DEN 10

struct llr_ngram_counter {
	int order;
	size_t max_bytes;
	llr_strmap *vocab;
	size_t vocab_bytes; /* an estimate of the interning's memory */
	uint32_t *keys;     /* cap x order */
	uint64_t *counts;   /* cap; 0 = empty slot */
	size_t cap, n;
	uint32_t gram[LLR_NGRAM_MAX_ORDER];
	uint64_t tokens;
};

static uint64_t hash_key(const uint32_t *k, int n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < n; i++) {
		h ^= k[i];
		h *= 0xFF51AFD7ED558CCDull;
		h ^= h >> 32;
	}
	return h;
}

static size_t slot_bytes(int order)
{
	return (size_t)order * sizeof(uint32_t) + sizeof(uint64_t);
}

static int table_alloc(llr_ngram_counter *c, size_t cap, llr_err *err)
{
	size_t need = cap * slot_bytes(c->order) + c->vocab_bytes;
	if (need > c->max_bytes)
		return llr_err_set(err, LLR_ERANGE, "the n-gram counts need more than %zu MiB (%zu distinct %d-grams so far)", c->max_bytes >> 20, c->n, c->order);
	uint32_t *keys = llr_malloc(cap * (size_t)c->order * sizeof *keys);
	uint64_t *counts = llr_calloc(cap, sizeof *counts);
	if (!keys || !counts) {
		free(keys);
		free(counts);
		return llr_err_set(err, LLR_ENOMEM, "out of memory counting n-grams");
	}
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->counts[i])
			continue;
		const uint32_t *k = c->keys + i * (size_t)c->order;
		size_t j = hash_key(k, c->order) & (cap - 1);
		while (counts[j])
			j = (j + 1) & (cap - 1);
		memcpy(keys + j * (size_t)c->order, k, (size_t)c->order * sizeof *k);
		counts[j] = c->counts[i];
	}
	free(c->keys);
	free(c->counts);
	c->keys = keys;
	c->counts = counts;
	c->cap = cap;
	return LLR_OK;
}

llr_ngram_counter *llr_ngram_counter_new(int order, size_t max_bytes, llr_err *err)
{
	if (order < 1 || order > LLR_NGRAM_MAX_ORDER) {
		llr_err_set(err, LLR_EINVAL, "n-gram order %d: must be 1 to %d", order, LLR_NGRAM_MAX_ORDER);
		return NULL;
	}
	llr_ngram_counter *c = llr_calloc(1, sizeof *c);
	if (!c || !(c->vocab = llr_strmap_new())) {
		free(c);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	c->order = order;
	c->max_bytes = max_bytes;
	if (llr_strmap_add(c->vocab, LLR_UNK, 5) != 0 || llr_strmap_add(c->vocab, LLR_BOS, 3) != 1 || llr_strmap_add(c->vocab, LLR_EOS, 4) != 2 ||
	    table_alloc(c, 1024, err) != LLR_OK) {
		if (!err || !err->code)
			llr_err_set(err, LLR_ENOMEM, "out of memory");
		llr_ngram_counter_free(c);
		return NULL;
	}
	return c;
}

void llr_ngram_counter_free(llr_ngram_counter *c)
{
	if (!c)
		return;
	llr_strmap_free(c->vocab);
	free(c->keys);
	free(c->counts);
	free(c);
}

size_t llr_ngram_counter_bytes(const llr_ngram_counter *c)
{
	return c->cap * slot_bytes(c->order) + c->vocab_bytes;
}

uint64_t llr_ngram_counter_tokens(const llr_ngram_counter *c)
{
	return c->tokens;
}

/* Count the key in c->gram once, then shift the window left. */
static int add_gram(llr_ngram_counter *c, llr_err *err)
{
	const int N = c->order;
	if ((c->n + 1) * COUNT_LOAD_DEN > c->cap * COUNT_LOAD_NUM) {
		int rc = table_alloc(c, c->cap * 2, err);
		if (rc != LLR_OK)
			return rc;
	}
	size_t j = hash_key(c->gram, N) & (c->cap - 1);
	for (;; j = (j + 1) & (c->cap - 1)) {
		uint32_t *k = c->keys + j * (size_t)N;
		if (!c->counts[j]) {
			memcpy(k, c->gram, (size_t)N * sizeof *k);
			c->counts[j] = 1;
			c->n++;
			break;
		}
		if (!memcmp(k, c->gram, (size_t)N * sizeof *k)) {
			c->counts[j]++;
			break;
		}
	}
	memmove(c->gram, c->gram + 1, (size_t)(N - 1) * sizeof *c->gram);
	c->tokens++;
	return LLR_OK;
}

int llr_ngram_count_line(llr_ngram_counter *c, const char *line, size_t len, llr_err *err)
{
	const int N = c->order;
	for (int i = 0; i < N - 1; i++)
		c->gram[i] = 1; /* <s> */
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_next(line, len, &pos, &tok, &tl)) {
		if ((tl == 3 && !memcmp(tok, LLR_BOS, 3)) || (tl == 4 && !memcmp(tok, LLR_EOS, 4)))
			return llr_err_set(err, LLR_EFORMAT, "the reserved token '%.*s' is in the text", (int)tl, tok);
		size_t before = llr_strmap_size(c->vocab);
		int32_t id = llr_strmap_add(c->vocab, tok, tl);
		if (id < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (llr_strmap_size(c->vocab) != before)
			c->vocab_bytes += tl + 1 + 32; /* the string and its slot */
		c->gram[N - 1] = (uint32_t)id;
		int rc = add_gram(c, err);
		if (rc != LLR_OK)
			return rc;
	}
	c->gram[N - 1] = 2; /* </s> */
	return add_gram(c, err);
}

int llr_ngram_counter_take(llr_ngram_counter *c, uint32_t **keys, uint64_t **counts, size_t *cap, size_t *n, llr_strmap **vocab)
{
	*keys = c->keys;
	*counts = c->counts;
	*cap = c->cap;
	*n = c->n;
	*vocab = c->vocab;
	c->keys = NULL;
	c->counts = NULL;
	c->vocab = NULL;
	c->cap = c->n = 0;
	return c->order;
}
