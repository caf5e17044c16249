/*
 * anyrow.h - a word's feature row for the CLI's open-vocabulary modes
 * (score, train): llr_lexicon_any_row into a buffer that grows.
 * CLI-only.
 */
#ifndef LLR_ANYROW_H
#define LLR_ANYROW_H

#include "llrnn.h"

typedef struct anyrow {
	int32_t *c;
	float *v;
	size_t cap;
} anyrow;

/* w's row of phi (input_side 0) or psi (1) into r->c, r->v; its length.
 * Exits on error. */
size_t anyrow_fill(anyrow *r, const llr_lexicon *x, const char *w, size_t len, int input_side);
void anyrow_free(anyrow *r);

#endif
