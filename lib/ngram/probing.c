/*
 * probing.c - the probing form of an n-gram model (llrnn-tensor(5),
 * structure=probing): one hash table per order above the first, with
 * linear probing, each bucket holding an n-gram's 64-bit key, its log10 p
 * and its log10 backoff side by side, so a lookup is one cache line in
 * the usual case; the first order is an array indexed by word id.  The
 * file form is the tables themselves, mapped (mmap) and never parsed:
 * loading is reading the meta and the vocabulary.
 *
 * Keys are built from the last word of an n-gram towards its first
 * (key(w) = w + 1, key(v s) = extend(key(s), v)), so the n-grams ending
 * in the word being scored are found longest-first by extending one key,
 * and those found are the next word's contexts with their backoffs
 * (llr_ngram_score_ids keeps them as its state).  That shortcut needs a
 * model whose n-grams' suffixes are all listed (every Kneser-Ney model
 * lmplz or train writes); the build checks it and records it as
 * `probing.closed`, and a model without it is queried context by context
 * as the trie is.  Both give the trie's answers (trie.c) to the bit.
 *
 * Integrity: meta, vocabulary, the first order and the block checksums
 * are verified at load; a table's 64 KiB blocks are verified lazily, the
 * first time a lookup touches each (a byte per block says it was), or
 * all at load with LLR_NGRAM_VERIFY.  A failed block makes the model
 * "bad" (llr_ngram_status): the caller drops what it computed since.
 *
 * The lookups read the mapping itself when the system maps it in 2 MiB
 * pages (the page cache holding the file in huge folios: a file the
 * tensor writer has just written, in 2 MiB writes, or one read from
 * disk through the mapping, which is advised MADV_HUGEPAGE), as KenLM's
 * do.  Otherwise, for tables of up to COPY_MAX bytes in all, a block
 * that passed its check is copied out of the mapping into memory
 * reserved at load with huge pages (llr_alloc_large), and the lookups
 * read the copy: the mapping's 4 KiB pages made nearly every lookup a
 * TLB miss (two-level page walks under a hypervisor).  The reservation
 * costs nothing until touched; the copied pages of the mapping are
 * dropped (MADV_DONTNEED), so the memory used stays about the model's
 * size.  Over COPY_MAX the copy costs more than it saves (the kernel
 * zeroing fresh memory at its first touch: 2.2 s for 777 MB here).
 *
 * A batch is scored WIN tokens at a time, an order at a time (the
 * bigrams of all, then the trigrams of those whose bigram was found and
 * whose context is long enough, ...), each bucket fetched DIST lookups
 * before it is read: only lookups that can find something are made or
 * fetched, and many are in flight at once.
 * Not here: the trie (trie.c), ARPA text (arpa.c).
 */
#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* The key of the n-gram v s from the key of s (murmur3's finaliser over
 * a multiplicative mix; never 0). */
static inline uint64_t extend(uint64_t key, int32_t v)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull + (uint64_t)(uint32_t)v + 1;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

static inline uint64_t bucket(uint64_t key, uint64_t nb)
{
	return (uint64_t)(((unsigned __int128)key * nb) >> 64);
}

/* Buckets for count n-grams: 1.5 per n-gram, and one empty at least. */
static uint64_t buckets_for(int64_t count)
{
	return (uint64_t)count + (uint64_t)count / 2 + 1;
}

/* Drop the whole pages of the mapping within [a, a + len) (they are
 * copied; the page cache keeps the file). */
static void drop_pages(const void *a, size_t len)
{
	static size_t page;
	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);
		page = ps > 0 ? (size_t)ps : 4096;
	}
	uintptr_t lo = ((uintptr_t)a + page - 1) & ~(uintptr_t)(page - 1), hi = ((uintptr_t)a + len) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Check block b of order n's table against its CRC and copy it to the
 * lookups' table if that is not the mapping; 0 when it fails (and the
 * model is marked bad).  Threads may copy the same block at once: they
 * write the same bytes. */
