/*
 * estimate.c - interpolated modified Kneser-Ney estimation, as KenLM's
 * lmplz computes it (Heafield, Pouzyrevsky, Clark & Koehn 2013; Chen &
 * Goodman 1998, section 3 and equation 26), from the counts of count.c.
 *
 * Adjusted counts a(.): the highest order keeps its raw counts, and so
 * does every n-gram that begins with <s>; any other n-gram x of order
 * n < N gets the number of distinct words w with "w x" counted (its left
 * continuations).  Discounts, per order, from the numbers t_k of n-grams
 * of that order with adjusted count k:
 *     Y = t1 / (t1 + 2 t2),   D_k = k - (k + 1) Y t_{k+1} / t_k  (k = 1, 2, 3)
 * and D(a) = D_min(a,3), D(0) = 0.  For a context c of order n-1,
 *     u(w | c) = (a(c w) - D(a(c w))) / sum_x a(c x)
 *     g(c)     = (D1 N1(c .) + D2 N2(c .) + D3 N3+(c .)) / sum_x a(c x)
 *     p(w | c) = u(w | c) + g(c) p(w | c')   (c' = c without its first word)
 * down to the unigrams, interpolated with the uniform 1/|V| over the
 * vocabulary without <s> (<unk> included, with a(<unk>) = 0).  <s> gets
 * probability 1 (log10 0) and n-grams ending in </s> or <unk> backoff 1,
 * as lmplz writes them.  Pruned n-grams (llr_kn_opts.prune) still count
 * in the denominators and their whole adjusted count goes to g(c), as in
 * lmplz.  One documented difference: lmplz takes the counts of counts of
 * its last few lower-order n-grams from their raw counts (the flush at the
 * end of AdjustCounts::Run); here every lower-order n-gram counts with its
 * adjusted count.
 *
 * Sorting is LSD radix sort of a 32-bit permutation over word ids.
 * Memory: the highest order takes over count.c's array in place (4 N + 8
 * bytes an N-gram; the lower orders 4 n + 8, and 8 more for raw counts
 * only when pruning); a sort adds 8 bytes an entry, then one column at a
 * time.  The levels are turned into the trie from the unigrams up, each
 * as soon as its backoffs are known, and freed as they go: while the
 * highest order is done, it holds its keys and counts, the order below
 * its keys and probabilities (16 bytes an n-gram), and the trie the rest.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#define BOS_ID 1u
#define EOS_ID 2u
#define UNK_ID 0u

typedef struct lev {
	int n;         /* order */
	uint32_t *key; /* count x n */
	uint64_t *adj; /* adjusted counts */
	uint64_t *raw; /* raw counts, kept when pruning below the highest order */
	int has_raw;   /* lev_push stores raw counts */
	size_t count, cap;
	double *p;      /* interpolated probability, below the highest order */
	int64_t *newid; /* index among the kept when pruned, else NULL */
	uint32_t *suf;  /* order >= 3: the index of each entry's suffix in the level below */
	int threads;    /* its sorts' */
} lev;

static void lev_free(lev *l)
{
	free(l->key);
	free(l->adj);
	free(l->raw);
	free(l->p);
	free(l->newid);
	free(l->suf);
	memset(l, 0, sizeof *l);
}

/* The raw count of entry i (the adjusted one where they are the same). */
static uint64_t lev_raw(const lev *l, size_t i)
{
	return l->raw ? l->raw[i] : l->adj[i];
}

static int lev_push(lev *l, const uint32_t *key, uint64_t adj, uint64_t raw)
{
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		uint32_t *k = llr_reallocarray(l->key, cap * (size_t)l->n, sizeof *k);
		if (!k)
			return LLR_ENOMEM;
		l->key = k;
		uint64_t *a = llr_reallocarray(l->adj, cap, sizeof *a);
		if (!a)
			return LLR_ENOMEM;
		l->adj = a;
		if (l->has_raw) {
			uint64_t *r = llr_reallocarray(l->raw, cap, sizeof *r);
			if (!r)
				return LLR_ENOMEM;
			l->raw = r;
		}
		l->cap = cap;
	}
	memcpy(l->key + l->count * (size_t)l->n, key, (size_t)l->n * sizeof *key);
	l->adj[l->count] = adj;
	if (l->has_raw)
		l->raw[l->count] = raw;
	l->count++;
	return LLR_OK;
}

