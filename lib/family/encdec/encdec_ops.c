/*
 * encdec_ops.c - encoder-decoders (family=encdec) behind llr_model
 * (family.h), recognised but not driven yet: they score a target given
 * a source.  Opening loads the file, so its errors are found, and
 * describe tells its sizes; there is no llr_model_score (score(1) and
 * gen(1) --source still drive them themselves).
 */
#include "family/family.h"

static int encdec_open(llr_model *m, const char *path, llr_err *err)
{
	llr_encdec_model *e = NULL;
	int rc = llr_encdec_model_load(path, &e, NULL, err);
	m->state = e;
	return rc;
}

static void encdec_close(void *state)
{
	llr_encdec_model_free(state);
}

static void encdec_describe(const llr_model *m, llr_model_info *info)
{
	const llr_encdec_model *e = m->state;
	info->kind = "model";
	info->vocab = (int64_t)llr_strmap_size(e->lex->vocab);
	info->has_unk = e->lex->unk_id >= 0;
	llr_family_sizes(e->meta, "enc_layers", info);
}

static const llr_meta *encdec_meta(const llr_model *m)
{
	const llr_encdec_model *e = m->state;
	return e->meta;
}

const llr_family llr_family_encdec = {
	.name = "encdec",
	.what = "encoder-decoder models",
	.instead = "score --source and gen --source drive them",
	.family_key = "encdec",
	.open = encdec_open,
	.close = encdec_close,
	.describe = encdec_describe,
	.meta = encdec_meta,
};