static int check_block(const llr_ngram_probe *cp, int n, uint64_t b)
{
	llr_ngram_probe *p = (llr_ngram_probe *)cp; /* the checked bytes, the copy and the flag only */
	uint64_t first = b << LLR_PROBE_BLOCK_SHIFT, end = LLR_MIN(first + ((uint64_t)1 << LLR_PROBE_BLOCK_SHIFT), p->nb[n - 1]);
	const llr_probe_entry *from = p->src[n - 1] + first;
	size_t bytes = (size_t)(end - first) * sizeof(llr_probe_entry);
	uint32_t crc = llr_crc32c(0, from, bytes);
	if (crc == p->bcrc[n - 1][b] && p->tab[n - 1] != p->src[n - 1]) {
		memcpy((llr_probe_entry *)p->tab[n - 1] + first, from, bytes);
		drop_pages(from, bytes);
	}
	if (crc != p->bcrc[n - 1][b]) {
		if (!__atomic_exchange_n(&p->bad, 1, __ATOMIC_RELAXED)) {
			p->bad_order = n;
			p->bad_block = b;
		}
		return 0;
	}
	/* the last block of the table to pass: the lookups stop reading the
	 * flags (a flag, and the count, go up once however many threads
	 * checked the block) */
	if (!__atomic_exchange_n(&p->checked[n - 1][b], 1, __ATOMIC_ACQ_REL) &&
	    __atomic_add_fetch(&p->nchecked[n - 1], 1, __ATOMIC_ACQ_REL) == p->blocks[n - 1])
		__atomic_store_n(&p->ok[n - 1], NULL, __ATOMIC_RELEASE);
	return 1;
}

static inline const llr_probe_entry *find(const llr_ngram_probe *p, int n, uint64_t key)
{
	const llr_probe_entry *t = p->tab[n - 1];
	const unsigned char *ok = __atomic_load_n(&p->ok[n - 1], __ATOMIC_ACQUIRE);
	uint64_t nb = p->nb[n - 1], i = bucket(key, nb);
	for (uint64_t tries = 0; tries < nb; tries++) {
		if (ok && !__atomic_load_n(&ok[i >> LLR_PROBE_BLOCK_SHIFT], __ATOMIC_ACQUIRE) && !check_block(p, n, i >> LLR_PROBE_BLOCK_SHIFT))
			return NULL;
		if (t[i].key == key)
			return &t[i];
		if (!t[i].key)
			return NULL;
		if (++i == nb)
			i = 0;
	}
	return NULL;
}

static inline void fetch(const llr_ngram_probe *p, int n, uint64_t key)
{
	PREFETCH(p->tab[n - 1] + bucket(key, p->nb[n - 1]));
}

void llr_ngram_probe_free(llr_ngram_probe *p)
{
	if (!p)
		return;
	for (int n = 0; n < LLR_NGRAM_MAX_ORDER; n++) {
		free(p->own[n]);
		free(p->checked[n]);
	}
	llr_tarmap_close(p->map);
	llr_wordtab_free(p->words);
	free(p);
}

/* The table of m's words that llr_ngram_word looks in (the ARPA reader's,
 * wordtab.c: most words found within its slots), the most probable
 * 4,096 in a first small one.  Optional: without it, the vocabulary. */
static int add_words(llr_ngram *m, llr_err *err)
{
	const int64_t V = m->count[0];
	float *lp = llr_malloc((size_t)V * sizeof *lp);
	if (!lp)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int64_t w = 0; w < V; w++)
		lp[w] = m->probe->uni[2 * w];
	m->probe->words = llr_wordtab_new(m->vocab, lp, 4096);
	free(lp);
	return m->probe->words ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
}

int32_t llr_ngram_probe_word(const llr_ngram *m, const char *w, size_t len)
{
	return llr_wordtab_get(m->probe->words, w, len, len);
}

/* ------------------------------------------------------------ queries */