/* *col (rows of `width` 4-byte words) in the order of perm. */
static int gather(uint32_t **col, size_t width, const uint32_t *perm, size_t n)
{
	if (!*col)
		return LLR_OK;
	uint32_t *dst = llr_malloc((n ? n : 1) * width * sizeof *dst);
	if (!dst)
		return LLR_ENOMEM;
	const uint32_t *src = *col;
	if (width == 1)
		for (size_t i = 0; i < n; i++)
			dst[i] = src[perm[i]];
	else if (width == 2)
		for (size_t i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + 2 * (size_t)perm[i], 8);
	else
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < width; k++)
				dst[i * width + k] = src[(size_t)perm[i] * width + k];
	free(*col);
	*col = dst;
	return LLR_OK;
}

/* *out: the entries of l ordered by the columns cols[0..nc) (most
 * significant first), stable (llr_perm_sort, by l->threads). */
static int sort_perm(const lev *l, const int *cols, int nc, uint32_t V, uint32_t **out)
{
	size_t n = l->count;
	*out = NULL;
	if (n > UINT32_MAX)
		return LLR_ENOMEM;
	uint32_t *perm = llr_malloc((n ? n : 1) * sizeof *perm);
	uint32_t *tmp = llr_malloc((n ? n : 1) * sizeof *tmp);
	uint32_t *cnt = llr_malloc((size_t)(l->threads < 1 ? 1 : l->threads) * ((size_t)V + 1) * sizeof *cnt);
	int ok = perm && tmp && cnt;
	if (ok)
		llr_perm_sort(l->key, (size_t)l->n, n, cols, nc, V, l->threads, perm, tmp, cnt);
	free(cnt);
	free(tmp);
	if (!ok) {
		free(perm);
		return LLR_ENOMEM;
	}
	*out = perm;
	return LLR_OK;
}

/* Reorder l by the columns cols[0..nc), one column at a time; up (the
 * level above, or NULL) has its suffix indexes moved along. */
static int lev_sort(lev *l, const int *cols, int nc, uint32_t V, lev *up)
{
	uint32_t *perm;
	int rc = sort_perm(l, cols, nc, V, &perm);
	if (rc == LLR_OK && up && up->suf) {
		/* perm maps new places to old ones: its inverse, then the indexes */
		uint32_t *inv = llr_malloc((l->count ? l->count : 1) * sizeof *inv);
		if (!inv)
			rc = LLR_ENOMEM;
		for (size_t i = 0; inv && i < l->count; i++)
			inv[perm[i]] = (uint32_t)i;
		for (size_t i = 0; inv && i < up->count; i++)
			up->suf[i] = inv[up->suf[i]];
		free(inv);
	}
	if (rc == LLR_OK)
		rc = gather(&l->key, (size_t)l->n, perm, l->count);
	if (rc == LLR_OK)
		rc = gather((uint32_t **)&l->adj, 2, perm, l->count);
	if (rc == LLR_OK)
		rc = gather((uint32_t **)&l->raw, 2, perm, l->count);
	free(perm);
	l->cap = l->count;
	return rc;
}

static int lev_sort_lex(lev *l, uint32_t V, lev *up)
{
	int cols[LLR_NGRAM_MAX_ORDER];
	for (int i = 0; i < l->n; i++)
		cols[i] = i;
	return lev_sort(l, cols, l->n, V, up);
}

/* Entry i of l against key[0..l->n), as memcmp. */
static int lev_cmp(const lev *l, size_t i, const uint32_t *key)
{
	const uint32_t *a = l->key + i * (size_t)l->n;
	for (int k = 0; k < l->n; k++)
		if (a[k] != key[k])
			return a[k] < key[k] ? -1 : 1;
	return 0;
}

/* Index of key[0..l->n) among entries [lo, hi) of l (sorted
 * lexicographically), or -1. */
