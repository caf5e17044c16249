/*
 * encdec.h - the state of an encoder-decoder behind llr_model
 * (encdec.c), shared by the family's files: scoring pairs (encdec.c)
 * and generation from a source (gen.c).  Private to lib/family/encdec.
 */
#ifndef LLR_FAMILY_ENCDEC_H
#define LLR_FAMILY_ENCDEC_H

#include "family/gen.h"

typedef struct encdec {
	llr_encdec_model *e;
	/* llr_model_score_pairs' batch */
	int32_t *src, *slen; /* S x B, and B */
	int32_t *in, *tgt;   /* T x B */
	float *lp;           /* T x B */
	size_t cap_s, cap_t, cap_b;
	/* llr_model_mask_pairs: the mask (the automaton given, or its
	 * intersection with the model's own, which borrows mine, the
	 * automaton given), a one-slot state, a pair's ids */
	llr_fsa *mask, *mine;
	llr_encdec_state *one;
	int32_t *ids;
	size_t cap_ids;
} encdec;

/* The encoder-decoder model behind m, a model of this family. */
static inline llr_encdec_model *llr_encdec_of(const llr_model *m)
{
	const encdec *d = m->state;
	return d->e;
}

extern const llr_gen_ops llr_encdec_gen_ops;

#endif
