/*
 * held.c - what the families that llr_model recognises but does not
 * drive yet share (family.h): the loaded model held as it is, described
 * by its lexicon and meta, freed by the family's own function.
 */
#include "family/family.h"

#include <stdlib.h>

typedef struct held {
	void *model;
	void (*free)(void *model);
	const llr_lexicon *lex;
	const llr_meta *meta;
	const char *layers_key; /* the meta key of the layer count */
} held;

int llr_family_hold(llr_model *m, void *model, void (*free_fn)(void *), const llr_lexicon *lex, const llr_meta *meta,
                    const char *layers_key, llr_err *err)
{
	held *h = llr_calloc(1, sizeof *h);
	if (!h) {
		free_fn(model);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	*h = (held){model, free_fn, lex, meta, layers_key};
	m->state = h;
	return LLR_OK;
}

void llr_family_held_close(void *state)
{
	held *h = state;
	h->free(h->model);
	free(h);
}

void llr_family_held_describe(const llr_model *m, llr_model_info *info)
{
	const held *h = m->state;
	int64_t v;
	info->kind = "model";
	info->vocab = (int64_t)llr_strmap_size(h->lex->vocab);
	info->has_unk = h->lex->unk_id >= 0;
	if (llr_meta_get_i64(h->meta, "embed", &v, NULL) == LLR_OK)
		info->embed = (int)v;
	if (llr_meta_get_i64(h->meta, "hidden", &v, NULL) == LLR_OK)
		info->hidden = (int)v;
	if (llr_meta_get_i64(h->meta, h->layers_key, &v, NULL) == LLR_OK)
		info->layers = (int)v;
}

const llr_meta *llr_family_held_meta(const llr_model *m)
{
	const held *h = m->state;
	return h->meta;
}