static int64_t lev_find_in(const lev *l, const uint32_t *key, size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = lev_cmp(l, mid, key);
		if (c == 0)
			return (int64_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int64_t lev_find(const lev *l, const uint32_t *key)
{
	return lev_find_in(l, key, 0, l->count);
}

/* lev_find for a key that sorts after entry from - 1: galloping from
 * there, since the suffixes of one context's n-grams come in order. */
static int64_t lev_find_from(const lev *l, const uint32_t *key, size_t from)
{
	size_t lo = from, hi = from, step = 1;
	while (hi < l->count && lev_cmp(l, hi, key) < 0) {
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	return lev_find_in(l, key, lo, hi < l->count ? hi + 1 : l->count);
}

int llr_kn_check(const llr_kn_opts *o, int N, llr_err *err)
{
	for (int n = 2; n <= N; n++)
		if (o->prune[n - 1] < o->prune[n - 2])
			return llr_err_set(err, LLR_EINVAL, "pruning thresholds must not decrease with the order (%d-grams %llu, %d-grams %llu)", n - 1, (unsigned long long)o->prune[n - 2], n, (unsigned long long)o->prune[n - 1]);
	if (o->prune[0] > 0)
		return llr_err_set(err, LLR_EINVAL, "unigrams cannot be pruned");
	return LLR_OK;
}

void llr_kn_opts_init(llr_kn_opts *o)
{
	memset(o, 0, sizeof *o);
	o->fallback[0] = 0.5;
	o->fallback[1] = 1.0;
	o->fallback[2] = 1.5;
}

/* The levels from the counter's sorted array: the shorter n-grams that
 * begin with <s> (from the padded keys) pushed to their levels, the full
 * N-grams moved to the front of the array in place, which becomes the
 * highest level (its raw counts are its adjusted ones). */
static int split_table(int N, uint32_t *keys, uint64_t *counts, size_t n, lev *L)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const uint32_t *key = keys + i * (size_t)N;
		int j = 0;
		while (j < N && key[j] == BOS_ID)
			j++;
		if (N >= 2 && j >= 2) {
			if (lev_push(&L[N - j], key + j - 1, counts[i], counts[i]) != LLR_OK)
				return LLR_ENOMEM;
			continue;
		}
		memmove(keys + k * (size_t)N, key, (size_t)N * sizeof *keys);
		counts[k++] = counts[i];
	}
	lev *top = &L[N - 1];
	top->key = keys;
	top->adj = counts;
	top->count = top->cap = k;
	return LLR_OK;
}

/* Level n-1 gets the suffixes of level n with their continuation counts,
 * in lexicographic order (level n is walked in suffix order through a
 * permutation and keeps its own order); for n >= 3, level n notes where
 * each suffix went (lev_sort keeps that up to date when level n-1 is
 * sorted), so that interpolation finds it without a search. */
static int add_suffixes(lev *hi, lev *lo, uint32_t V)
{
	int cols[LLR_NGRAM_MAX_ORDER];
	const int n = hi->n;
	for (int i = 0; i < n - 1; i++)
		cols[i] = i + 1;
	uint32_t *perm;
	int rc = sort_perm(hi, cols, n - 1, V, &perm);
	if (rc != LLR_OK)
		return rc;
	if (n >= 3 && !(hi->suf = llr_malloc((hi->count ? hi->count : 1) * sizeof *hi->suf))) {
		free(perm);
		return LLR_ENOMEM;
	}
	size_t i = 0;
	while (i < hi->count && rc == LLR_OK) {
		const uint32_t *suf = hi->key + (size_t)perm[i] * (size_t)n + 1;
		uint64_t adj = 0, raw = 0;
		size_t j = i;
		while (j < hi->count && !memcmp(hi->key + (size_t)perm[j] * (size_t)n + 1, suf, (size_t)(n - 1) * sizeof *suf)) {
			adj++;
			raw += lev_raw(hi, perm[j]);
			if (hi->suf)
				hi->suf[perm[j]] = (uint32_t)lo->count;
			j++;
		}
		if (lo->count >= UINT32_MAX)
			rc = LLR_ENOMEM;
		else
			rc = lev_push(lo, suf, adj, raw);
		i = j;
	}
	free(perm);
	return rc;
}

int llr_kn_discounts(const uint64_t t[5], int n, const llr_kn_opts *o, double D[4], llr_err *err)
{
	D[0] = 0;
	const char *why = NULL;
	int k = 0;
	for (k = 1; k <= 3 && !why; k++)
		if (t[k] == 0)
			why = "no";
	if (!why) {
		double Y = (double)t[1] / ((double)t[1] + 2.0 * (double)t[2]);
		for (k = 1; k <= 3; k++) {
			D[k] = k - (k + 1) * Y * (double)t[k + 1] / (double)t[k];
			if (D[k] < 0 || D[k] > k) {
				why = "out of range";
				break;
			}
		}
	}
	if (!why)
		return LLR_OK;
	if (!o->discount_fallback) {
		if (why[0] == 'n')
			return llr_err_set(err, LLR_EINVAL, "cannot compute the Kneser-Ney discounts of the %d-grams: no %d-gram has adjusted count %d (too little or artificial data? a discount fallback overrides this)", n, n, k - 1);
		return llr_err_set(err, LLR_EINVAL, "the Kneser-Ney discount D%d of the %d-grams is %g, outside [0, %d] (a discount fallback overrides this)", k, n, D[k], k);
	}
	for (k = 1; k <= 3; k++)
		D[k] = o->fallback[k - 1];
	return LLR_OK;
}

static int discounts_for(const lev *l, const llr_kn_opts *o, double D[4], llr_err *err)
{
	uint64_t t[5] = {0};
	for (size_t i = 0; i < l->count; i++)
		if (l->adj[i] >= 1 && l->adj[i] <= 4)
			t[l->adj[i]]++;
	return llr_kn_discounts(t, l->n, o, D, err);
}

/* The trie's arrays of level n for k entries (backoffs 0 = log10 1 and
 * child counts 0 until the level above fills them). */
static int trie_alloc(llr_ngram *m, int n, int64_t k)
{
	size_t sz = (size_t)k + 1;
	m->count[n - 1] = k;
	if (!(m->logp[n - 1] = llr_malloc(sz * sizeof(float))))
		return LLR_ENOMEM;
	if (n < m->order && (!(m->backoff[n - 1] = llr_calloc(sz, sizeof(float))) || !(m->child[n - 1] = llr_calloc(sz, sizeof(int64_t)))))
		return LLR_ENOMEM;
	if (n > 1 && !(m->word[n - 1] = llr_malloc(sz * sizeof(int32_t))))
		return LLR_ENOMEM;
	return LLR_OK;
}

/* Level n (n >= 2) from level n-1, straight into the trie: its kept
 * entries' log10 probabilities and words, the child counts and the
 * backoffs of level n-1 (which is then freed).
 * Below the highest order the probabilities stay for the level above. */
static int level_probs(llr_ngram *m, lev *l, lev *lo, const double D[4], const llr_kn_opts *o)
{
	const int n = l->n;
	const uint64_t cut = o->prune[n - 1];
	unsigned char *kept = llr_malloc(l->count + 1);
	if (!kept || (n < m->order && !(l->p = llr_malloc((l->count + 1) * sizeof *l->p))) ||
	    (cut > 0 && !(l->newid = llr_malloc((l->count + 1) * sizeof *l->newid)))) {
		free(kept);
		return LLR_ENOMEM;
	}
	int64_t k = 0;
	for (size_t i = 0; i < l->count; i++) {
		kept[i] = !(cut > 0 && lev_raw(l, i) <= cut);
		if (l->newid)
			l->newid[i] = kept[i] ? k : -1;
		k += kept[i];
	}
	if (trie_alloc(m, n, k) != LLR_OK) {
		free(kept);
		return LLR_ENOMEM;
	}
	float *logp = m->logp[n - 1], *lobo = m->backoff[n - 2];
	int32_t *word = m->word[n - 1];
	int64_t *child = m->child[n - 2];
	size_t i = 0;
	int64_t lastc = -1;
	while (i < l->count) {
		const uint32_t *c = l->key + i * (size_t)n;
		size_t j = i;
		uint64_t denom = 0, nk[4] = {0}, pruned = 0;
		while (j < l->count && !memcmp(l->key + j * (size_t)n, c, (size_t)(n - 1) * sizeof *c)) {
			denom += l->adj[j];
			if (kept[j])
				nk[l->adj[j] < 3 ? l->adj[j] : 3]++;
			else
				pruned += l->adj[j];
			j++;
		}
		double gamma = (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3] + (double)pruned) / (double)denom;
		/* contexts come in order too: gallop from the last one found */
		int64_t ci = n == 2 ? (int64_t)c[0] : lastc < 0 ? lev_find(lo, c)
		                                                : lev_find_from(lo, c, (size_t)lastc + 1);
		if (ci >= 0)
			lastc = ci;
		int64_t parent = ci < 0 ? -1 : lo->newid ? lo->newid[ci]
		                                         : ci;
		uint32_t last = c[n - 2];
		if (parent >= 0 && last != EOS_ID && last != UNK_ID)
			lobo[parent] = (float)log10(gamma);
		for (size_t e = i; e < j; e++) {
			const uint32_t *suf = l->key + e * (size_t)n + 1;
			const size_t si = n == 2 ? suf[0] : l->suf[e];
			LLR_ASSERT(si < lo->count && !memcmp(lo->key + si * (size_t)(n - 1), suf, (size_t)(n - 1) * sizeof *suf));
			double u = ((double)l->adj[e] - llr_kn_disc(D, l->adj[e])) / (double)denom;
			double p = u + gamma * lo->p[si];
			if (l->p)
				l->p[e] = p;
			if (!kept[e])
				continue;
			LLR_ASSERT(parent >= 0);
			int64_t id = l->newid ? l->newid[e] : (int64_t)e;
			logp[id] = fminf(0.0f, (float)log10(p));
			word[id] = (int32_t)l->key[e * (size_t)n + (size_t)n - 1];
			child[parent + 1]++;
		}
		i = j;
	}
	free(kept);
	for (int64_t x = 0; x < m->count[n - 2]; x++)
		child[x + 1] += child[x];
	lev_free(lo);
	free(l->adj);
	free(l->raw);
	free(l->suf);
	l->adj = l->raw = NULL;
	l->suf = NULL;
	return LLR_OK;
}

