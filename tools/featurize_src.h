/*
 * featurize_src.h - featurize's shared state and its file-reading feature
 * sources (CoNLL-U, TSV lexicons, word/TAG corpora); CLI-only, not
 * libllrnn API.
 */
#ifndef LLR_FEATURIZE_SRC_H
#define LLR_FEATURIZE_SRC_H

#include <stdint.h>

#include "llrnn.h"

/* Feature sources, in column order. */
enum { FZ_TOP,
       FZ_CONLLU,
       FZ_TAGGED,
       FZ_LEXICON,
       FZ_HUNSPELL,
       FZ_ORTHO,
       FZ_SUFFIX,
       FZ_NGRAMS,
       FZ_OOV, /* --spelling: the strings outside the vocabulary (LLR_OOV_PREFIX) */
       FZ_NSRC };
extern const char *const fz_src_names[FZ_NSRC];

/* The features of one word: columns and values, no repeats. */
typedef struct fz_flist {
	int32_t *f;
	float *v;
	uint32_t n, cap;
} fz_flist;

typedef struct fz_state {
	int lower;           /* -l: lowercase the words of lexicon sources */
	int nfkc;            /* --nfkc: NFKC instead of NFC for them */
	llr_strmap *names;   /* every feature name seen, first-seen order */
	unsigned char *fsrc; /* the source that named each one first */
	size_t fcap;
	llr_strmap *lw; /* words the lexicon sources know */
	fz_flist *lwf;  /* their features */
	size_t lwcap;
	struct fz_src {
		int kind;
		const char *path;
	} * src;
	int nsrc;
} fz_state;

/* Feature id of name (registered for src if new), or -1 with *why for an
 * invalid name (LLR_OOV_PREFIX is FZ_OOV's alone); exits past the feature
 * limit. */
int32_t fz_feature(fz_state *z, const char *name, size_t len, int src, const char **why);
/* Set feature f of a word to v (the last value given wins). */
void fz_flist_add(fz_flist *l, int32_t f, float v);
/* The feature list of word w, created empty if new. */
fz_flist *fz_word(fz_state *z, const char *w, size_t len);

void fz_add_src(fz_state *z, int kind, const char *path);
/* Read every source file in command-line order; exits with file:line on
 * bad input. */
void fz_load_sources(fz_state *z);
void fz_free(fz_state *z);

#endif
