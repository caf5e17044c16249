/*
 * held.c - what the families that llr_model recognises but does not
 * drive yet share (family.h): the loaded model held as it is, described
 * by its lexicon and meta (describe.c), freed by the family's own
 * function.
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
	llr_family_describe_lex(h->lex, h->meta, h->layers_key, info);
}

const llr_meta *llr_family_held_meta(const llr_model *m)
{
	const held *h = m->state;
	return h->meta;
}
