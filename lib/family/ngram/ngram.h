/*
 * ngram.h - the state of a backoff n-gram model behind llr_model
 * (ngram.c), shared by the family's files: scoring (ngram.c) and
 * generation (gen.c).  Private to lib/family/ngram.
 */
#ifndef LLR_FAMILY_NGRAM_H
#define LLR_FAMILY_NGRAM_H

#include "family/gen.h"

typedef struct ngram {
	llr_ngram *m;
	int32_t *hist; /* scratch: <s>, the ids and </s> of each sentence of a batch */
	float *lp;     /* scratch: their log10 p (the words and </s>) */
	size_t cap;
	size_t *n; /* scratch: the tokens scored of each sentence */
	size_t ncap;
} ngram;

extern const llr_gen_ops llr_ngram_gen_ops;

#endif
