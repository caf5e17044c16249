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
	free(s->n);
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

/* Room in the scratch for a batch of `ids` ids (<s>, the words and </s>
 * of each sentence) and B sentences. */
static int reserve(ngram *s, size_t ids, size_t B, llr_err *err)
{
	if (ids > s->cap) {
		size_t cap = ids + ids / 2;
		int32_t *h = llr_reallocarray(s->hist, cap, sizeof *h);
		if (h)
			s->hist = h;
		float *l = h ? llr_reallocarray(s->lp, cap, sizeof *l) : NULL;
		if (!l)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu tokens", ids);
		s->lp = l;
		s->cap = cap;
	}
	if (B > s->ncap) {
		size_t *n = llr_reallocarray(s->n, B, sizeof *n);
		if (!n)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
		s->n = n;
		s->ncap = B;
	}
	return LLR_OK;
}

/* Sentence x's <s>, words and </s> as ids into h (n + 2), and oov (n +
 * 1 entries: the words and </s>).  Words outside the vocabulary are
 * <unk>, or -1 (scored 0) when the model has none. */
static void sentence_ids(const ngram *s, const llr_sentence *x, int32_t *h, unsigned char *oov)
{
	const int32_t unk = llr_ngram_unk(s->m);
	h[0] = llr_ngram_bos(s->m); /* -1 if the model has no <s>: no context */
	llr_ngram_words(s->m, (const char *const *)x->words, x->n, h + 1);
	for (size_t t = 0; t < x->n; t++) {
		oov[t] = h[t + 1] < 0;
		if (h[t + 1] < 0)
			h[t + 1] = unk;
	}
	oov[x->n] = 0;
	h[x->n + 1] = llr_ngram_eos(s->m);
}

/* With check_norm the sum over the vocabulary of p - 1 (signed) at the
 * position of sentence h (n + 2 ids) where its magnitude is largest. */
static double worst_norm(const ngram *s, const int32_t *h, size_t n)
{
	const int keep = llr_ngram_order(s->m) - 1;
	double worst = 0;
	for (size_t t = 0; t <= n; t++) {
		int nctx = (int)(t + 1 < (size_t)keep ? t + 1 : (size_t)keep);
		double e = norm_at(s, h + t + 1 - nctx, nctx);
		if (!(fabs(e) <= fabs(worst))) /* NaN propagates */
			worst = e;
	}
	return worst;
}

/* The batch into logp, oov and len (may be NULL), as llr_model_score
 * and llr_model_score_lengths say: every sentence's words looked up,
 * then all scored together (llr_ngram_score_batch), which fetches the
 * lookups of the next tokens while it works on one, across sentences;
 * len is the length of the n-gram that gave each token its probability
 * (0: scored 0 outside the vocabulary).  The norm check takes, for each
 * sentence, the position where |sum p - 1| is largest. */
static int score_batch(llr_model *m, const llr_sentence *x, size_t B, double *logp, unsigned char *oov, int32_t *len,
                       llr_norm_stat *norm, llr_err *err)
{
	ngram *s = m->state;
	size_t ids = 0;
	for (size_t b = 0; b < B; b++) {
		if (x[b].n > SIZE_MAX / 2 - ids)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", x[b].n);
		ids += x[b].n + 2;
	}
	int rc = reserve(s, ids, B, err);
	if (rc != LLR_OK)
		return rc;
	llr_norm_stat ns = {0};
	for (size_t b = 0, o = 0, i = 0; b < B; o += x[b].n + 1, i += x[b].n + 2, b++) {
		sentence_ids(s, &x[b], s->hist + i, oov + o);
		s->n[b] = x[b].n + 1;
		if (!m->opts.check_norm)
			continue;
		double e = worst_norm(s, s->hist + i, x[b].n);
		if (!(fabs(e) <= fabs(ns.err)))
			ns.err = e;
		if (!(fabs(e) <= ns.lo))
			ns.lo = ns.hi = fabs(e);
	}
	rc = llr_ngram_score_batch(s->m, s->hist, s->n, B, s->lp, len, err);
	if (rc != LLR_OK)
		return rc;
	for (size_t b = 0, o = 0, i = 0; b < B; o += x[b].n + 1, i += x[b].n + 2, b++)
		for (size_t t = 0; t <= x[b].n; t++)
			logp[o + t] = s->hist[i + t + 1] >= 0 ? (float)(s->lp[o + t] * M_LN10) : 0.0f;
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