void llr_kn_unigrams(const uint64_t *adj, uint32_t V, const double D[4], double *p, float *logp)
{
	uint64_t denom = 0, nk[4] = {0};
	for (uint32_t w = 0; w < V; w++) {
		if (w == BOS_ID)
			continue;
		denom += adj[w];
		if (adj[w])
			nk[adj[w] < 3 ? adj[w] : 3]++;
	}
	double gamma = (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3]) / (double)denom;
	for (uint32_t w = 0; w < V; w++) {
		p[w] = w == BOS_ID ? 1.0 : ((double)adj[w] - llr_kn_disc(D, adj[w])) / (double)denom + gamma / (double)(V - 1);
		logp[w] = w == BOS_ID ? 0.0f : fminf(0.0f, (float)log10(p[w]));
	}
}

/* Unigrams: a dense level indexed by word id, into the trie. */
static int unigram_probs(llr_ngram *m, lev *l, uint32_t V, const double D[4])
{
	if (!(l->p = llr_malloc(V * sizeof *l->p)) || trie_alloc(m, 1, V) != LLR_OK)
		return LLR_ENOMEM;
	llr_kn_unigrams(l->adj, V, D, l->p, m->logp[0]);
	free(l->adj);
	free(l->raw);
	l->adj = l->raw = NULL;
	return LLR_OK;
}