float llr_ngram_probe_log10p(const llr_ngram *m, const int32_t *ctx, int n, int32_t w, int *matched)
{
	const llr_ngram_probe *p = m->probe;
	n = llr_ngram_context(m, &ctx, n);
	/* ck[k]: the key of the context's last k words; ek[k]: of those and w. */
	uint64_t ck[LLR_NGRAM_MAX_ORDER + 1], ek[LLR_NGRAM_MAX_ORDER + 1];
	ek[0] = (uint64_t)w + 1;
	for (int k = 1; k <= n; k++) {
		ck[k] = k == 1 ? (uint64_t)ctx[n - 1] + 1 : extend(ck[k - 1], ctx[n - k]);
		ek[k] = extend(ek[k - 1], ctx[n - k]);
	}
	float bo = 0;
	for (int k = n; k >= 1; k--) {
		const llr_probe_entry *c = k == 1 ? NULL : find(p, k, ck[k]);
		if (k > 1 && !c)
			continue;
		const llr_probe_entry *e = find(p, k + 1, ek[k]);
		if (e) {
			if (matched)
				*matched = k + 1;
			return bo + e->logp;
		}
		bo += k == 1 ? p->uni[2 * ctx[n - 1] + 1] : c->backoff;
	}
	if (matched)
		*matched = 1;
	return bo + p->uni[2 * w];
}

/* The keys of the n-grams ending at h[t]: key[j] for length j + 1 (j = 1
 * .. order - 1), as far as the history has known words; their number. */
static int chain_keys(const int32_t *h, size_t t, int order, uint64_t *key)
{
	int j = 0;
	uint64_t k = (uint64_t)h[t] + 1;
	while (j + 1 < order && (size_t)j < t && h[t - 1 - j] >= 0) {
		k = extend(k, h[t - 1 - j]);
		key[++j] = k;
	}
	return j;
}

/* The ids of a batch of sentences, a token at a time: sentence b is
 * h[0..n[b]] of its stretch, h[0] its context (<s> or -1), h[1..n[b]]
 * the tokens scored. */
typedef struct cursor {
	const int32_t *h; /* the current sentence's stretch */
	const size_t *n;
	size_t b, B, t; /* sentence b of B, token t (1..n[b]) */
} cursor;

/* Onto the first token at or after the current sentence's token t; 0 at
 * the end of the batch. */
static int cursor_settle(cursor *c)
{
	while (c->b < c->B && c->t > c->n[c->b]) {
		c->h += c->n[c->b] + 1;
		c->b++;
		c->t = 1;
	}
	return c->b < c->B;
}

/* The tokens of a batch that score_closed looks up together. */
enum { WIN = 256 };
typedef struct window {
	int32_t w[WIN];   /* the token (-1: outside the vocabulary) */
	int32_t ctx[WIN]; /* a sentence's first token: its context (<s> or -1); -2 otherwise */
	int8_t nk[WIN];   /* keys[i][1..nk]: of the n-grams of 2.. words ending there */
	int8_t got[WIN];  /* the longest n-gram found ending there (0 outside the vocabulary) */
	int16_t todo[WIN];
	float l[WIN];     /* log10 p of that n-gram */
	uint64_t key[WIN][LLR_NGRAM_MAX_ORDER];
	float bo[WIN][LLR_NGRAM_MAX_ORDER + 1]; /* bo[i][k]: the backoff of the k-gram ending at i, k <= got */
} window;

/* The next (up to) WIN tokens of the batch from a into x, their keys
 * computed and their unigrams fetched; their number. */
static int window_fill(const llr_ngram_probe *p, int order, cursor *a, window *x)
{
	int k = 0;
	for (; k < WIN && cursor_settle(a); k++, a->t++) {
		int32_t v = x->w[k] = a->h[a->t];
		x->ctx[k] = a->t == 1 ? a->h[0] : -2;
		x->nk[k] = (int8_t)(v >= 0 ? chain_keys(a->h, a->t, order, x->key[k]) : 0);
		x->got[k] = v >= 0;
		if (v >= 0)
			PREFETCH(p->uni + 2 * v);
	}
	return k;
}

