/*
 * spelldigits.c - the strings of ASCII digits under the spelling model,
 * exactly: their total p_spell grouped by length and last digits, by a
 * forward pass over the character n-gram (llr_spelling_digit_groups).
 *
 * With N the n-gram's order and k = N - 1 (at most 4), the context
 * after n >= k digits is the last k of them, so past the strings of up to
 * LLR_DIGIT_SINGLE = 4 digits (11,110 of them, each a group of its own,
 * enumerated: a year or a short number is often a class of its own) the
 * probability mass of the strings of length n ending in each k-digit tail
 * is a vector alpha_n over the 10^k tails:
 *     alpha_{n+1}[(t mod 10^{k-1}) * 10 + d] += alpha_n[t] p(d | t)
 * and the strings of length n ending in t weigh alpha_n[t] p(</s> | t).
 * Lengths from cap on share a group per tail, summed until the mass still
 * in flight is below 1e-17 of the total.  An unseen digit scores as the model's <unk>
 * with its share of the unseen characters, as llr_spelling_logp does.
 * Not here: which rows these strings get, or what the groups are for
 * (lib/lexicon/opendigits.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#define MAX_STEPS 1000000

void llr_digit_groups_free(llr_digit_groups *g)
{
	free(g->logp);
	*g = (llr_digit_groups){0};
}

/* The groups of one string: lengths 1 to LLR_DIGIT_SINGLE, 11110 of
 * them; then a block of 10^k groups a length. */
static int32_t single_groups(void)
{
	int32_t n = 0, p = 1;
	for (int i = 1; i <= LLR_DIGIT_SINGLE; i++)
		n += p *= 10;
	return n;
}

int32_t llr_digit_group_of(const llr_digit_groups *g, const char *w, size_t len)
{
	if (len == 0)
		return -1;
	int32_t t = 0, v = 0, off = 0, p = 1, pow_k = 1;
	for (size_t i = 0; i < len; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		if (i + (size_t)g->k >= len)
			t = t * 10 + (w[i] - '0');
		if (len <= LLR_DIGIT_SINGLE)
			v = v * 10 + (w[i] - '0');
	}
	for (int i = 1; i <= LLR_DIGIT_SINGLE; i++) {
		if (len == (size_t)i)
			return off + v;
		off += p *= 10;
	}
	for (int i = 0; i < g->k; i++)
		pow_k *= 10;
	size_t n = len < (size_t)g->cap ? len : (size_t)g->cap;
	return off + (int32_t)(n - LLR_DIGIT_SINGLE - 1) * pow_k + t;
}

void llr_digit_group_key(const llr_digit_groups *g, int32_t i, int *len, int32_t *tail)
{
	int32_t off = 0, p = 1, pow_k = 1;
	for (int n = 1; n <= LLR_DIGIT_SINGLE; n++) {
		p *= 10;
		if (i < off + p) {
			*len = n;
			*tail = i - off;
			return;
		}
		off += p;
	}
	for (int j = 0; j < g->k; j++)
		pow_k *= 10;
	*len = LLR_DIGIT_SINGLE + 1 + (i - off) / pow_k;
	*tail = (i - off) % pow_k;
}

/* The n-gram id of digit d and the log of its share (0, or the unseen
 * characters' share when the model never saw d). */
static int32_t digit_id(const llr_spelling *s, int d, double *extra)
{
	const llr_ngram *m = llr_spelling_ngram(s);
	char c = (char)('0' + d);
	int32_t x = llr_ngram_word(m, &c, 1);
	*extra = 0;
	if (x < 0 || x == llr_ngram_bos(m) || x == llr_ngram_eos(m)) {
		*extra = llr_spelling_log_unseen(s);
		x = llr_ngram_unk(m);
	}
	return x;
}

/* ln p(x | ctx) in nats. */
static double lp(const llr_ngram *m, const int32_t *ctx, int n, int32_t x)
{
	return (double)llr_ngram_log10p(m, ctx, n, x, NULL) * M_LN10;
}

/* The context after the n digits of t (oldest first): <s> and all of
 * them while n < k, else their last k; its length. */
static int string_ctx(const int32_t *id, int32_t t, int n, int k, int32_t bos, int32_t *ctx)
{
	int c = 0, keep = n < k ? n : k;
	if (n < k)
		ctx[c++] = bos;
	for (int i = keep - 1; i >= 0; i--, t /= 10)
		ctx[c + i] = id[t % 10];
	return c + keep;
}

