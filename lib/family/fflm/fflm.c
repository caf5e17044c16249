/*
 * fflm.c - the family of feed-forward language models behind llr_model
 * (family.h; Bengio et al. 2003, train --feedforward N): scoring as
 * score(1) says, every prediction (the words, then </s>) from the
 * previous N - 1 words of its sentence (<s> before the first), all
 * positions of a batch of sentences in one llr_ffnet_score call.  A word
 * outside the vocabulary is <unk>, as target and as context; a model
 * without <unk> refuses it.  No open vocabulary, no sentence vectors.
 */
#include "family/fflm/fflm.h"
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>

static void fflm_close(void *state)
{
	fflm *r = state;
	free(r->ctx);
	free(r->tg);
	free(r->lp);
	llr_fflm_free(r->model);
	free(r);
}

static int fflm_open(llr_model *m, const char *path, llr_err *err)
{
	fflm *r;
	int rc = llr_family_open_closed(m, path, sizeof *r, (void **)&r, err);
	if (rc < 0)
		return rc;
	r->check_norm = m->opts.check_norm;
	return llr_fflm_load(path, &r->model, NULL, err);
}

static void fflm_describe(const llr_model *m, llr_model_info *info)
{
	const fflm *r = m->state;
	const llr_ffnet_config *c = llr_ffnet_cfg(r->model->net);
	const llr_lexicon *lex = r->model->lex;
	llr_family_describe_vocab(lex, info);
	info->order = c->order;
	info->layers = c->layers;
	info->embed = c->embed;
	info->hidden = c->hidden;
	info->output = c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear";
	info->input = "word";
	info->oov = LLR_OOV_UNK;
	info->norm_checked = -1;
}

static const llr_meta *fflm_meta(const llr_model *m)
{
	const fflm *r = m->state;
	return r->model->meta;
}

static int ensure(fflm *r, size_t n, int C)
{
	if (n <= r->cap)
		return LLR_OK;
	size_t cap = n + n / 2;
	free(r->ctx);
	free(r->tg);
	free(r->lp);
	r->ctx = llr_reallocarray(NULL, cap * (size_t)C, sizeof *r->ctx);
	r->tg = llr_reallocarray(NULL, cap, sizeof *r->tg);
	r->lp = llr_reallocarray(NULL, cap, sizeof *r->lp);
	r->cap = r->ctx && r->tg && r->lp ? cap : 0;
	return r->cap ? LLR_OK : LLR_ENOMEM;
}

/* Sentence b's positions from o on: its ids into tg[o..], </s> last, and
 * each one's context. */
static int fill(fflm *r, const llr_sentence *s, size_t o, int C, unsigned char *oov, llr_err *err)
{
	int32_t *ids = r->tg + o;
	for (size_t t = 0; t < s->n; t++) {
		int bad = 0;
		int32_t id = fflm_word_id(r->model, s->words[t], &bad, err);
		if (id < 0)
			return id;
		ids[t] = id;
		oov[o + t] = (unsigned char)bad;
	}
	ids[s->n] = r->model->lex->eos_id;
	oov[o + s->n] = 0;
	for (size_t t = 0; t <= s->n; t++)
		fflm_context(ids, (int64_t)t, C, r->ctx + (o + t) * (size_t)C);
	return LLR_OK;
}

static int fflm_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                      llr_err *err)
{
	fflm *r = m->state;
	int C = llr_ffnet_cfg(r->model->net)->order - 1;
	size_t N = 0;
	for (size_t b = 0; b < B; b++)
		N += s[b].n + 1;
	if (ensure(r, N, C) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
	int rc;
	for (size_t b = 0, o = 0; b < B; o += s[b].n + 1, b++)
		if ((rc = fill(r, &s[b], o, C, oov, err)) < 0)
			return rc;
	double e;
	if ((rc = llr_ffnet_score(r->model->net, N, r->ctx, r->tg, r->lp, r->check_norm ? &e : NULL, err)) < 0)
		return rc;
	llr_family_score_out(r->lp, N, logp, r->check_norm, e, norm);
	return LLR_OK;
}

static int fflm_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	const fflm *r = m->state;
	return rnnlm_lex_word_features(r->model->lex, word, emit, ctx, err);
}

const llr_family llr_family_fflm = {
	.name = "fflm",
	.what = "feed-forward language models",
	.family_key = "fflm",
	.open = fflm_open,
	.close = fflm_close,
	.describe = fflm_describe,
	.meta = fflm_meta,
	.score = fflm_score,
	.word_features = fflm_word_features,
	.no_pairs = LLR_LM_NO_PAIRS,
	.gen = &llr_fflm_gen_ops,
	.train = &llr_fflm_train_ops,
	.trainer = &llr_fflm_trainer,
};
