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
 * Sorting is LSD radix sort over word ids.  Memory: the counter's table is
 * freed once its n-grams are in per-order arrays (4 n + 16 bytes an
 * n-gram, plus an 8-byte permutation while sorting).
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
	uint64_t *raw; /* raw counts (pruning) */
	size_t count, cap;
	double *p;     /* interpolated probability */
	double *gamma; /* backoff, 1 if not a context */
	unsigned char *kept;
	int64_t *ctx;   /* index of the context in the lower level, -1 */
	int64_t *newid; /* index among the kept, -1 */
} lev;

static void lev_free(lev *l)
{
	free(l->key);
	free(l->adj);
	free(l->raw);
	free(l->p);
	free(l->gamma);
	free(l->kept);
	free(l->ctx);
	free(l->newid);
	memset(l, 0, sizeof *l);
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
		uint64_t *r = llr_reallocarray(l->raw, cap, sizeof *r);
		if (!r)
			return LLR_ENOMEM;
		l->raw = r;
		l->cap = cap;
	}
	memcpy(l->key + l->count * (size_t)l->n, key, (size_t)l->n * sizeof *key);
	l->adj[l->count] = adj;
	l->raw[l->count] = raw;
	l->count++;
	return LLR_OK;
}

/* Reorder l by the columns cols[0..nc) (most significant first), stable:
 * LSD radix sort of a permutation, one counting pass per column. */
