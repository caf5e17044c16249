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
	free(r->ids);
	free(r->pos);
	free(r->lp);
	llr_loglm_free(r->model);
	free(r);
}

static int loglm_open(llr_model *m, const char *path, llr_err *err)
{
	loglm *r;
	int rc = llr_family_open_closed(m, path, sizeof *r, (void **)&r, err);
	if (rc < 0)
		return rc;
	r->check_norm = m->opts.check_norm;
	return llr_loglm_load(path, &r->model, NULL, err);
}

static void loglm_describe(const llr_model *m, llr_model_info *info)
{
	const loglm *r = m->state;
	const llr_maxent_config *c = llr_maxent_cfg(r->model->me);
	const llr_lexicon *lex = r->model->lex;
	llr_family_describe_vocab(lex, info);
	info->order = c->order;
	info->output = "softmax";
	info->input = "word";
	info->oov = LLR_OOV_UNK;
	info->norm_checked = -1;
}

static const llr_meta *loglm_meta(const llr_model *m)
{
	const loglm *r = m->state;
	return r->model->meta;
}

static int ensure(loglm *r, size_t n)
{
	if (n <= r->cap)
		return LLR_OK;
	size_t cap = n + n / 2;
	free(r->ids);
	free(r->pos);
	free(r->lp);
	r->ids = llr_reallocarray(NULL, cap, sizeof *r->ids);
	r->pos = llr_reallocarray(NULL, cap, sizeof *r->pos);
	r->lp = llr_reallocarray(NULL, cap, sizeof *r->lp);
	r->cap = r->ids && r->pos && r->lp ? cap : 0;
	return r->cap ? LLR_OK : LLR_ENOMEM;
}

static int loglm_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                       llr_err *err)
{
	loglm *r = m->state;
	size_t N = 0;
	for (size_t b = 0; b < B; b++)
		N += s[b].n + 1;
	if (ensure(r, N) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
	for (size_t b = 0, o = 0; b < B; o += s[b].n + 1, b++) {
		int32_t *ids = r->ids + o;
		for (size_t t = 0; t < s[b].n; t++) {
			int bad = 0;
			if ((ids[t] = loglm_word_id(r->model, s[b].words[t], &bad, err)) < 0)
				return ids[t];
			oov[o + t] = (unsigned char)bad;
		}
		ids[s[b].n] = r->model->lex->eos_id;
		oov[o + s[b].n] = 0;
		for (size_t t = 0; t <= s[b].n; t++)
			r->pos[o + t] = (llr_maxent_pos){ids, (int64_t)t, ids[t]};
	}
	double e;
	int rc = llr_maxent_score(r->model->me, N, r->pos, r->lp, r->check_norm ? &e : NULL, err);
	if (rc < 0)
		return rc;
	llr_family_score_out(r->lp, N, logp, r->check_norm, e, norm);
	return LLR_OK;
}

static int loglm_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	const loglm *r = m->state;
	return rnnlm_lex_word_features(r->model->lex, word, emit, ctx, err);
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