/* Whether token i of x has a context of k - 1 words or more: its sentence's
 * <s> (k = 2), else the n-grams found ending at the token before (the
 * last of the window before when i is 0: J words then). */
static inline int context_at_least(const window *x, int i, int J, int k)
{
	if (x->ctx[i] != -2)
		return k == 2 && x->ctx[i] >= 0;
	return (i ? x->got[i - 1] : J) >= k - 1;
}

/* The lookups of x's k tokens, an order at a time: the k-grams of the
 * tokens whose (k - 1)-gram was found and whose context is long enough,
 * each fetched DIST lookups ahead.  An n-gram is listed only if its
 * context is (every ARPA model's n-grams are), so these are all the
 * lookups that can find anything, and nothing is fetched in vain. */
enum { DIST = 12 };
static void window_lookups(const llr_ngram_probe *p, int order, window *x, int k, int J)
{
	for (int i = 0; i < k; i++)
		if (x->w[i] >= 0) {
			x->l[i] = p->uni[2 * x->w[i]];
			x->bo[i][1] = p->uni[2 * x->w[i] + 1];
		}
	for (int n = 2; n <= order; n++) {
		int m = 0;
		for (int i = 0; i < k; i++)
			if (x->got[i] == n - 1 && x->nk[i] >= n - 1 && context_at_least(x, i, J, n))
				x->todo[m++] = (int16_t)i;
		if (!m)
			break;
		for (int d = 0; d < LLR_MIN(m, DIST); d++)
			fetch(p, n, x->key[x->todo[d]][n - 1]);
		for (int d = 0; d < m; d++) {
			if (d + DIST < m)
				fetch(p, n, x->key[x->todo[d + DIST]][n - 1]);
			int i = x->todo[d];
			const llr_probe_entry *e = find(p, n, x->key[i][n - 1]);
			if (e) {
				x->l[i] = e->logp;
				x->bo[i][n] = e->backoff;
				x->got[i] = (int8_t)n;
			}
		}
	}
}

/* Score a batch (llr_ngram_score_batch) for a suffix-closed model, WIN
 * tokens at a time across its sentences (window_lookups), with the
 * backoffs of the n-grams found ending at each token as the next one's
 * state: its context's backoffs are never looked up again. */
static void score_closed(const llr_ngram *m, const int32_t *h, const size_t *n, size_t B, float *lp, int32_t *len)
{
	const llr_ngram_probe *p = m->probe;
	const int order = m->order;
	window x;
	cursor a = {h, n, 0, B, 1};
	int J = 0; /* the state: the context's length, and its backoffs */
	float bo[LLR_NGRAM_MAX_ORDER + 1];
	size_t g = 0;
	for (int k; (k = window_fill(p, order, &a, &x)) > 0;) {
		window_lookups(p, order, &x, k, J);
		for (int i = 0; i < k; i++, g++) {
			if (x.ctx[i] != -2) {
				J = x.ctx[i] >= 0 && order > 1;
				if (J)
					bo[1] = p->uni[2 * x.ctx[i] + 1];
			}
			if (x.w[i] < 0) {
				lp[g] = 0;
				if (len)
					len[g] = 0;
				J = 0;
				continue;
			}
			int got = x.got[i];
			float s = 0;
			for (int j = J; j >= got; j--)
				s += bo[j];
			lp[g] = s + x.l[i];
			if (len)
				len[g] = got;
			J = LLR_MIN(got, order - 1);
			for (int j = 1; j <= J; j++)
				bo[j] = x.bo[i][j];
		}
	}
}

