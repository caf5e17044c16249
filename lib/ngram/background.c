/*
 * background.c - an n-gram model as the context-dependent background
 * b(K; x) of the log-linear output (Dymetman & Xiao 2016, section 4,
 * language-model adaptation): b(K; x) is the n-gram's probability of the
 * lexicon word x after the last order-1 words of K.
 *
 * The output layer never sums b over the vocabulary.  With the ARPA
 * backoff rule, for a context K with listed suffix contexts K_j (the last
 * j words, j = 1 .. n) of backoff weights beta_j (1 when K_j is not
 * listed), every word takes b(K; x) = C(K) p1(x), C(K) = prod_j beta_j,
 * except the words x listed after some K_j, whose b comes from the longest
 * such n-gram, times the backoff weights of the longer contexts.  So
 *   Z(K) = sum_x b(K; x) e^{s_x}
 *        = C(K) sum_x p1(x) e^{s_x} + sum_{x in U(K)} (b(K; x) - C(K) p1(x)) e^{s_x}
 * with U(K) the union of the listed continuations of the K_j: the first
 * sum is the context-free pass over the distinct rows of Phi with the
 * unigram background (loglinear.c), the second is sparse.  It is the
 * backoff recursion Z(K) = sum_{x listed after K} b e^s + beta (Z(K') -
 * sum_{x listed after K} b(K'; x) e^s) unrolled (man/llrnn.7 derives it).
 * llr_ngram_bg_expand lists U(K) and b on it by a merge of the sorted
 * children of the K_j in the trie.
 *
 * Words: every lexicon word maps to its n-gram id by spelling; a word the
 * n-gram lacks maps to the n-gram's <unk> (a query of an unknown word, as
 * KenLM and SRILM do), so all such words share p(<unk> | K).  Without a
 * <unk> in the n-gram such a word is refused.  Not here: the output layer
 * that uses this (loglinear.c) and the contexts of a batch (net.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#define LN10 2.302585092994045684

struct llr_ngram_bg {
	const llr_ngram *m; /* borrowed */
	int32_t V;          /* lexicon words */
	int32_t *ng;        /* V: n-gram id of each lexicon word */
	int32_t *inv_off;   /* n-gram V + 1: lexicon words of each n-gram id */
	int32_t *inv;       /* V */
	float *logb1;       /* V: ln p1(ng[x]) */
	int32_t absent;     /* lexicon words the n-gram lacks */
};

void llr_ngram_bg_free(llr_ngram_bg *g)
{
	if (!g)
		return;
	free(g->ng);
	free(g->inv_off);
	free(g->inv);
	free(g->logb1);
	free(g);
}

llr_ngram_bg *llr_ngram_bg_new(const llr_ngram *m, const llr_strmap *vocab, llr_err *err)
{
	int32_t V = (int32_t)llr_strmap_size(vocab), NV = (int32_t)m->count[0];
	llr_ngram_bg *g = calloc(1, sizeof *g);
	if (!g)
		return llr_err_set(err, LLR_ENOMEM, "n-gram background: out of memory"), NULL;
	g->m = m;
	g->V = V;
	g->ng = llr_malloc((size_t)V * sizeof *g->ng);
	g->inv_off = llr_calloc((size_t)NV + 1, sizeof *g->inv_off);
	g->inv = llr_malloc((size_t)V * sizeof *g->inv);
	g->logb1 = llr_malloc((size_t)V * sizeof *g->logb1);
	if (!g->ng || !g->inv_off || !g->inv || !g->logb1) {
		llr_ngram_bg_free(g);
		return llr_err_set(err, LLR_ENOMEM, "n-gram background: out of memory"), NULL;
	}
	for (int32_t x = 0; x < V; x++) {
		const char *t = llr_strmap_str(vocab, x);
		int32_t w = llr_ngram_word(m, t, llr_strmap_len(vocab, x));
		if (w < 0) {
			if (m->unk < 0) {
				llr_err_set(err, LLR_EINVAL, "the n-gram has no <unk> and lacks the word '%s' of the vocabulary", t);
				llr_ngram_bg_free(g);
				return NULL;
			}
			w = m->unk;
			g->absent++;
		}
		double lp = m->logp[0][w];
		if (!isfinite(lp) || lp * LN10 < -1e30) {
			llr_err_set(err, LLR_EINVAL, "the n-gram gives the word '%s' probability 0", t);
			llr_ngram_bg_free(g);
			return NULL;
		}
		g->ng[x] = w;
		g->logb1[x] = (float)(lp * LN10);
		g->inv_off[w + 1]++;
	}
	for (int32_t w = 0; w < NV; w++)
		g->inv_off[w + 1] += g->inv_off[w];
	for (int32_t x = 0; x < V; x++) {
		/* inv_off[w] counts up while filling; shifted back below */
		g->inv[g->inv_off[g->ng[x]]++] = x;
	}
	for (int32_t w = NV; w > 0; w--)
		g->inv_off[w] = g->inv_off[w - 1];
	g->inv_off[0] = 0;
	return g;
}

