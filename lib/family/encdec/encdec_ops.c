/*
 * encdec_ops.c - encoder-decoders (family=encdec) behind llr_model
 * (family.h), recognised but not driven yet: they score a target given
 * a source.  Opening loads the file, so its errors are found, and
 * describe tells its sizes (held.c); there is no llr_model_score (score(1)
 * and gen(1) --source still drive them themselves).
 */
#include "family/family.h"

static void encdec_free(void *model)
{
	llr_encdec_model_free(model);
}

static int encdec_open(llr_model *m, const char *path, llr_err *err)
{
	llr_encdec_model *e = NULL;
	int rc = llr_encdec_model_load(path, &e, NULL, err);
	return rc < 0 ? rc : llr_family_hold(m, e, encdec_free, e->lex, e->meta, "enc_layers", err);
}

const llr_family llr_family_encdec = {
	.name = "encdec",
	.what = "encoder-decoder models",
	.instead = "score --source and gen --source drive them",
	.family_key = "encdec",
	.open = encdec_open,
	.close = llr_family_held_close,
	.describe = llr_family_held_describe,
	.meta = llr_family_held_meta,
};