int llr_ngram_score_batch(const llr_ngram *m, const int32_t *h, const size_t *n, size_t B, float *lp, int32_t *len, llr_err *err)
{
	if (m->probe && m->probe->closed) {
		score_closed(m, h, n, B, lp, len);
		return llr_ngram_status(m, err);
	}
	const int keep = m->order - 1;
	for (size_t b = 0; b < B; h += n[b] + 1, lp += n[b], len = len ? len + n[b] : NULL, b++)
		for (size_t t = 1; t <= n[b]; t++) {
			int nctx = (int)LLR_MIN(t, (size_t)keep), matched = 0;
			lp[t - 1] = h[t] >= 0 ? llr_ngram_log10p(m, h + t - nctx, nctx, h[t], &matched) : 0.0f;
			if (len)
				len[t - 1] = matched;
		}
	return llr_ngram_status(m, err);
}

int llr_ngram_score_ids(const llr_ngram *m, const int32_t *h, size_t n, float *lp, int32_t *len, llr_err *err)
{
	return llr_ngram_score_batch(m, h, &n, 1, lp, len, err);
}

int llr_ngram_status(const llr_ngram *m, llr_err *err)
{
	const llr_ngram_probe *p = m->probe;
	if (!p || !__atomic_load_n(&p->bad, __ATOMIC_RELAXED))
		return LLR_OK;
	return llr_err_set(err, LLR_EFORMAT, "%s: member %d/table.npy: block %llu: checksum mismatch (corrupted file)",
	                   m->path ? m->path : "model", p->bad_order, (unsigned long long)p->bad_block);
}

/* -------------------------------------------------------------- build */

static int insert(llr_ngram_probe *p, int n, uint64_t key, float logp, float backoff)
{
	llr_probe_entry *t = p->own[n - 1];
	uint64_t nb = p->nb[n - 1], i = bucket(key, nb);
	while (t[i].key) {
		if (t[i].key == key)
			return -1;
		if (++i == nb)
			i = 0;
	}
	t[i] = (llr_probe_entry){key, logp, backoff};
	return 0;
}

/* The n-grams of one order waiting to go into their table: inserts and
 * suffix checks are cache misses in a large table, so they are done a
 * batch at a time, each batch's buckets fetched first. */
enum { BATCH = 64 };
typedef struct pending {
	llr_ngram_probe *p;
	int n;
	size_t k;
	uint64_t key[BATCH], suffix[BATCH]; /* suffix 0: none to check */
	float logp[BATCH], backoff[BATCH];
	int open, collision;
} pending;

static void flush(pending *b)
{
	for (size_t j = 0; j < b->k; j++) {
		fetch(b->p, b->n, b->key[j]);
		if (b->suffix[j])
			fetch(b->p, b->n - 1, b->suffix[j]);
	}
	for (size_t j = 0; j < b->k; j++) {
		if (b->suffix[j] && !find(b->p, b->n - 1, b->suffix[j]))
			b->open = 1;
		if (insert(b->p, b->n, b->key[j], b->logp[j], b->backoff[j]) < 0)
			b->collision = 1;
	}
	b->k = 0;
}

/* Queue the n-grams of order b->n under entry i of level k (words[0..k)
 * its words). */
static void visit(const llr_ngram *m, pending *b, int k, int64_t i, int32_t *words)
{
	if (k == b->n) {
		uint64_t key = (uint64_t)words[k - 1] + 1, suffix = 0;
		for (int j = k - 2; j >= 0; j--) {
			if (j == 0 && k > 2)
				suffix = key;
			key = extend(key, words[j]);
		}
		b->key[b->k] = key;
		b->suffix[b->k] = suffix;
		b->logp[b->k] = m->logp[k - 1][i];
		b->backoff[b->k] = k < m->order ? m->backoff[k - 1][i] : 0.0f;
		if (++b->k == BATCH)
			flush(b);
		return;
	}
	for (int64_t c = m->child[k - 1][i]; c < m->child[k - 1][i + 1]; c++) {
		words[k] = m->word[k][c];
		visit(m, b, k + 1, c, words);
	}
}