int llr_spelling_digit_groups(const llr_spelling *s, int cap, llr_digit_groups *g, llr_err *err)
{
	const llr_ngram *m = llr_spelling_ngram(s);
	int N = llr_ngram_order(m), k = N - 1;
	*g = (llr_digit_groups){0};
	if (k < 1 || k > LLR_DIGIT_MAX_K)
		return llr_err_set(err, LLR_EINVAL, "digit strings: a spelling model of order %d (2 to %d)", N, LLR_DIGIT_MAX_K + 1);
	if (cap <= LLR_DIGIT_SINGLE)
		return llr_err_set(err, LLR_EINVAL, "digit strings: length cap %d within the %d digits of the single strings", cap,
		                   LLR_DIGIT_SINGLE);
	int32_t id[10], eos = llr_ngram_eos(m), bos = llr_ngram_bos(m);
	double extra[10];
	for (int d = 0; d < 10; d++)
		id[d] = digit_id(s, d, &extra[d]);
	int32_t T = 1, S1 = 1, off = 0;
	for (int i = 0; i < k; i++)
		T *= 10;
	for (int i = 0; i < LLR_DIGIT_SINGLE; i++)
		S1 *= 10;
	g->k = k;
	g->cap = cap;
	g->count = single_groups() + (cap - LLR_DIGIT_SINGLE) * T;
	double *mass = llr_calloc((size_t)g->count, sizeof *mass);
	size_t W = (size_t)(S1 > T ? S1 : T);
	double *pre = llr_malloc(W * sizeof *pre), *nxt = llr_malloc(W * sizeof *nxt);
	double *pd = llr_malloc((size_t)T * 10 * sizeof *pd), *pe = llr_malloc((size_t)T * sizeof *pe);
	int rc = mass && pre && nxt && pd && pe ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "digit strings: out of memory");
	if (rc < 0)
		goto out;
	/* lengths 1..LLR_DIGIT_SINGLE, one string a group: pre[t] = p(the n
	 * digits of t); the context before a digit is <s> and the digits so
	 * far, or the last k of them once there are k */
	int32_t ctx[LLR_NGRAM_MAX_ORDER];
	pre[0] = 1.0;
	int32_t P = 1;
	for (int n = 1; n <= LLR_DIGIT_SINGLE; n++) {
		for (int32_t t = 0; t < P * 10; t++) {
			int c = string_ctx(id, t / 10, n - 1, k, bos, ctx);
			nxt[t] = pre[t / 10] * exp(lp(m, ctx, c, id[t % 10]) + extra[t % 10]);
		}
		P *= 10;
		memcpy(pre, nxt, (size_t)P * sizeof *pre);
		for (int32_t t = 0; t < P; t++) {
			int c = string_ctx(id, t, n, k, bos, ctx);
			mass[off + t] = pre[t] * exp(lp(m, ctx, c, eos));
		}
		off += P;
	}
	/* alpha over the last k digits of the strings of LLR_DIGIT_SINGLE */
	memset(nxt, 0, (size_t)T * sizeof *nxt);
	for (int32_t t = 0; t < S1; t++)
		nxt[t % T] += pre[t];
	memcpy(pre, nxt, (size_t)T * sizeof *pre);
	/* the k-digit contexts: p(d | t) and p(</s> | t) */
	for (int32_t t = 0; t < T; t++) {
		string_ctx(id, t, k, k, bos, ctx);
		for (int d = 0; d < 10; d++)
			pd[(size_t)t * 10 + d] = exp(lp(m, ctx, k, id[d]) + extra[d]);
		pe[t] = exp(lp(m, ctx, k, eos));
	}
	/* lengths LLR_DIGIT_SINGLE + 1 on: alpha is pre */
	double total = 0, flight = 0;
	for (int32_t i = 0; i < off; i++)
		total += mass[i];
	for (int step = 0;; step++) {
		if (step >= MAX_STEPS) {
			rc = llr_err_set(err, LLR_ERANGE, "digit strings: %.3g of their mass still in flight after %d digits", flight,
			                 MAX_STEPS);
			goto out;
		}
		memset(nxt, 0, (size_t)T * sizeof *nxt);
		for (int32_t t = 0; t < T; t++) {
			double a = pre[t];
			if (a == 0)
				continue;
			int32_t base = (t % (T / 10)) * 10;
			const double *p = pd + (size_t)t * 10;
			for (int d = 0; d < 10; d++)
				nxt[base + d] += a * p[d];
		}
		int n = LLR_DIGIT_SINGLE + 1 + step, gn = n < cap ? n : cap;
		double *gm = mass + off + (size_t)(gn - LLR_DIGIT_SINGLE - 1) * T;
		flight = 0;
		for (int32_t t = 0; t < T; t++) {
			double e = nxt[t] * pe[t];
			gm[t] += e;
			total += e;
			flight += nxt[t];
		}
		double *sw = pre;
		pre = nxt;
		nxt = sw;
		if (n >= cap && !(flight > 1e-17 * total))
			break;
	}
	g->logp = mass;
	mass = NULL;
	for (int32_t i = 0; i < g->count; i++)
		g->logp[i] = log(g->logp[i]);
out:
	free(mass);
	free(pre);
	free(nxt);
	free(pd);
	free(pe);
	if (rc < 0)
		llr_digit_groups_free(g);
	return rc;
}
