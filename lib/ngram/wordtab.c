/*
 * wordtab.c - the ARPA reader's table of the 1-gram words, for the
 * lookups of every word of the higher sections (millions in a large
 * file, most of them a cache miss in one table of the whole vocabulary).
 *
 * Two open-addressing tables (linear probing) of 24-byte slots holding a
 * word's length, id and first 16 bytes, so that a word of up to 16 bytes
 * (nearly all) is found by reading slots only; the rest of a longer word
 * is compared in one arena.  The `hot` table holds the words
 * of the highest 1-gram probabilities, which are most of the words of the
 * higher sections (79% with 4,096 of Brown's 44,148 words), and is small
 * enough to stay in the cache; the other words are in the second table,
 * looked at only after the first.  Not here: the model's own vocabulary
 * (an llr_strmap), the ARPA syntax (arpa.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

typedef struct wslot {
	uint64_t head, tail; /* bytes 0-7 and 8-15, zero-padded */
	uint32_t len;        /* 0 = empty */
	int32_t id;
} wslot;

typedef struct wtable {
	wslot *slot;
	size_t mask;
} wtable;

struct llr_wordtab {
	wtable hot, cold;
	char *arena;
	size_t *off; /* of word id in arena */
};

/* The first min(n, 8) bytes of s, zero-padded; s[0..avail) is readable. */
static inline uint64_t word_head(const char *s, size_t n, size_t avail)
{
	uint64_t v = 0;
	if (avail >= 8) {
		memcpy(&v, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (n < 8)
			v &= ((uint64_t)1 << (8 * n)) - 1;
		return v;
#else
		v = 0;
#endif
	}
	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)(unsigned char)s[i] << (8 * i);
	return v;
}

