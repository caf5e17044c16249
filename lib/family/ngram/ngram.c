/*
 * ngram.c - the family of backoff n-gram models behind llr_model
 * (family.h): ARPA text or the binary archive (llr_ngram_load), every
 * word and the </s> of a sentence scored by the ARPA backoff rule
 * (llr_ngram_log10p), as score(1) says: a word outside the vocabulary is
 * <unk> when the model has it, else it gets 0 (not scored, as SRILM) and
 * cuts the context.  The norm check sums p over the vocabulary at every
 * position (O(V) a token).
 */
#include "family/ngram/ngram.h"

#include <math.h>
#include <stdlib.h>

static int ngram_sniff(const char *path, llr_err *err)
{
	return llr_ngram_sniff(path, err);
}

static void ngram_close(void *state)
{
	ngram *s = state;
	llr_ngram_free(s->m);
	free(s->hist);
	free(s->lp);
	free(s);
}

static int ngram_open(llr_model *m, const char *path, llr_err *err)
{
	ngram *s = llr_calloc(1, sizeof *s);
	if (!s)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->state = s;
	int rc = llr_ngram_open(path, LLR_NGRAM_PROBE | (m->opts.verify ? LLR_NGRAM_VERIFY : 0), &s->m, err);
	if (rc < 0)
		return rc;
	if (llr_ngram_eos(s->m) < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: the model has no %s", path, LLR_EOS);
	if (m->opts.open == LLR_OPEN_ON)
		return llr_err_set(err, LLR_EINVAL, "%s: --open: the model has no spelling model (an n-gram model)", path);
	return LLR_OK;
}

static void ngram_describe(const llr_model *m, llr_model_info *info)
{
	const ngram *s = m->state;
	info->kind = "ngram";
	info->vocab = llr_ngram_vocab_size(s->m);
	info->has_unk = llr_ngram_unk(s->m) >= 0;
	info->order = llr_ngram_order(s->m);
	info->oov = llr_ngram_unk(s->m) < 0 ? LLR_OOV_ZERO : LLR_OOV_UNK;
}

static const char *ngram_word(const llr_model *m, int64_t i)
{
	const ngram *s = m->state;
	return llr_ngram_token(s->m, (int32_t)i);
}

/* The binary archive's meta is not kept by llr_ngram_load. */
static const llr_meta *ngram_meta(const llr_model *m)
{
	return NULL;
}

/* sum_w p(w | ctx) - 1 over the vocabulary without <s>. */
static double norm_at(const ngram *s, const int32_t *ctx, int n)
{
	double sum = 0;
	int32_t V = llr_ngram_vocab_size(s->m), bos = llr_ngram_bos(s->m);
	for (int32_t w = 0; w < V; w++)
		if (w != bos)
			sum += pow(10.0, llr_ngram_log10p(s->m, ctx, n, w, NULL));
	return sum - 1;
}

/* One sentence's n words and its </s> into lp and oov (n + 1 entries),
 * and into len (may be NULL) the length of the n-gram that gave each its
 * probability (0: scored 0 outside the vocabulary); with check_norm the
 * sum over the vocabulary of p - 1 (signed) at the position where its
 * magnitude is largest, else 0.  The words are looked up first, then
 * scored together (llr_ngram_score_ids), which fetches the lookups of
 * the next words while it works on one. */
static int sentence(ngram *s, const llr_sentence *x, double *lp, unsigned char *oov, int32_t *len, int check_norm, double *worst,
                    llr_err *err)
{
	int32_t *h = s->hist;
	h[0] = llr_ngram_bos(s->m); /* -1 if the model has no <s>: no context */
	const int32_t eos = llr_ngram_eos(s->m), unk = llr_ngram_unk(s->m);
	for (size_t t = 0; t < x->n; t++) {
		int32_t w = llr_ngram_word(s->m, x->words[t], strlen(x->words[t]));
		oov[t] = w < 0;
		h[t + 1] = w < 0 ? unk : w;
	}
	oov[x->n] = 0;
	h[x->n + 1] = eos;
	*worst = 0;
	if (check_norm) {
		const int keep = llr_ngram_order(s->m) - 1;
		for (size_t t = 0; t <= x->n; t++) {
			int nctx = (int)(t + 1 < (size_t)keep ? t + 1 : (size_t)keep);
			double e = norm_at(s, h + t + 1 - nctx, nctx);
			if (!(fabs(e) <= fabs(*worst))) /* NaN propagates */
				*worst = e;
		}
	}
	int rc = llr_ngram_score_ids(s->m, h, x->n + 1, s->lp, len, err);
	for (size_t t = 0; t <= x->n; t++)
		lp[t] = h[t + 1] >= 0 ? (float)(s->lp[t] * M_LN10) : 0.0f;
	return rc;
}

/* The batch into logp, oov and len (may be NULL), as llr_model_score
 * and llr_model_score_lengths say. */
static int score_batch(llr_model *m, const llr_sentence *x, size_t B, double *logp, unsigned char *oov, int32_t *len,
                       llr_norm_stat *norm, llr_err *err)
{
	ngram *s = m->state;
	llr_norm_stat ns = {0};
	for (size_t b = 0, o = 0; b < B; o += x[b].n + 1, b++) {
		if (x[b].n + 2 > s->cap) {
			size_t cap = x[b].n + 2 + x[b].n / 2;
			int32_t *h = llr_reallocarray(s->hist, cap, sizeof *h);
			if (!h)
				return llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", x[b].n);
			s->hist = h;
			float *l = llr_reallocarray(s->lp, cap, sizeof *l);
			if (!l)
				return llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", x[b].n);
			s->lp = l;
			s->cap = cap;
		}
		double e;
		int rc = sentence(s, &x[b], logp + o, oov + o, len ? len + o : NULL, m->opts.check_norm, &e, err);
		if (rc != LLR_OK)
			return rc;
		if (!(fabs(e) <= fabs(ns.err)))
			ns.err = e;
		if (!(fabs(e) <= ns.lo))
			ns.lo = ns.hi = fabs(e);
	}
	if (norm && m->opts.check_norm)
		*norm = ns;
	return LLR_OK;
}

static int ngram_score(llr_model *m, const llr_sentence *x, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                       llr_err *err)
{
	return score_batch(m, x, B, logp, oov, NULL, norm, err);
}

static int ngram_score_lengths(llr_model *m, const llr_sentence *x, size_t B, double *logp, unsigned char *oov,
                               int32_t *len, llr_err *err)
{
	llr_norm_stat norm;
	return score_batch(m, x, B, logp, oov, len, &norm, err);
}

const llr_family llr_family_ngram = {
	.name = "ngram",
	.what = "n-gram models",
	.sniff = ngram_sniff,
	.open = ngram_open,
	.close = ngram_close,
	.describe = ngram_describe,
	.meta = ngram_meta,
	.score = ngram_score,
	.score_lengths = ngram_score_lengths,
	.word = ngram_word,
	.gen = &llr_ngram_gen_ops,
	.trainer = &llr_ngram_trainer,
};