static int build(const llr_ngram *m, llr_ngram_probe **out, llr_err *err)
{
	llr_ngram_probe *p = llr_calloc(1, sizeof *p);
	const int64_t V = m->count[0];
	float *uni = p ? llr_alloc_large((size_t)V, 2 * sizeof(float), 0) : NULL;
	if (!uni) {
		free(p);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the probing form");
	}
	p->own[0] = uni;
	p->uni = uni;
	for (int64_t w = 0; w < V; w++) {
		uni[2 * w] = m->logp[0][w];
		uni[2 * w + 1] = m->order > 1 ? m->backoff[0][w] : 0.0f;
	}
	int open = 0;
	for (int n = 2; n <= m->order; n++) {
		p->nb[n - 1] = buckets_for(m->count[n - 1]);
		if (!(p->own[n - 1] = llr_alloc_large(p->nb[n - 1], sizeof(llr_probe_entry), 1))) {
			llr_ngram_probe_free(p);
			return llr_err_set(err, LLR_ENOMEM, "out of memory for the probing form");
		}
		p->tab[n - 1] = p->own[n - 1];
		int32_t words[LLR_NGRAM_MAX_ORDER];
		pending b = {.p = p, .n = n};
		for (int64_t w = 0; w < V; w++) {
			words[0] = (int32_t)w;
			visit(m, &b, 1, w, words);
		}
		flush(&b);
		open |= b.open;
		if (b.collision) {
			llr_ngram_probe_free(p);
			return llr_err_set(err, LLR_ERANGE, "two %d-grams have the same 64-bit key: keep the trie form", n);
		}
	}
	p->closed = !open;
	*out = p;
	return LLR_OK;
}

int llr_ngram_probe_build(llr_ngram *m, llr_err *err)
{
	llr_ngram_probe *p;
	int rc = build(m, &p, err);
	if (rc == LLR_OK) {
		llr_ngram_probe_free(m->probe);
		m->probe = p;
		rc = add_words(m, err);
	}
	return rc;
}

void llr_ngram_drop_trie(llr_ngram *m)
{
	for (int n = 0; n < LLR_NGRAM_MAX_ORDER; n++) {
		free(m->word[n]);
		free(m->logp[n]);
		free(m->backoff[n]);
		free(m->child[n]);
		m->word[n] = NULL;
		m->logp[n] = m->backoff[n] = NULL;
		m->child[n] = NULL;
	}
}

/* --------------------------------------------------------- file form */

static int put_tables(llr_tensor_writer *w, const llr_ngram *m, const llr_ngram_probe *p, llr_err *err)
{
	int64_t shape[2] = {m->count[0], 2};
	int rc = llr_lex_put_names(w, "vocab", m->vocab, err);
	if (rc == LLR_OK)
		rc = llr_tw_put_raw(w, "1/prob", LLR_F32, 2, shape, p->uni, err);
	for (int n = 2; n <= m->order && rc == LLR_OK; n++) {
		uint64_t nb = p->nb[n - 1], blocks = (nb + ((uint64_t)1 << LLR_PROBE_BLOCK_SHIFT) - 1) >> LLR_PROBE_BLOCK_SHIFT;
		uint32_t *crc = llr_malloc((size_t)blocks * sizeof *crc);
		if (!crc)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		for (uint64_t b = 0; b < blocks; b++) {
			uint64_t first = b << LLR_PROBE_BLOCK_SHIFT, end = LLR_MIN(first + ((uint64_t)1 << LLR_PROBE_BLOCK_SHIFT), nb);
			crc[b] = llr_crc32c(0, p->tab[n - 1] + first, (size_t)(end - first) * sizeof(llr_probe_entry));
		}
		char name[32];
		int64_t tshape[2] = {(int64_t)nb, 2}, cshape[1] = {(int64_t)blocks};
		snprintf(name, sizeof name, "%d/table", n);
		rc = llr_tw_put_raw(w, name, LLR_I64, 2, tshape, p->tab[n - 1], err);
		snprintf(name, sizeof name, "%d/crc", n);
		if (rc == LLR_OK)
			rc = llr_tw_put_raw(w, name, LLR_I32, 1, cshape, crc, err);
		free(crc);
	}
	return rc;
}