/* Level 1 as a dense array over the V ids (missing <unk>/<s> get 0). */
static int densify_unigrams(lev *l, uint32_t V)
{
	uint64_t *adj = llr_calloc(V, sizeof *adj), *raw = l->has_raw ? llr_calloc(V, sizeof *raw) : NULL;
	uint32_t *key = llr_malloc(V * sizeof *key);
	if (!adj || (l->has_raw && !raw) || !key) {
		free(adj);
		free(raw);
		free(key);
		return LLR_ENOMEM;
	}
	for (size_t i = 0; i < l->count; i++) {
		adj[l->key[i]] = l->adj[i];
		if (raw)
			raw[l->key[i]] = l->raw[i];
	}
	for (uint32_t w = 0; w < V; w++)
		key[w] = w;
	free(l->adj);
	free(l->raw);
	free(l->key);
	l->adj = adj;
	l->raw = raw;
	l->key = key;
	l->count = l->cap = V;
	return LLR_OK;
}

int llr_ngram_estimate(llr_ngram_counter *c, const llr_kn_opts *o, llr_ngram **out, double *discounts, llr_err *err)
{
	*out = NULL;
	uint32_t *keys = NULL;
	uint64_t *counts = NULL;
	size_t used = 0;
	llr_strmap *vocab = NULL;
	int N = 0;
	lev L[LLR_NGRAM_MAX_ORDER];
	memset(L, 0, sizeof L);
	llr_ngram *m = NULL;
	int rc = llr_ngram_counter_take(c, &N, &keys, &counts, &used, &vocab, err);
	if (rc != LLR_OK)
		return rc;
	int pruning = 0;
	for (int n = 2; n <= N; n++)
		pruning |= o->prune[n - 1] > 0;
	if ((rc = llr_kn_check(o, N, err)) != LLR_OK)
		goto done;
	if (used == 0) {
		rc = llr_err_set(err, LLR_EEMPTY, "no n-grams counted (empty corpus)");
		goto done;
	}
	const uint32_t V = (uint32_t)llr_strmap_size(vocab);
	for (int n = 1; n <= N; n++) {
		L[n - 1].n = n;
		L[n - 1].has_raw = pruning && n < N;
		L[n - 1].threads = llr_ngram_counter_threads(c);
	}
	if ((rc = split_table(N, keys, counts, used, L)) != LLR_OK)
		goto nomem;
	keys = NULL; /* the highest level's now */
	counts = NULL;
	for (int n = N; n >= 2; n--) /* the highest level is in order already */
		if ((n < N && (rc = lev_sort_lex(&L[n - 1], V, &L[n])) != LLR_OK) || (rc = add_suffixes(&L[n - 1], &L[n - 2], V)) != LLR_OK)
			goto nomem;
	if ((rc = densify_unigrams(&L[0], V)) != LLR_OK)
		goto nomem;
	double D[LLR_NGRAM_MAX_ORDER][4];
	for (int n = 1; n <= N; n++) {
		if ((rc = discounts_for(&L[n - 1], o, D[n - 1], err)) != LLR_OK)
			goto done;
		if (discounts)
			for (int k = 0; k < 3; k++)
				discounts[(n - 1) * 3 + k] = D[n - 1][k + 1];
	}
	if (!(m = llr_ngram_alloc(N, err))) {
		rc = llr_err_code(err, LLR_ENOMEM);
		goto done;
	}
	llr_strmap_free(m->vocab);
	m->vocab = vocab;
	vocab = NULL;
	if ((rc = unigram_probs(m, &L[0], V, D[0])) != LLR_OK)
		goto nomem;
	for (int n = 2; n <= N; n++)
		if ((rc = level_probs(m, &L[n - 1], &L[n - 2], D[n - 1], o)) != LLR_OK)
			goto nomem;
	llr_ngram_specials(m);
	*out = m;
	m = NULL;
	goto done;
nomem:
	rc = llr_err_set(err, LLR_ENOMEM, "out of memory estimating the n-gram model");
done:
	for (int n = 0; n < LLR_NGRAM_MAX_ORDER; n++)
		lev_free(&L[n]);
	free(keys);
	free(counts);
	llr_strmap_free(vocab);
	llr_ngram_free(m);
	return rc;
}

