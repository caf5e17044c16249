/*
 * tokenize.h - private declarations shared by tokenize.c and abbrev.c;
 * not API.
 */
#ifndef LLR_TOKENIZE_H
#define LLR_TOKENIZE_H

#include "internal.h"

enum {
	LLR_ABBR_NONE = 0,
	LLR_ABBR_MAYEND, /* etc.: ends a sentence before a capital */
	LLR_ABBR_TITLE,  /* M., Dr., cf.: never ends a sentence */
	LLR_ABBR_NUMBER, /* p., No.: an abbreviation only before a number */
};

/* The kind of the abbreviation w[0..n) (UTF-8, without its period) in
 * the list of lang ("en", "fr"; NULL: both). */
int llr_abbrev_kind(const char *lang, const char *w, size_t n);

#endif
