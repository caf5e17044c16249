/*
 * anyrow.c - a word's feature row into a growing buffer (see anyrow.h).
 */
#include "anyrow.h"

#include <stdlib.h>

#include "cli.h"

size_t anyrow_fill(anyrow *r, const llr_lexicon *x, const char *w, size_t len, int input_side)
{
	for (;;) {
		llr_err e = {0};
		size_t n;
		int rc = r->cap ? llr_lexicon_any_row(x, w, len, input_side, r->c, r->v, r->cap, &n, &e) : LLR_ERANGE;
		if (rc == LLR_OK)
			return n;
		if (rc != LLR_ERANGE)
			cli_die_err(&e);
		r->cap = r->cap ? 2 * r->cap : 256;
		r->c = ereallocarray(r->c, r->cap, sizeof *r->c);
		r->v = ereallocarray(r->v, r->cap, sizeof *r->v);
	}
}

void anyrow_free(anyrow *r)
{
	free(r->c);
	free(r->v);
	*r = (anyrow){0};
}