/* The n-grams of each order c[1..N] that estimation will hold, at most:
 * the highest order has the array's keys with fewer than two leading
 * <s>; order n < N has its keys pushed from the array (p[n], which begin
 * with <s>) and the distinct suffixes of order n+1, none with <s>.  Such
 * a suffix x either begins an N-gram of the array (a distinct n-prefix
 * of the highest order, P[n]) or lies in the last N-1 words of its
 * sentence, at one of N-n places after the first word of the key that
 * ends in </s> (F of them).  Order 1 is dense: V. */
static void level_bounds(int N, const uint32_t *keys, size_t U, uint32_t V, uint64_t c[LLR_NGRAM_MAX_ORDER + 1])
{
	uint64_t p[LLR_NGRAM_MAX_ORDER + 1] = {0}, P[LLR_NGRAM_MAX_ORDER + 1] = {0}, F = 0, top = 0;
	const uint32_t *prev = NULL;
	for (size_t i = 0; i < U; i++) {
		const uint32_t *key = keys + i * (size_t)N;
		int j = 0;
		while (j < N && key[j] == BOS_ID)
			j++;
		F += key[N - 1] == EOS_ID;
		if (N >= 2 && j >= 2) {
			p[N - j + 1]++;
			continue;
		}
		int d = 0;
		while (prev && d < N && prev[d] == key[d])
			d++;
		for (int n = d + 1; n < N; n++)
			P[n]++;
		top++;
		prev = key;
	}
	c[N] = top;
	for (int n = N - 1; n >= 2; n--)
		c[n] = LLR_MIN(c[n + 1], P[n] + (uint64_t)(N - n) * F) + p[n];
	c[1] = V;
}