int llr_ngram_save_probing(const llr_ngram *m, const char *path, llr_err *err)
{
	if (!m->logp[0])
		return llr_err_set(err, LLR_EINVAL, "%s: the model has no trie to build the probing form from", path);
	llr_ngram_probe *p;
	int rc = build(m, &p, err);
	if (rc != LLR_OK)
		return rc;
	llr_meta *meta = llr_meta_new();
	rc = meta ? llr_ngram_meta(m, meta, "") : LLR_ENOMEM;
	if (rc == LLR_OK)
		rc = llr_meta_set(meta, "structure", "probing");
	if (rc == LLR_OK)
		rc = llr_meta_setf(meta, "probing.closed", "%d", p->closed);
	for (int n = 2; n <= m->order && rc == LLR_OK; n++) {
		char key[32];
		snprintf(key, sizeof key, "probing.buckets.%d", n);
		rc = llr_meta_setf(meta, key, "%llu", (unsigned long long)p->nb[n - 1]);
	}
	if (rc != LLR_OK) {
		llr_meta_free(meta);
		llr_ngram_probe_free(p);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	llr_tensor_writer *w = llr_tw_open(path, "ngram", meta, err);
	llr_meta_free(meta);
	if (!w) {
		llr_ngram_probe_free(p);
		return llr_err_code(err, LLR_EIO);
	}
	rc = put_tables(w, m, p, err);
	llr_ngram_probe_free(p);
	if (rc != LLR_OK) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, err);
}

/* Member name of t as the array the meta's sizes say, its CRC checked
 * when check is set. */
static int map_array(llr_tarmap *t, const char *name, llr_dtype dt, int ndim, const int64_t *shape, int check, const void **data,
                     llr_err *err)
{
	const llr_tarmap_member *mem;
	int rc = llr_tarmap_array(t, name, dt, ndim, shape, data, &mem, err);
	if (rc == LLR_OK && check)
		rc = llr_tarmap_verify(t, mem, err);
	return rc;
}

/* The lookups read a copy of a table (check_block) rather than the
 * mapping, unless the mapping is in 2 MiB pages (llr_tarmap_huge), or
 * the tables are over COPY_MAX bytes in all: the copy's first touch of
 * fresh memory (the kernel zeroing it) then costs more than the lookups
 * gain from its huge pages unless each block is read thousands of times
 * (2.2 s of system time for the 777 MB 5-gram of bench/ngram-query's
 * generated corpus, against about 1 s saved on 10M tokens: issue 49).
 * Without the memory for a copy, the lookups read the mapping. */
#define COPY_MAX ((size_t)256 << 20)

