/*
 * sentenc_ops.c - sentence encoders (family=sentenc) behind llr_model
 * (family.h), recognised but not driven yet: they embed sentences
 * rather than score them.  Opening loads the file, so its errors are
 * found, and describe tells its sizes; there is no llr_model_score
 * (score(1) --embed and --task still drive them themselves).
 */
#include "family/family.h"

static int sentenc_open(llr_model *m, const char *path, llr_err *err)
{
	llr_senc_model *s = NULL;
	int rc = llr_senc_model_load(path, &s, NULL, err);
	m->state = s;
	return rc;
}

static void sentenc_close(void *state)
{
	llr_senc_model_free(state);
}

static void sentenc_describe(const llr_model *m, llr_model_info *info)
{
	const llr_senc_model *s = m->state;
	info->kind = "model";
	info->vocab = (int64_t)llr_strmap_size(s->lex->vocab);
	info->has_unk = s->lex->unk_id >= 0;
	llr_family_sizes(s->meta, "layers", info);
}

static const llr_meta *sentenc_meta(const llr_model *m)
{
	const llr_senc_model *s = m->state;
	return s->meta;
}

const llr_family llr_family_sentenc = {
	.name = "sentenc",
	.what = "sentence encoders",
	.instead = "score --embed and --task use them",
	.family_key = "sentenc",
	.open = sentenc_open,
	.close = sentenc_close,
	.describe = sentenc_describe,
	.meta = sentenc_meta,
};