/* The bytes the levels hold from order a to b (keys, adjusted and raw
 * counts, suffix indexes), the highest order at the array's size U. */
static uint64_t levels_bytes(int N, int a, int b, const uint64_t *c, size_t U, int pruning)
{
	uint64_t s = 0;
	for (int n = a; n <= b; n++)
		s += n == N ? (uint64_t)U * (4u * N + 8) + c[n] * (N >= 3 ? 4 : 0)
		            : c[n] * (4u * n + 8 + (pruning ? 8 : 0) + (n >= 3 ? 4 : 0));
	return s;
}

size_t llr_ngram_estimate_bytes(const llr_ngram_counter *cn, const llr_kn_opts *o)
{
	int N;
	const uint32_t *keys;
	size_t U, vb;
	uint32_t V;
	llr_ngram_counter_peek(cn, &N, &keys, &U, &V, &vb);
	uint64_t c[LLR_NGRAM_MAX_ORDER + 1];
	level_bounds(N, keys, U, V, c);
	int pruning = 0;
	for (int n = 2; n <= N; n++)
		pruning |= o->prune[n - 1] > 0;
	const uint64_t cnt = 4 * (uint64_t)llr_ngram_counter_threads(cn) * ((uint64_t)V + 1), unigram = (uint64_t)V * (4 + 8 + (pruning ? 8 : 0));
	uint64_t most = (uint64_t)U * (4u * N + 8) + unigram;
	/* sorting each order (if below the highest) and sending its suffixes
	 * down: the orders above and this one held, a permutation, and the
	 * sort's scratch, or a new column, or the order below as it fills */
	for (int n = N; n >= 2; n--) {
		uint64_t held = levels_bytes(N, n, N, c, U, pruning) + levels_bytes(N, 2, n - 1, c, U, pruning) + unigram;
		uint64_t t = 4 * c[n] + LLR_MAX(4 * c[n] + cnt, 4u * n * c[n] + 8 * c[n]);
		most = LLR_MAX(most, held + t);
	}
	/* the unigrams made dense next to their sparse form, then their
	 * probabilities and their level of the trie */
	most = LLR_MAX(most, levels_bytes(N, 2, N, c, U, pruning) + 2 * unigram + 24 * (uint64_t)V);
	/* each order n >= 2 into the trie: the orders from n up, the order
	 * below's keys, probabilities and new ids, the trie below n (16 bytes
	 * a unigram, 20 an n-gram), and order n's flags, probabilities, new
	 * ids and trie arrays */
	uint64_t trie = 16 * (uint64_t)V;
	for (int n = 2; n <= N; n++) {
		uint64_t lo = n == 2 ? 12 * (uint64_t)V : c[n - 1] * (4u * (n - 1) + 8 + (o->prune[n - 2] ? 8 : 0));
		uint64_t t = c[n] * (1 + (n < N ? 8 : 0) + (o->prune[n - 1] ? 8 : 0) + 8 + (n < N ? 12 : 0));
		most = LLR_MAX(most, levels_bytes(N, n, N, c, U, pruning) + lo + trie + t);
		trie += c[n] * 20;
	}
	most += vb;
	return most > SIZE_MAX ? SIZE_MAX : (size_t)most;
}