static int map_tables(llr_tarmap *t, const llr_meta *meta, const char *path, int verify, llr_ngram *m, llr_err *err)
{
	llr_ngram_probe *p = m->probe;
	int64_t v;
	int rc = llr_meta_get_i64(meta, "probing.closed", &v, err);
	p->closed = v == 1;
	int64_t shape[2] = {m->count[0], 2};
	size_t total = 0; /* the tables' bytes */
	if (rc == LLR_OK)
		rc = map_array(t, "1/prob", LLR_F32, 2, shape, 1, (const void **)&p->uni, err);
	for (int n = 2; n <= m->order && rc == LLR_OK; n++) {
		char key[32], name[32];
		snprintf(key, sizeof key, "probing.buckets.%d", n);
		if ((rc = llr_meta_get_i64(meta, key, &v, err)) != LLR_OK)
			break;
		if (v <= m->count[n - 1] || v > LLR_MAX_MEMBER / (int64_t)sizeof(llr_probe_entry)) {
			rc = llr_err_set(err, LLR_ERANGE, "%s: %s=%lld out of range", path, key, (long long)v);
			break;
		}
		p->nb[n - 1] = (uint64_t)v;
		uint64_t blocks = ((uint64_t)v + ((uint64_t)1 << LLR_PROBE_BLOCK_SHIFT) - 1) >> LLR_PROBE_BLOCK_SHIFT;
		int64_t tshape[2] = {v, 2}, cshape[1] = {(int64_t)blocks};
		snprintf(name, sizeof name, "%d/table", n);
		if ((rc = map_array(t, name, LLR_I64, 2, tshape, verify, (const void **)&p->src[n - 1], err)) != LLR_OK)
			break;
		snprintf(name, sizeof name, "%d/crc", n);
		if ((rc = map_array(t, name, LLR_I32, 1, cshape, 1, (const void **)&p->bcrc[n - 1], err)) != LLR_OK)
			break;
		p->blocks[n - 1] = blocks;
		if (!(p->checked[n - 1] = p->ok[n - 1] = llr_calloc((size_t)blocks, 1))) {
			rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
			break;
		}
		total += (size_t)v * sizeof(llr_probe_entry);
	}
	for (int n = 2; n <= m->order && rc == LLR_OK; n++) {
		size_t bytes = (size_t)p->nb[n - 1] * sizeof(llr_probe_entry);
		if (!llr_tarmap_huge(t, p->src[n - 1], bytes) && total <= COPY_MAX)
			p->own[n - 1] = llr_alloc_large((size_t)p->nb[n - 1], sizeof(llr_probe_entry), 0);
		p->tab[n - 1] = p->own[n - 1] ? p->own[n - 1] : p->src[n - 1];
		for (uint64_t b = 0; verify && rc == LLR_OK && b < p->blocks[n - 1]; b++)
			if (!check_block(p, n, b))
				rc = llr_ngram_status(m, err);
	}
	return rc;
}

int llr_ngram_probe_map(llr_tarmap *t, const llr_meta *meta, const char *path, int verify, llr_ngram **out, llr_err *err)
{
	int64_t order;
	llr_ngram *m = NULL;
	*out = NULL;
	int rc = llr_meta_get_i64(meta, "order", &order, err);
	if (rc == LLR_OK && !(m = llr_ngram_alloc((int)(order < 1 || order > LLR_NGRAM_MAX_ORDER ? 0 : order), err)))
		rc = llr_err_prefix(err, "%s", path);
	for (int n = 1; rc == LLR_OK && n <= m->order; n++) {
		char key[32];
		snprintf(key, sizeof key, "ngram.%d", n);
		if ((rc = llr_meta_get_i64(meta, key, &m->count[n - 1], err)) == LLR_OK &&
		    (m->count[n - 1] < 0 || m->count[n - 1] > ((int64_t)1 << 40) || (n == 1 && (m->count[0] > LLR_MAX_VOCAB || m->count[0] < 1))))
			rc = llr_err_set(err, LLR_ERANGE, "%s: %s=%lld out of range", path, key, (long long)m->count[n - 1]);
	}
	if (rc == LLR_OK && (!(m->probe = llr_calloc(1, sizeof *m->probe)) || !(m->path = strdup(path))))
		rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	const llr_tarmap_member *voc = rc == LLR_OK ? llr_tarmap_find(t, "vocab") : NULL;
	if (rc == LLR_OK && !voc)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no member vocab", path);
	if (rc == LLR_OK)
		rc = llr_tarmap_verify(t, voc, err);
	if (rc == LLR_OK) {
		llr_strmap *v = NULL;
		if ((rc = llr_lex_parse_names((const char *)voc->data, voc->size, "vocab", m->count[0], &v, err)) == LLR_OK) {
			llr_strmap_free(m->vocab);
			m->vocab = v;
		} else
			llr_err_prefix(err, "%s", path);
	}
	if (rc == LLR_OK)
		rc = map_tables(t, meta, path, verify, m, err);
	if (rc == LLR_OK)
		rc = add_words(m, err);
	if (rc != LLR_OK) {
		llr_ngram_free(m);
		return rc;
	}
	m->probe->map = t;
	llr_ngram_specials(m);
	*out = m;
	return LLR_OK;
}
