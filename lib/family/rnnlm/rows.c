/*
 * rows.c - a word's feature row in a buffer that grows (llr_row): the
 * lexicon's row functions want room given in advance, and a string's
 * row has no bound known before it is built.
 */
#include "internal.h"

#include <stdlib.h>

int llr_row_reserve(llr_row *r, size_t n, llr_err *err)
{
	while (r->cap < n) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		int32_t *c = llr_reallocarray(r->cols, cap, sizeof *c);
		if (c)
			r->cols = c;
		float *v = c ? llr_reallocarray(r->vals, cap, sizeof *v) : NULL;
		if (!v)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a feature row of %zu entries", cap);
		r->vals = v;
		r->cap = cap;
	}
	return LLR_OK;
}

int llr_row_fill(llr_row *r, const llr_lexicon *x, const char *w, size_t len, int input_side, int any, size_t *n,
                 llr_err *err)
{
	for (;;) {
		int rc = LLR_ERANGE;
		if (r->cap)
			rc = any ? llr_lexicon_any_row(x, w, len, input_side, r->cols, r->vals, r->cap, n, err)
			         : llr_lexicon_word_row(x, w, len, input_side, r->cols, r->vals, r->cap, n, err);
		if (rc != LLR_ERANGE)
			return rc;
		if ((rc = llr_row_reserve(r, r->cap + 1, err)) < 0)
			return rc;
	}
}

void llr_row_free(llr_row *r)
{
	if (!r)
		return;
	free(r->cols);
	free(r->vals);
	*r = (llr_row){0};
}
