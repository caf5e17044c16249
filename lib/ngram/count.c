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
 * The keys are appended to a buffer (4 N bytes each) as they come; when
 * it holds 2^20 keys or as many as the distinct N-grams counted so far,
 * it is sorted (LSD radix sort of a 32-bit permutation, one pass per
 * word) and merged into the sorted array of distinct N-grams and their
 * counts ((4 N + 8) bytes each, no empty slots).  At the end the last
 * keys are merged and the array goes to estimate.c.  The bound max_bytes
 * covers the buffer, the array, the vocabulary and what a merge needs
 * (the permutation and the merged array next to the old one); beyond it
 * counting stops with LLR_ERANGE.  Not here: the estimation (estimate.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ngram.h"


#define COUNT_MERGE_MIN ((size_t)1 << 20)

/* Spilled records fold equal N-grams by adding their counts. */
static void add_counts(void *into, const void *from, size_t rec);

struct llr_ngram_counter {
	int order;
	size_t max_bytes;
	llr_strmap *vocab;
	size_t vocab_bytes; /* an estimate of the interning's memory */
	uint32_t *buf;      /* nbuf keys of order ids since the last merge */
	size_t nbuf, bufcap;
	uint32_t *keys;   /* n distinct keys, sorted */
	uint64_t *counts; /* their counts */
	size_t n;
	size_t peak;     /* the most bytes held, for llr_ngram_counter_bytes */
	size_t merge_at; /* a fixed merge size (tests), 0 = the rule above */
	llr_xsort *xs;   /* spilling: the runs on disk, else NULL */
	size_t xs_runs;  /* the runs spilled (0: the counts are all here) */
	size_t xs_every; /* spill every so many distinct keys (tests), 0 = when full */
	size_t reserve;  /* bytes of the budget kept for the spill's buffers */
	size_t base;     /* the budget's bytes held outside (llr_ngram_disk.base), off max_bytes */
	size_t held;     /* llr_ngram_disk.base itself, which base is clamped from */
	llr_xsort_cfg xcfg;
	uint32_t gram[LLR_NGRAM_MAX_ORDER];
	uint64_t tokens;
};

static size_t key_bytes(const llr_ngram_counter *c)
{
	return (size_t)c->order * sizeof(uint32_t);
}

/* The threads sorting a buffer (the spill's set-up; one before it). */
static int c_threads(const llr_ngram_counter *c)
{
	return c->xcfg.threads < 1 ? 1 : c->xcfg.threads > LLR_NGRAM_MAX_THREADS ? LLR_NGRAM_MAX_THREADS : c->xcfg.threads;
}

/* The bytes of the sort's counts at V words: V + 1 a thread. */
static size_t cnt_bytes(const llr_ngram_counter *c, size_t V)
{
	return (size_t)c_threads(c) * (V + 1) * sizeof(uint32_t);
}

/* Spilling: the least budget that counts with the vocabulary so far,
 * the fixed part twice over (a buffer of 4096 keys and its merge). */
static size_t least_bytes(const llr_ngram_counter *c)
{
	size_t V = llr_strmap_size(c->vocab);
	return 2 * (4096 * (2 * key_bytes(c) + 2 * sizeof(uint32_t) + sizeof(uint64_t)) + cnt_bytes(c, V) + c->vocab_bytes + c->reserve);
}

/* Spilling, a budget under the least that counts: refused with that
 * least, the program's own holding included. */
static int too_small(const llr_ngram_counter *c, llr_err *err)
{
	return llr_err_set(err, LLR_ERANGE, "a memory budget of %zu MiB is too small to count %d-grams on disk: give at least %zu MiB (--memory)",
	                   (c->max_bytes + c->base) >> 20, c->order, ((least_bytes(c) + c->held) >> 20) + 1);
}

/* LLR_OK if holding `extra` bytes besides the buffer (of bufcap keys),
 * the merged array and the vocabulary stays within the bound. */
static int room(llr_ngram_counter *c, size_t bufcap, size_t extra, llr_err *err)
{
	size_t bytes = bufcap * key_bytes(c) + c->n * (key_bytes(c) + sizeof(uint64_t)) + c->vocab_bytes + c->reserve + extra;
	if (bytes > c->max_bytes && c->xs)
		return too_small(c, err);
	if (bytes > c->max_bytes)
		return llr_err_set(err, LLR_ERANGE, "the n-gram counts need more than %zu MiB (%zu distinct %d-grams so far, %zu more to merge)", (c->max_bytes + c->base) >> 20, c->n,
		                   c->order, c->nbuf);
	if (bytes > c->peak)
		c->peak = bytes;
	return LLR_OK;
}

static int key_cmp(const uint32_t *a, const uint32_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* One thread's part of a counting pass of llr_perm_sort: perm[lo, hi)
 * counted by the word at column col into cnt[0..V) (phase 0), then
 * moved to tmp at the offsets cnt holds (phase 1). */
typedef struct cpart {
	const uint32_t *key, *perm;
	uint32_t *tmp, *cnt, V;
	size_t lo, hi, stride;
	int phase;
} cpart;

static void *c_part(void *arg)
{
	cpart *p = arg;
	if (p->phase == 0) {
		memset(p->cnt, 0, (size_t)p->V * sizeof *p->cnt);
		for (size_t i = p->lo; i < p->hi; i++)
			p->cnt[p->key[(size_t)p->perm[i] * p->stride]]++;
	} else {
		for (size_t i = p->lo; i < p->hi; i++)
			p->tmp[p->cnt[p->key[(size_t)p->perm[i] * p->stride]]++] = p->perm[i];
	}
	return NULL;
}

void llr_perm_sort(const uint32_t *key, size_t stride, size_t n, const int *cols, int nc, uint32_t V, int threads, uint32_t *perm, uint32_t *tmp,
                   uint32_t *cnt)
{
	int k = threads < 1 ? 1 : threads > LLR_NGRAM_MAX_THREADS ? LLR_NGRAM_MAX_THREADS : threads;
	if ((size_t)k > n)
		k = n ? (int)n : 1;
	uint32_t *const out = perm;
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	cpart part[LLR_NGRAM_MAX_THREADS];
	for (int c = nc - 1; c >= 0; c--) {
		for (int t = 0; t < k; t++)
			part[t] = (cpart){key + cols[c], perm, tmp, cnt + (size_t)t * ((size_t)V + 1), V, n * (size_t)t / (size_t)k, n * (size_t)(t + 1) / (size_t)k,
			                  stride, 0};
		llr_parts_run(c_part, part, sizeof *part, k);
		llr_parts_offsets(cnt, (size_t)V + 1, k, V);
		for (int t = 0; t < k; t++)
			part[t].phase = 1;
		llr_parts_run(c_part, part, sizeof *part, k);
		uint32_t *t = perm;
		perm = tmp;
		tmp = t;
	}
	if (perm != out) /* an odd number of passes: the result is in tmp */
		memcpy(out, perm, n * sizeof *perm);
}

/* perm: the buffer's keys in lexicographic order. */
static int sort_buffer(const llr_ngram_counter *c, uint32_t *perm, uint32_t *tmp, uint32_t V)
{
	static const int lex[LLR_NGRAM_MAX_ORDER] = {0, 1, 2, 3, 4, 5, 6, 7};
	uint32_t *cnt = llr_malloc(cnt_bytes(c, V));
	if (!cnt)
		return LLR_ENOMEM;
	llr_perm_sort(c->buf, (size_t)c->order, c->nbuf, lex, c->order, V, c_threads(c), perm, tmp, cnt);
	free(cnt);
	return LLR_OK;
}

/* Spilling: the array of distinct keys written as a sorted run (each
 * record its N words, padded to 8 bytes, and its 64-bit count), then
 * emptied. */
static int spill_array(llr_ngram_counter *c, llr_err *err)
{
	const int N = c->order;
	uint64_t rec[LLR_NGRAM_MAX_ORDER / 2 + 2];
	const size_t kw = llr_xrec_key_bytes(N);
	int rc = LLR_OK;
	memset(rec, 0, sizeof rec);
	for (size_t i = 0; i < c->n && rc == LLR_OK; i++) {
		memcpy(rec, c->keys + i * (size_t)N, key_bytes(c));
		memcpy((char *)rec + kw, &c->counts[i], sizeof(uint64_t));
		rc = llr_xsort_run_put(c->xs, rec, err);
	}
	if (rc == LLR_OK)
		rc = llr_xsort_run_end(c->xs, err);
	if (rc != LLR_OK)
		return rc;
	free(c->keys);
	free(c->counts);
	c->keys = NULL;
	c->counts = NULL;
	c->n = 0;
	c->xs_runs++;
	return LLR_OK;
}

/* The buffer sorted and merged into the array of distinct keys. */
static int merge(llr_ngram_counter *c, llr_err *err)
{
	const int N = c->order;
	const size_t nb = c->nbuf, kb = key_bytes(c);
	if (nb == 0)
		return LLR_OK;
	const uint32_t V = (uint32_t)llr_strmap_size(c->vocab);
	int rc;
	if (c->xs && c->n && room(c, c->bufcap, LLR_MAX(2 * nb * sizeof(uint32_t) + cnt_bytes(c, V), nb * sizeof(uint32_t) + (c->n + nb) * (kb + sizeof(uint64_t))), NULL) != LLR_OK &&
	    (rc = spill_array(c, err)) != LLR_OK)
		return rc;
	if ((rc = room(c, c->bufcap, 2 * nb * sizeof(uint32_t) + cnt_bytes(c, V), err)) != LLR_OK)
		return rc;
	uint32_t *perm = llr_malloc(nb * sizeof *perm), *tmp = llr_malloc(nb * sizeof *tmp);
	if (!perm || !tmp || sort_buffer(c, perm, tmp, V) != LLR_OK) {
		free(perm);
		free(tmp);
		return llr_err_set(err, LLR_ENOMEM, "out of memory counting n-grams");
	}
	free(tmp);
	size_t u = 1;
	for (size_t i = 1; i < nb; i++)
		u += key_cmp(c->buf + (size_t)perm[i] * N, c->buf + (size_t)perm[i - 1] * N, N) != 0;
	size_t most = c->n + u;
	uint32_t *keys = NULL;
	uint64_t *counts = NULL;
	if ((rc = room(c, c->bufcap, nb * sizeof(uint32_t) + most * (kb + sizeof(uint64_t)), err)) != LLR_OK ||
	    !(keys = llr_malloc(most * kb)) || !(counts = llr_malloc(most * sizeof *counts))) {
		free(keys);
		free(perm);
		return rc != LLR_OK ? rc : llr_err_set(err, LLR_ENOMEM, "out of memory counting n-grams");
	}
	size_t i = 0, j = 0, k = 0;
	while (i < c->n || j < nb) {
		const uint32_t *b = j < nb ? c->buf + (size_t)perm[j] * N : NULL;
		int d = i == c->n ? 1 : !b ? -1
		                           : key_cmp(c->keys + i * N, b, N);
		if (d < 0) {
			memcpy(keys + k * N, c->keys + i * N, kb);
			counts[k++] = c->counts[i++];
			continue;
		}
		uint64_t cnt = d == 0 ? c->counts[i++] : 0;
		size_t e = j;
		while (e < nb && !key_cmp(c->buf + (size_t)perm[e] * N, b, N))
			e++;
		memcpy(keys + k * N, b, kb);
		counts[k++] = cnt + (e - j);
		j = e;
	}
	free(perm);
	free(c->keys);
	free(c->counts);
	c->keys = keys;
	c->counts = counts;
	c->n = k;
	c->nbuf = 0;
	return c->xs && c->xs_every && c->n >= c->xs_every ? spill_array(c, err) : LLR_OK;
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
	if (llr_strmap_add(c->vocab, LLR_UNK, 5) != 0 || llr_strmap_add(c->vocab, LLR_BOS, 3) != 1 || llr_strmap_add(c->vocab, LLR_EOS, 4) != 2) {
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
	llr_xsort_free(c->xs);
	free(c->buf);
	free(c->keys);
	free(c->counts);
	free(c);
}

size_t llr_ngram_counter_bytes(const llr_ngram_counter *c)
{
	return c->peak;
}

uint64_t llr_ngram_counter_tokens(const llr_ngram_counter *c)
{
	return c->tokens;
}

/* Spilling: a buffer of cap keys sorted and merged with the array
 * emptied takes at most half of what the vocabulary leaves (the other
 * half for the vocabulary to grow into). */
static int fits_alone(const llr_ngram_counter *c, size_t cap)
{
	if (!c->xs)
		return 1;
	size_t V = llr_strmap_size(c->vocab);
	size_t fixed = cnt_bytes(c, V) + c->vocab_bytes + c->reserve;
	return fixed < c->max_bytes && cap * (2 * key_bytes(c) + 2 * sizeof(uint32_t) + sizeof(uint64_t)) <= (c->max_bytes - fixed) / 2;
}

/* Append the key in c->gram, then shift the window left.  A full buffer
 * doubles up to the merge size (2^20 keys or the distinct count so far),
 * then is merged. */
static int add_gram(llr_ngram_counter *c, llr_err *err)
{
	const int N = c->order;
	size_t lim = c->merge_at ? c->merge_at : c->n > COUNT_MERGE_MIN ? c->n
	                                                                : COUNT_MERGE_MIN;
	if (c->xs_every && lim > c->xs_every)
		lim = c->xs_every;
	if (lim > UINT32_MAX)
		lim = UINT32_MAX;
	if (c->nbuf >= lim || c->nbuf == c->bufcap) {
		size_t cap = c->bufcap ? c->bufcap * 2 : 1024;
		if (cap > lim)
			cap = lim;
		int rc;
		if (c->nbuf < lim && c->bufcap < cap && room(c, cap, 0, NULL) == LLR_OK && fits_alone(c, cap)) {
			uint32_t *b = llr_reallocarray(c->buf, cap * (size_t)N, sizeof *b);
			if (!b)
				return llr_err_set(err, LLR_ENOMEM, "out of memory counting n-grams");
			c->buf = b;
			c->bufcap = cap;
		} else if ((rc = merge(c, err)) != LLR_OK) {
			return rc;
		}
		if (c->bufcap == 0 && (rc = room(c, cap, 0, err)) != LLR_OK)
			return rc;
		if (c->bufcap == 0)
			return c->xs ? too_small(c, err) : llr_err_set(err, LLR_ENOMEM, "out of memory counting n-grams");
	}
	memcpy(c->buf + c->nbuf * (size_t)N, c->gram, (size_t)N * sizeof *c->gram);
	c->nbuf++;
	memmove(c->gram, c->gram + 1, (size_t)(N - 1) * sizeof *c->gram);
	c->tokens++;
	return LLR_OK;
}

void llr_ngram_counter_merge_at(llr_ngram_counter *c, size_t keys)
{
	c->merge_at = keys;
}

int llr_ngram_count_line(llr_ngram_counter *c, const char *line, size_t len, llr_err *err)
{
	const int N = c->order;
	for (int i = 0; i < N - 1; i++)
		c->gram[i] = 1; /* <s> */
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_scan(line, len, &pos, &tok, &tl)) {
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

size_t llr_ngram_iobuf(size_t max_bytes)
{
	return LLR_MIN(LLR_MAX(max_bytes / 256, (size_t)4 << 10), (size_t)256 << 10);
}

void llr_ngram_xcfg(const llr_ngram_disk *d, size_t max_bytes, llr_xsort_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->dir = d->dir;
	cfg->fanin = d->fanin >= 2 ? d->fanin : 16;
	cfg->run_records = d->run_records;
	cfg->threads = d->threads;
	cfg->iobuf = llr_ngram_iobuf(max_bytes);
	cfg->mem = max_bytes;
}

int llr_ngram_counter_spill(llr_ngram_counter *c, const llr_ngram_disk *d, llr_err *err)
{
	const int N = c->order;
	LLR_ASSERT(!c->xs && c->n == 0 && c->nbuf == 0);
	c->held = d->base;
	c->base = LLR_MIN(d->base, c->max_bytes);
	c->max_bytes -= c->base;
	llr_xsort_cfg x, *cfg = &x;
	llr_ngram_xcfg(d, c->max_bytes, cfg);
	c->xcfg = x;
	if (!(c->xs = llr_xsort_new(cfg, llr_xrec_key_bytes(N) + sizeof(uint64_t), N, (const int[]){0, 1, 2, 3, 4, 5, 6, 7}, N, 0, add_counts, err)))
		return llr_err_code(err, LLR_ENOMEM);
	c->xs_every = cfg->run_records;
	c->reserve = cfg->iobuf + (cfg->iobuf >> 4) + (c_threads(c) > 1 ? (size_t)c_threads(c) * LLR_NGRAM_THREAD_BYTES : 0); /* and the sort's threads */
	return LLR_OK;
}

int llr_ngram_counter_end(llr_ngram_counter *c, llr_err *err)
{
	return merge(c, err);
}

int llr_ngram_counter_threads(const llr_ngram_counter *c)
{
	return c_threads(c);
}

size_t llr_ngram_counter_base(const llr_ngram_counter *c)
{
	return c->base;
}

int llr_ngram_counter_spilled(const llr_ngram_counter *c)
{
	return c->xs_runs > 0;
}

int llr_ngram_counter_take_runs(llr_ngram_counter *c, int *order, llr_xsort **runs, llr_xsort_cfg *cfg, size_t *max_bytes, size_t *vocab_bytes,
                                llr_strmap **vocab, llr_err *err)
{
	*max_bytes = c->max_bytes;
	*vocab_bytes = c->vocab_bytes;
	*cfg = c->xcfg;
	LLR_ASSERT(c->xs);
	int rc = merge(c, err);
	if (rc == LLR_OK && c->n)
		rc = spill_array(c, err);
	free(c->buf);
	c->buf = NULL;
	c->bufcap = 0;
	if (rc != LLR_OK)
		return rc;
	*order = c->order;
	*runs = c->xs;
	*vocab = c->vocab;
	c->xs = NULL;
	c->vocab = NULL;
	return LLR_OK;
}

void llr_ngram_counter_peek(const llr_ngram_counter *c, int *order, const uint32_t **keys, size_t *n, uint32_t *V, size_t *vocab_bytes)
{
	*order = c->order;
	*keys = c->keys;
	*n = c->n;
	*V = (uint32_t)llr_strmap_size(c->vocab);
	*vocab_bytes = c->vocab_bytes;
}

int llr_ngram_counter_take(llr_ngram_counter *c, int *order, uint32_t **keys, uint64_t **counts, size_t *n, llr_strmap **vocab, llr_err *err)
{
	int rc = merge(c, err);
	if (rc != LLR_OK)
		return rc;
	if (c->xs_runs)
		return llr_err_set(err, LLR_EINVAL, "the n-gram counts are on disk: they are estimated into an ARPA file only");
	free(c->buf);
	c->buf = NULL;
	c->bufcap = 0;
	*order = c->order;
	*keys = c->keys;
	*counts = c->counts;
	*n = c->n;
	*vocab = c->vocab;
	c->keys = NULL;
	c->counts = NULL;
	c->vocab = NULL;
	c->n = 0;
	return LLR_OK;
}

static void add_counts(void *into, const void *from, size_t rec)
{
	uint64_t a, b;
	memcpy(&a, (char *)into + rec - 8, 8);
	memcpy(&b, (const char *)from + rec - 8, 8);
	a += b;
	memcpy((char *)into + rec - 8, &a, 8);
}
