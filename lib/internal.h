/*
 * internal.h - private helpers shared by lib/ files; not API.
 */
#ifndef LLR_INTERNAL_H
#define LLR_INTERNAL_H

#include "llrnn.h"

#define LLR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LLR_MAX(a, b) ((a) > (b) ? (a) : (b))

/* err->code if set, else the given code. */
static inline int llr_err_code(const llr_err *e, int fallback)
{
	return e && e->code ? e->code : fallback;
}

#endif