const llr_ngram *llr_ngram_bg_model(const llr_ngram_bg *g)
{
	return g->m;
}

int32_t llr_ngram_bg_size(const llr_ngram_bg *g)
{
	return g->V;
}

const float *llr_ngram_bg_logb1(const llr_ngram_bg *g)
{
	return g->logb1;
}

int32_t llr_ngram_bg_absent(const llr_ngram_bg *g)
{
	return g->absent;
}

int32_t llr_ngram_bg_map(const llr_ngram_bg *g, int32_t x)
{
	return x >= 0 && x < g->V ? g->ng[x] : g->m->unk;
}

int llr_ngram_bg_ctxlen(const llr_ngram_bg *g)
{
	return g->m->order - 1;
}

double llr_ngram_bg_logp(const llr_ngram_bg *g, const int32_t *ctx, int n, int32_t x)
{
	return LN10 * (double)llr_ngram_log10p(g->m, ctx, n, g->ng[x], NULL);
}

size_t llr_ngram_bg_expand(const llr_ngram_bg *g, const int32_t *ctx, int n, double *logc, int32_t *xs, double *lnb)
{
	const llr_ngram *m = g->m;
	n = llr_ngram_context(m, &ctx, n); /* the context llr_ngram_log10p uses */
	/* Level k (context of k words): its entry, the children range and
	 * bo[k] = the log10 backoffs of the longer listed contexts. */
	int64_t pos[LLR_NGRAM_MAX_ORDER], end[LLR_NGRAM_MAX_ORDER];
	double bo[LLR_NGRAM_MAX_ORDER + 1];
	bo[n] = 0.0;
	for (int k = n; k >= 1; k--) {
		int64_t c = llr_ngram_find(m, ctx + n - k, k);
		pos[k - 1] = end[k - 1] = 0;
		bo[k - 1] = bo[k];
		if (c < 0)
			continue;
		pos[k - 1] = m->child[k - 1][c];
		end[k - 1] = m->child[k - 1][c + 1];
		bo[k - 1] += m->backoff[k - 1][c];
	}
	*logc = LN10 * bo[0];
	/* Merge the sorted children lists: each word once, valued by the
	 * longest context that lists it. */
	size_t cnt = 0;
	for (;;) {
		int32_t w = INT32_MAX;
		for (int k = 0; k < n; k++)
			if (pos[k] < end[k] && m->word[k + 1][pos[k]] < w)
				w = m->word[k + 1][pos[k]];
		if (w == INT32_MAX)
			break;
		double v = 0.0;
		int top = -1;
		for (int k = 0; k < n; k++)
			if (pos[k] < end[k] && m->word[k + 1][pos[k]] == w) {
				if (k > top) {
					top = k;
					v = bo[k + 1] + (double)m->logp[k + 1][pos[k]];
				}
				pos[k]++;
			}
		for (int32_t i = g->inv_off[w]; i < g->inv_off[w + 1]; i++) {
			xs[cnt] = g->inv[i];
			lnb[cnt++] = LN10 * v;
		}
	}
	return cnt;
}
