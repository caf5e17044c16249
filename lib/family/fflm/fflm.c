/*
 * fflm.c - the family of feed-forward language models behind llr_model
 * (family.h; Bengio et al. 2003, train --feedforward N): scoring as
 * score(1) says, every prediction (the words, then </s>) from the
 * previous N - 1 words of its sentence (<s> before the first), all
 * positions of a batch of sentences in one llr_ffnet_score call.  A word
 * outside the vocabulary is <unk>, as target and as context; a model
 * without <unk> refuses it.  No open vocabulary.  A sentence's vector
 * (llr_model_embed, score --embed) is the mean of its words' input
 * embeddings, as an LSTM LM's (llr_lm_embed_words).
 */
#include "family/fflm/fflm.h"
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>
#include <string.h>

static void fflm_close(void *state)
{
	fflm *r = state;
	llr_wordlm_batch_free(&r->batch);
	llr_fflm_free(r->model);
	free(r);
}

static int fflm_open(llr_model *m, const char *path, llr_err *err)
{
	fflm *r;
	int rc = llr_family_open_closed(m, path, sizeof *r, (void **)&r, err);
	return rc < 0 ? rc : llr_fflm_load(path, &r->model, NULL, err);
}

static void fflm_describe(const llr_model *m, llr_model_info *info)
{
	const fflm *r = m->state;
	const llr_ffnet_config *c = llr_ffnet_cfg(r->model->net);
	llr_wordlm_describe(r->model->lex, c->order, info);
	info->layers = c->layers;
	info->embed = c->embed;
	info->hidden = c->hidden;
	info->output = c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear";
	info->dim = c->embed;
	info->embedding = "lm-input-mean";
}

static const llr_meta *fflm_meta(const llr_model *m)
{
	const fflm *r = m->state;
	return r->model->meta;
}

static int fflm_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	const fflm *r = m->state;
	return rnnlm_lex_word_features(r->model->lex, word, emit, ctx, err);
}

static int fflm_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                      llr_err *err)
{
	fflm *r = m->state;
	llr_wordlm_batch *b = &r->batch;
	int C = llr_ffnet_cfg(r->model->net)->order - 1;
	int rc = llr_wordlm_batch_fill(b, r->model->lex, s, B, (size_t)C * sizeof(int32_t), oov, err);
	if (rc < 0)
		return rc;
	int32_t *ctx = b->in; /* every position's order - 1 ids */
	for (size_t k = 0, o = 0; k < B; o += s[k].n + 1, k++)
		for (size_t t = 0; t <= s[k].n; t++)
			fflm_context(b->ids + o, (int64_t)t, C, ctx + (o + t) * (size_t)C);
	int check = m->opts.check_norm;
	double e;
	if ((rc = llr_ffnet_score(r->model->net, b->n, ctx, b->ids, b->lp, check ? &e : NULL, err)) < 0)
		return rc;
	llr_family_score_out(b->lp, b->n, logp, check, e, norm);
	return LLR_OK;
}

static int fflm_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err)
{
	fflm *r = m->state;
	const llr_ffnet_config *c = llr_ffnet_cfg(r->model->net);
	const float *P = llr_ffnet_params(r->model->net, NULL);
	for (size_t i = 0; i < llr_ffnet_n_tensors(r->model->net); i++) {
		const char *name;
		int nd;
		int64_t shape[2];
		size_t off;
		llr_ffnet_tensor_info(r->model->net, i, &name, &nd, shape, &off);
		if (!strcmp(name, "embed"))
			return llr_lm_embed_words(r->model->lex, c->output, P + off, c->embed, s, B, vec, oov, err);
	}
	return llr_err_set(err, LLR_EINVAL, "%s: --embed: the network has no 'embed' tensor", m->path);
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
	.embed = fflm_embed,
	.no_pairs = LLR_LM_NO_PAIRS,
	.gen = &llr_fflm_gen_ops,
	.train = &llr_fflm_train_ops,
	.trainer = &llr_fflm_trainer,
};