static int lev_sort(lev *l, const int *cols, int nc, uint32_t V)
{
	size_t n = l->count;
	size_t *perm = llr_malloc((n ? n : 1) * sizeof *perm);
	size_t *tmp = llr_malloc((n ? n : 1) * sizeof *tmp);
	size_t *cnt = llr_malloc(((size_t)V + 1) * sizeof *cnt);
	if (!perm || !tmp || !cnt) {
		free(perm);
		free(tmp);
		free(cnt);
		return LLR_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (int c = nc - 1; c >= 0; c--) {
		memset(cnt, 0, ((size_t)V + 1) * sizeof *cnt);
		for (size_t i = 0; i < n; i++)
			cnt[l->key[perm[i] * (size_t)l->n + (size_t)cols[c]] + 1]++;
		for (uint32_t v = 0; v < V; v++)
			cnt[v + 1] += cnt[v];
		for (size_t i = 0; i < n; i++)
			tmp[cnt[l->key[perm[i] * (size_t)l->n + (size_t)cols[c]]]++] = perm[i];
		size_t *t = perm;
		perm = tmp;
		tmp = t;
	}
	free(cnt);
	free(tmp);
	/* Apply the permutation. */
	uint32_t *key = llr_malloc((n ? n : 1) * (size_t)l->n * sizeof *key);
	uint64_t *adj = llr_malloc((n ? n : 1) * sizeof *adj);
	uint64_t *raw = llr_malloc((n ? n : 1) * sizeof *raw);
	if (!key || !adj || !raw) {
		free(key);
		free(adj);
		free(raw);
		free(perm);
		return LLR_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(key + i * (size_t)l->n, l->key + perm[i] * (size_t)l->n, (size_t)l->n * sizeof *key);
		adj[i] = l->adj[perm[i]];
		raw[i] = l->raw[perm[i]];
	}
	free(perm);
	free(l->key);
	free(l->adj);
	free(l->raw);
	l->key = key;
	l->adj = adj;
	l->raw = raw;
	l->cap = n;
	return LLR_OK;
}

static int lev_sort_lex(lev *l, uint32_t V)
{
	int cols[LLR_NGRAM_MAX_ORDER];
	for (int i = 0; i < l->n; i++)
		cols[i] = i;
	return lev_sort(l, cols, l->n, V);
}

/* Index of key[0..l->n) in l (sorted lexicographically), or -1. */
static int64_t lev_find(const lev *l, const uint32_t *key)
{
	size_t lo = 0, hi = l->count;
	const size_t w = (size_t)l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = 0;
		for (size_t i = 0; i < w && !c; i++) {
			uint32_t a = l->key[mid * w + i], b = key[i];
			c = a < b ? -1 : a > b;
		}
		if (c == 0)
			return (int64_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void llr_kn_opts_init(llr_kn_opts *o)
{
	memset(o, 0, sizeof *o);
	o->fallback[0] = 0.5;
	o->fallback[1] = 1.0;
	o->fallback[2] = 1.5;
}

/* The levels from the counter's table: full N-grams, and the shorter
 * n-grams that begin with <s> from the padded keys. */
static int split_table(int N, const uint32_t *keys, const uint64_t *counts, size_t cap, lev *L)
{
	for (size_t i = 0; i < cap; i++) {
		if (!counts[i])
			continue;
		const uint32_t *k = keys + i * (size_t)N;
		int j = 0;
		while (j < N && k[j] == BOS_ID)
			j++;
		int rc;
		if (N >= 2 && j >= 2)
			rc = lev_push(&L[N - j], k + j - 1, counts[i], counts[i]);
		else
			rc = lev_push(&L[N - 1], k, counts[i], counts[i]);
		if (rc != LLR_OK)
			return rc;
	}
	return LLR_OK;
}

/* Level n-1 gets the suffixes of level n with their continuation counts
 * (level n is left sorted by suffix). */
static int add_suffixes(lev *hi, lev *lo, uint32_t V)
{
	int cols[LLR_NGRAM_MAX_ORDER];
	const int n = hi->n;
	for (int i = 0; i < n - 1; i++)
		cols[i] = i + 1;
	cols[n - 1] = 0;
	int rc = lev_sort(hi, cols, n, V);
	if (rc != LLR_OK)
		return rc;
	size_t i = 0;
	while (i < hi->count) {
		const uint32_t *suf = hi->key + i * (size_t)n + 1;
		uint64_t adj = 0, raw = 0;
		size_t j = i;
		while (j < hi->count && !memcmp(hi->key + j * (size_t)n + 1, suf, (size_t)(n - 1) * sizeof *suf)) {
			adj++;
			raw += hi->raw[j];
			j++;
		}
		if ((rc = lev_push(lo, suf, adj, raw)) != LLR_OK)
			return rc;
		i = j;
	}
	return LLR_OK;
}

static int discounts_for(const lev *l, const llr_kn_opts *o, double D[4], llr_err *err)
{
	uint64_t t[5] = {0};
	for (size_t i = 0; i < l->count; i++)
		if (l->adj[i] >= 1 && l->adj[i] <= 4)
			t[l->adj[i]]++;
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
			return llr_err_set(err, LLR_EINVAL, "cannot compute the Kneser-Ney discounts of the %d-grams: no %d-gram has adjusted count %d (too little or artificial data? a discount fallback overrides this)", l->n, l->n, k - 1);
		return llr_err_set(err, LLR_EINVAL, "the Kneser-Ney discount D%d of the %d-grams is %g, outside [0, %d] (a discount fallback overrides this)", k, l->n, D[k], k);
	}
	for (k = 1; k <= 3; k++)
		D[k] = o->fallback[k - 1];
	return LLR_OK;
}

static double disc(const double D[4], uint64_t a)
{
	return D[a < 3 ? a : 3];
}

/* Probabilities and backoffs of level n (n >= 2) from level n-1. */
static int level_probs(lev *l, lev *lo, const double D[4], const llr_kn_opts *o)
{
	const int n = l->n;
	if (!(l->p = llr_malloc((l->count + 1) * sizeof *l->p)) || !(l->kept = llr_malloc(l->count + 1)) ||
	    !(l->ctx = llr_malloc((l->count + 1) * sizeof *l->ctx)))
		return LLR_ENOMEM;
	for (size_t i = 0; i < l->count; i++)
		l->kept[i] = !(o->prune[n - 1] > 0 && l->raw[i] <= o->prune[n - 1]);
	size_t i = 0;
	while (i < l->count) {
		const uint32_t *c = l->key + i * (size_t)n;
		size_t j = i;
		uint64_t denom = 0, nk[4] = {0}, pruned = 0;
		while (j < l->count && !memcmp(l->key + j * (size_t)n, c, (size_t)(n - 1) * sizeof *c)) {
			denom += l->adj[j];
			if (l->kept[j])
				nk[l->adj[j] < 3 ? l->adj[j] : 3]++;
			else
				pruned += l->adj[j];
			j++;
		}
		double gamma = (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3] + (double)pruned) / (double)denom;
		int64_t ci = lev_find(lo, c);
		if (ci >= 0)
			lo->gamma[ci] = gamma;
		for (size_t e = i; e < j; e++) {
			int64_t si = lev_find(lo, l->key + e * (size_t)n + 1);
			LLR_ASSERT(si >= 0);
			double u = ((double)l->adj[e] - disc(D, l->adj[e])) / (double)denom;
			l->p[e] = u + gamma * lo->p[si];
			l->ctx[e] = ci;
		}
		i = j;
	}
	return LLR_OK;
}

/* Unigrams: a dense level indexed by word id. */
static int unigram_probs(lev *l, uint32_t V, const double D[4])
{
	if (!(l->p = llr_malloc(V * sizeof *l->p)) || !(l->kept = llr_malloc(V)))
		return LLR_ENOMEM;
	uint64_t denom = 0, nk[4] = {0};
	for (uint32_t w = 0; w < V; w++) {
		l->kept[w] = 1;
		if (w == BOS_ID)
			continue;
		denom += l->adj[w];
		if (l->adj[w])
			nk[l->adj[w] < 3 ? l->adj[w] : 3]++;
	}
	double gamma = (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3]) / (double)denom;
	for (uint32_t w = 0; w < V; w++)
		l->p[w] = w == BOS_ID ? 1.0 : ((double)l->adj[w] - disc(D, l->adj[w])) / (double)denom + gamma / (double)(V - 1);
	return LLR_OK;
}

