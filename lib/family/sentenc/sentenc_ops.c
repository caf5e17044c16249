/*
 * sentenc_ops.c - sentence encoders (family=sentenc) behind llr_model
 * (family.h), recognised but not driven yet: they embed sentences
 * rather than score them.  Opening loads the file, so its errors are
 * found, and describe tells its sizes (held.c); there is no
 * llr_model_score (score(1) --embed and --task still drive them
 * themselves).
 */
#include "family/family.h"

static void sentenc_free(void *model)
{
	llr_senc_model_free(model);
}

static int sentenc_open(llr_model *m, const char *path, llr_err *err)
{
	llr_senc_model *s = NULL;
	int rc = llr_senc_model_load(path, &s, NULL, err);
	return rc < 0 ? rc : llr_family_hold(m, s, sentenc_free, s->lex, s->meta, "layers", err);
}

const llr_family llr_family_sentenc = {
	.name = "sentenc",
	.what = "sentence encoders",
	.instead = "score --embed and --task use them",
	.family_key = "sentenc",
	.open = sentenc_open,
	.close = llr_family_held_close,
	.describe = llr_family_held_describe,
	.meta = llr_family_held_meta,
};
