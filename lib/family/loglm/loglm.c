/*
 * loglm.c - the family of log-linear (maximum-entropy) language models
 * behind llr_model (family.h; tutorial section 4, train --context N):
 * scoring as score(1) says, every prediction (the words, then </s>) from
 * the hashed features of its sentence so far (lib/nn/maxent.c), all
 * positions of a batch of sentences in one llr_maxent_score call.  A word
 * outside the vocabulary is <unk>, as target and in the context; a model
 * without <unk> refuses it.  No open vocabulary, no sentence vectors.
 */
#include "family/loglm/loglm.h"
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>

static void loglm_close(void *state)
{
	loglm *r = state;
	llr_wordlm_batch_free(&r->batch);
	llr_loglm_free(r->model);
	free(r);
}

static int loglm_open(llr_model *m, const char *path, llr_err *err)
{
	loglm *r;
	int rc = llr_family_open_closed(m, path, sizeof *r, (void **)&r, err);
	return rc < 0 ? rc : llr_loglm_load(path, &r->model, NULL, err);
}

static void loglm_describe(const llr_model *m, llr_model_info *info)
{
	const loglm *r = m->state;
	const llr_maxent_config *c = llr_maxent_cfg(r->model->me);
	llr_wordlm_describe(r->model->lex, c->order, info);
	info->output = c->phi ? "loglinear" : "softmax";
}

static const llr_meta *loglm_meta(const llr_model *m)
{
	const loglm *r = m->state;
	return r->model->meta;
}

static int loglm_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	const loglm *r = m->state;
	return rnnlm_lex_word_features(r->model->lex, word, emit, ctx, err);
}

static int loglm_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                       llr_err *err)
{
	loglm *r = m->state;
	llr_wordlm_batch *b = &r->batch;
	int rc = llr_wordlm_batch_fill(b, r->model->lex, s, B, sizeof(llr_maxent_pos), oov, err);
	if (rc < 0)
		return rc;
	llr_maxent_pos *pos = b->in; /* every position as the features see it */
	for (size_t k = 0, o = 0; k < B; o += s[k].n + 1, k++)
		for (size_t t = 0; t <= s[k].n; t++)
			pos[o + t] = (llr_maxent_pos){b->ids + o, (int64_t)t, b->ids[o + t]};
	int check = m->opts.check_norm;
	double e;
	if ((rc = llr_maxent_score(r->model->me, b->n, pos, b->lp, check ? &e : NULL, err)) < 0)
		return rc;
	llr_family_score_out(b->lp, b->n, logp, check, e, norm);
	return LLR_OK;
}

const llr_family llr_family_loglm = {
	.name = "loglm",
	.what = "log-linear language models",
	.family_key = "loglm",
	.open = loglm_open,
	.close = loglm_close,
	.describe = loglm_describe,
	.meta = loglm_meta,
	.score = loglm_score,
	.word_features = loglm_word_features,
	.no_pairs = LLR_LM_NO_PAIRS,
	.gen = &llr_loglm_gen_ops,
	.train = &llr_loglm_train_ops,
	.trainer = &llr_loglm_trainer,
};