static inline size_t word_hash(const char *s, size_t n, uint64_t head, uint64_t tail)
{
	uint64_t h = (head ^ n) * 0xFF51AFD7ED558CCDull;
	h = (h ^ (h >> 31) ^ tail) * 0x9E3779B97F4A7C15ull;
	for (size_t i = 16; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
	h ^= h >> 32;
	h *= 0xC4CEB9FE1A85EC53ull;
	return (size_t)(h ^ (h >> 29));
}

/* Room for the words at most half full (hot), or three quarters (the
 * rest: a smaller table, more of it in the cache, for 1.8 probes a
 * lookup of a word at most). */
static int table_alloc(wtable *t, size_t words, int dense)
{
	size_t cap = 16;
	while (cap < 2 * words && !(dense && cap / 4 * 3 >= words))
		cap *= 2;
	t->mask = cap - 1;
	return (t->slot = llr_alloc_large(cap, sizeof *t->slot, 1)) ? LLR_OK : LLR_ENOMEM;
}

static void table_put(wtable *t, const char *w, size_t len, int32_t id)
{
	uint64_t head = word_head(w, len, 0), tail = len > 8 ? word_head(w + 8, len - 8, 0) : 0;
	size_t j = word_hash(w, len, head, tail) & t->mask;
	while (t->slot[j].len)
		j = (j + 1) & t->mask;
	t->slot[j] = (wslot){head, tail, (uint32_t)len, id};
}

/* The k-th largest of a[0..n) (k < n, no NaN), reordering a: Wirth's
 * selection (Algorithms + Data Structures = Programs, 2.3.4), descending. */
static float kth_largest(float *a, size_t n, size_t k)
{
	long l = 0, r = (long)n - 1, kk = (long)k;
	while (l < r) {
		float x = a[kk];
		long i = l, j = r;
		do {
			while (a[i] > x)
				i++;
			while (x > a[j])
				j--;
			if (i <= j) {
				float y = a[i];
				a[i] = a[j];
				a[j] = y;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			r = j;
	}
	return a[kk];
}

llr_wordtab *llr_wordtab_new(const llr_strmap *v, const float *logp, size_t hot)
{
	const size_t n = llr_strmap_size(v);
	if (hot > n)
		hot = n;
	llr_wordtab *t = llr_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	size_t bytes = 1;
	for (size_t i = 0; i < n; i++)
		bytes += llr_strmap_len(v, (int32_t)i);
	float *a = hot && hot < n ? llr_malloc(n * sizeof *a) : NULL;
	if (table_alloc(&t->hot, hot, 0) != LLR_OK || table_alloc(&t->cold, n - hot, 1) != LLR_OK || !(t->arena = llr_malloc(bytes)) ||
	    !(t->off = llr_malloc((n + 1) * sizeof *t->off)) || (hot && hot < n && !a)) {
		free(a);
		llr_wordtab_free(t);
		return NULL;
	}
	/* The hot words: those above the hot-th largest probability, then
	 * those equal to it, by id, up to hot. */
	float cut = 0;
	size_t above = 0, ties = 0;
	if (a) {
		memcpy(a, logp, n * sizeof *a);
		cut = kth_largest(a, n, hot - 1);
		for (size_t i = 0; i < n; i++)
			above += logp[i] > cut;
		free(a);
	}
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		const char *w = llr_strmap_str(v, (int32_t)i);
		size_t len = llr_strmap_len(v, (int32_t)i);
		int is_hot = hot == n || (hot && (logp[i] > cut || (logp[i] == cut && ties++ < hot - above)));
		table_put(is_hot ? &t->hot : &t->cold, w, len, (int32_t)i);
		t->off[i] = off;
		memcpy(t->arena + off, w, len);
		off += len;
	}
	return t;
}

void llr_wordtab_free(llr_wordtab *t)
{
	if (!t)
		return;
	free(t->hot.slot);
	free(t->cold.slot);
	free(t->arena);
	free(t->off);
	free(t);
}

static inline int32_t table_get(const llr_wordtab *t, const wtable *tb, const char *s, size_t n, uint64_t head, uint64_t tail, size_t h)
{
	for (size_t j = h & tb->mask;; j = (j + 1) & tb->mask) {
		const wslot *e = &tb->slot[j];
		if (!e->len)
			return -1;
		if (e->len == n && e->head == head && e->tail == tail && (n <= 16 || !memcmp(t->arena + t->off[e->id] + 16, s + 16, n - 16)))
			return e->id;
	}
}

int32_t llr_wordtab_get(const llr_wordtab *t, const char *s, size_t n, size_t avail)
{
	uint64_t head = word_head(s, n, avail), tail = n > 8 ? word_head(s + 8, n - 8, avail - 8) : 0;
	size_t h = word_hash(s, n, head, tail);
	int32_t id = table_get(t, &t->hot, s, n, head, tail, h);
	return id >= 0 ? id : table_get(t, &t->cold, s, n, head, tail, h);
}

/* Words looked up together: all hashed and their slots fetched, then
 * found, so that the misses of the large table overlap. */
enum { MANY = 16 };

void llr_wordtab_get_many(const llr_wordtab *t, const char *const *w, size_t n, int32_t *ids)
{
	size_t len[MANY], h[MANY];
	uint64_t head[MANY], tail[MANY];
	for (size_t i = 0; i < n; i += MANY) {
		size_t k = LLR_MIN(n - i, (size_t)MANY);
		for (size_t j = 0; j < k; j++) {
			const char *s = w[i + j];
			len[j] = strlen(s);
			head[j] = word_head(s, len[j], len[j]);
			tail[j] = len[j] > 8 ? word_head(s + 8, len[j] - 8, len[j] - 8) : 0;
			h[j] = word_hash(s, len[j], head[j], tail[j]);
			PREFETCH(&t->hot.slot[h[j] & t->hot.mask]);
			PREFETCH(&t->cold.slot[h[j] & t->cold.mask]);
		}
		for (size_t j = 0; j < k; j++) {
			int32_t id = table_get(t, &t->hot, w[i + j], len[j], head[j], tail[j], h[j]);
			ids[i + j] = id >= 0 ? id : table_get(t, &t->cold, w[i + j], len[j], head[j], tail[j], h[j]);
		}
	}
}
