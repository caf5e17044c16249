/*
 * sentenc.c - sentence encoders (family=sentenc, train --task) behind
 * llr_model (family.h): they embed sentences (llr_model_embed) rather
 * than score them.  A batch of sentences becomes one llr_senc_encode
 * call over their vocabulary ids, <unk>'s for a word outside the
 * vocabulary.  They predict the labels of disc-pairs examples with
 * their task heads (llr_model_predict, score(1) --task: predict.c);
 * training is train.c's job for the driver of lib/train.
 */
#include "family/family.h"
#include "family/sentenc/predict.h"

#include <stdlib.h>

typedef struct sentenc {
	llr_senc_model *s;
	int32_t *ids;
	size_t *off; /* B + 1 */
	size_t cap_ids, cap_off;
} sentenc;

static void sentenc_close(void *state)
{
	sentenc *e = state;
	llr_senc_model_free(e->s);
	free(e->ids);
	free(e->off);
	free(e);
}

static int sentenc_open(llr_model *m, const char *path, llr_err *err)
{
	sentenc *e = llr_calloc(1, sizeof *e);
	if (!e)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->state = e;
	return llr_senc_model_load(path, &e->s, NULL, err);
}

static void sentenc_describe(const llr_model *m, llr_model_info *info)
{
	const sentenc *e = m->state;
	llr_family_describe_lex(e->s->lex, e->s->meta, "layers", info);
	info->dim = llr_senc_dim(e->s->enc);
	info->embedding = llr_senc_encoder_name(llr_senc_cfg(e->s->enc)->encoder);
}

static const llr_meta *sentenc_meta(const llr_model *m)
{
	const sentenc *e = m->state;
	return e->s->meta;
}

static int ensure(sentenc *e, size_t n, size_t B)
{
	if (n > e->cap_ids) {
		free(e->ids);
		e->cap_ids = (e->ids = llr_reallocarray(NULL, n, sizeof *e->ids)) ? n : 0;
	}
	if (B + 1 > e->cap_off) {
		free(e->off);
		e->cap_off = (e->off = llr_reallocarray(NULL, B + 1, sizeof *e->off)) ? B + 1 : 0;
	}
	return e->cap_ids >= n && e->cap_off > B ? LLR_OK : LLR_ENOMEM;
}

static int sentenc_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err)
{
	sentenc *e = m->state;
	const llr_lexicon *x = e->s->lex;
	size_t n = 0;
	for (size_t b = 0; b < B; b++)
		n += s[b].n;
	if (B == 0)
		return LLR_OK;
	if (ensure(e, n ? n : 1, B) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
	size_t k = 0;
	e->off[0] = 0;
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < s[b].n; t++, k++) {
			int32_t id = llr_strmap_get(x->vocab, s[b].words[t], strlen(s[b].words[t]));
			if (oov)
				oov[k] = id < 0;
			e->ids[k] = id < 0 ? x->unk_id : id;
		}
		e->off[b + 1] = k;
	}
	return llr_senc_encode(e->s->enc, e->ids, e->off, B, vec, err);
}

static int sentenc_predict(llr_model *m, unsigned tasks, const char *path, size_t batch,
                           int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err)
{
	sentenc *e = m->state;
	return llr_sentenc_predict(e->s, m->path, tasks, path, batch, each, ctx, err);
}

const llr_family llr_family_sentenc = {
	.name = "sentenc",
	.what = "sentence encoders",
	.instead = "they embed sentences and predict labels: llr_model_embed, llr_model_predict, score --embed, score --task",
	.family_key = "sentenc",
	.open = sentenc_open,
	.close = sentenc_close,
	.describe = sentenc_describe,
	.meta = sentenc_meta,
	.embed = sentenc_embed,
	.predict = sentenc_predict,
	.train = &llr_senc_train_ops,
	.trainer = &llr_senc_trainer,
};
