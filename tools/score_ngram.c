/*
 * score_ngram.c - score(1) with a backoff n-gram model: loading (ARPA
 * text or the binary archive), mapping words to the model's ids, and the
 * log-probability of every word of a line and of its </s> by the ARPA
 * backoff rule (llr_ngram_log10p).  score.c keeps the input, output and
 * summary, the same for every model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "score_ngram.h"

int sngram_open(sngram *s, const char *path)
{
	memset(s, 0, sizeof *s);
	llr_err err = {0};
	int k = llr_ngram_sniff(path, &err);
	if (k < 0)
		cli_die_err(&err);
	if (k == 0)
		return 0;
	if (llr_ngram_load(path, &s->m, &err) != LLR_OK)
		cli_die_err(&err);
	s->order = llr_ngram_order(s->m);
	s->V = llr_ngram_vocab_size(s->m);
	s->bos = llr_ngram_bos(s->m);
	s->eos = llr_ngram_eos(s->m);
	s->unk = llr_ngram_unk(s->m);
	if (s->eos < 0)
		cli_die("%s: the model has no %s", path, LLR_EOS);
	return 1;
}

void sngram_free(sngram *s)
{
	llr_ngram_free(s->m);
	free(s->hist);
	memset(s, 0, sizeof *s);
}

/* sum_w p(w | ctx) - 1 over the vocabulary without <s>. */
static double norm_at(const sngram *s, const int32_t *ctx, int n)
{
	double sum = 0;
	for (int32_t w = 0; w < s->V; w++)
		if (w != s->bos)
			sum += pow(10.0, llr_ngram_log10p(s->m, ctx, n, w, NULL));
	return sum - 1;
}

double sngram_line(sngram *s, const char *text, const size_t *tok, size_t n, float *lp, unsigned char *oov, size_t stride, int check_norm)
{
	if (n + 2 > s->cap) {
		s->cap = n + 2 + n / 2;
		s->hist = ereallocarray(s->hist, s->cap, sizeof *s->hist);
	}
	int32_t *h = s->hist;
	h[0] = s->bos; /* -1 if the model has no <s>: no context */
	double worst = 0;
	const int keep = s->order - 1;
	for (size_t t = 0; t <= n; t++) {
		int32_t w = s->eos;
		int is_oov = 0;
		if (t < n) {
			const char *word = text + tok[t];
			w = llr_ngram_word(s->m, word, strlen(word));
			if (w < 0) {
				is_oov = 1;
				w = s->unk;
			}
		}
		size_t have = t + 1; /* h[0 .. t] is the context */
		int nctx = (int)(have < (size_t)keep ? have : (size_t)keep);
		const int32_t *ctx = h + have - (size_t)nctx;
		if (check_norm) {
			double e = norm_at(s, ctx, nctx);
			if (!(fabs(e) <= fabs(worst))) /* NaN propagates */
				worst = e;
		}
		lp[t * stride] = w >= 0 ? (float)(llr_ngram_log10p(s->m, ctx, nctx, w, NULL) * M_LN10) : 0.0f;
		oov[t * stride] = (unsigned char)is_oov;
		h[t + 1] = w;
	}
	return worst;
}