/* Level 1 as a dense array over the V ids (missing <unk>/<s> get 0). */
static int densify_unigrams(lev *l, uint32_t V)
{
	uint64_t *adj = llr_calloc(V, sizeof *adj), *raw = llr_calloc(V, sizeof *raw);
	uint32_t *key = llr_malloc(V * sizeof *key);
	if (!adj || !raw || !key) {
		free(adj);
		free(raw);
		free(key);
		return LLR_ENOMEM;
	}
	for (size_t i = 0; i < l->count; i++) {
		adj[l->key[i]] = l->adj[i];
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

/* The kept entries of the levels as the trie of m. */
static int build_trie(llr_ngram *m, lev *L, int N)
{
	for (int n = 1; n <= N; n++) {
		lev *l = &L[n - 1];
		if (!(l->newid = llr_malloc((l->count + 1) * sizeof *l->newid)))
			return LLR_ENOMEM;
		int64_t k = 0;
		for (size_t i = 0; i < l->count; i++)
			l->newid[i] = l->kept[i] ? k++ : -1;
		m->count[n - 1] = k;
		if (!(m->logp[n - 1] = llr_malloc(((size_t)k + 1) * sizeof(float))))
			return LLR_ENOMEM;
		if (n < N && (!(m->backoff[n - 1] = llr_malloc(((size_t)k + 1) * sizeof(float))) ||
		              !(m->child[n - 1] = llr_calloc((size_t)k + 1, sizeof(int64_t)))))
			return LLR_ENOMEM;
		if (n > 1 && !(m->word[n - 1] = llr_malloc(((size_t)k + 1) * sizeof(int32_t))))
			return LLR_ENOMEM;
		for (size_t i = 0; i < l->count; i++) {
			if (!l->kept[i])
				continue;
			int64_t j = l->newid[i];
			uint32_t last = l->key[i * (size_t)n + (size_t)n - 1];
			m->logp[n - 1][j] = (n == 1 && last == BOS_ID) ? 0.0f : fminf(0.0f, (float)log10(l->p[i]));
			if (n < N) {
				int special = last == EOS_ID || last == UNK_ID;
				m->backoff[n - 1][j] = special ? 0.0f : (float)log10(l->gamma[i]);
			}
			if (n > 1) {
				m->word[n - 1][j] = (int32_t)last;
				int64_t parent = L[n - 2].newid[l->ctx[i]];
				LLR_ASSERT(parent >= 0);
				m->child[n - 2][parent + 1]++;
			}
		}
		if (n > 1)
			for (int64_t j = 0; j < m->count[n - 2]; j++)
				m->child[n - 2][j + 1] += m->child[n - 2][j];
	}
	return LLR_OK;
}

int llr_ngram_estimate(llr_ngram_counter *c, const llr_kn_opts *o, llr_ngram **out, double *discounts, llr_err *err)
{
	*out = NULL;
	uint32_t *keys;
	uint64_t *counts;
	size_t cap, used;
	llr_strmap *vocab;
	const int N = llr_ngram_counter_take(c, &keys, &counts, &cap, &used, &vocab);
	lev L[LLR_NGRAM_MAX_ORDER];
	memset(L, 0, sizeof L);
	llr_ngram *m = NULL;
	int rc = LLR_OK;
	for (int n = 2; n <= N; n++)
		if (o->prune[n - 1] < o->prune[n - 2]) {
			rc = llr_err_set(err, LLR_EINVAL, "pruning thresholds must not decrease with the order (%d-grams %llu, %d-grams %llu)", n - 1, (unsigned long long)o->prune[n - 2], n, (unsigned long long)o->prune[n - 1]);
			goto done;
		}
	if (o->prune[0] > 0) {
		rc = llr_err_set(err, LLR_EINVAL, "unigrams cannot be pruned");
		goto done;
	}
	if (used == 0) {
		rc = llr_err_set(err, LLR_EEMPTY, "no n-grams counted (empty corpus)");
		goto done;
	}
	const uint32_t V = (uint32_t)llr_strmap_size(vocab);
	for (int n = 1; n <= N; n++)
		L[n - 1].n = n;
	if ((rc = split_table(N, keys, counts, cap, L)) != LLR_OK)
		goto nomem;
	free(keys);
	free(counts);
	keys = NULL;
	counts = NULL;
	for (int n = N; n >= 2; n--)
		if ((rc = add_suffixes(&L[n - 1], &L[n - 2], V)) != LLR_OK)
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
	for (int n = 2; n <= N; n++)
		if ((rc = lev_sort_lex(&L[n - 1], V)) != LLR_OK)
			goto nomem;
	for (int n = 1; n <= N; n++) {
		lev *l = &L[n - 1];
		if (!(l->gamma = llr_malloc((l->count + 1) * sizeof *l->gamma))) {
			rc = LLR_ENOMEM;
			goto nomem;
		}
		for (size_t i = 0; i < l->count; i++)
			l->gamma[i] = 1.0;
	}
	if ((rc = unigram_probs(&L[0], V, D[0])) != LLR_OK)
		goto nomem;
	for (int n = 2; n <= N; n++)
		if ((rc = level_probs(&L[n - 1], &L[n - 2], D[n - 1], o)) != LLR_OK)
			goto nomem;
	if (!(m = llr_ngram_alloc(N, err))) {
		rc = llr_err_code(err, LLR_ENOMEM);
		goto done;
	}
	llr_strmap_free(m->vocab);
	m->vocab = vocab;
	vocab = NULL;
	if ((rc = build_trie(m, L, N)) != LLR_OK)
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
