/*
 * score_open.h - score's open-vocabulary mode (score(1), "Open
 * vocabulary"): every OOV word gets the share of p(<unk> | K) its
 * spelling earns, and the summary in nats per token and bits per
 * character; CLI-only, not libllrnn API.
 */
#ifndef LLR_SCORE_OPEN_H
#define LLR_SCORE_OPEN_H

#include <stddef.h>

#include "llrnn.h"

/* --open, --closed, or neither: open when the model has a spelling model. */
enum { SOPEN_AUTO,
       SOPEN_ON,
       SOPEN_OFF };

typedef struct sopen {
	llr_openbg *g; /* NULL: closed scoring */
	size_t chars;  /* the scored lines' characters (sopen_count) */
} sopen;

/* Decide the mode for the model at path (lex NULL: an n-gram model, which
 * has no spelling model).  --open without a spelling model exits 1. */
void sopen_init(sopen *o, int mode, const llr_lexicon *lex, const char *path);
void sopen_free(sopen *o);
/* ln p_spell(w) / (1 - S_V): the share of p(<unk> | K) that the OOV w gets. */
double sopen_oov(const sopen *o, const char *w, size_t len);
/* Count the characters of a line's n words (NUL-terminated, at offsets tok
 * into text): each word's code points (a byte that is not UTF-8 counts
 * one) and one for the space or newline after it, or 1 for an empty line:
 * the tokens a character model predicts on tok --chars's form of it. */
void sopen_count(sopen *o, const char *text, const size_t *tok, size_t n);
/* The open summary lines on stderr: L the natural-log total over W words
 * and S sentences, of which L_oov on the O OOV words; with spread_unk
 * first the line that OOV words share p(<unk> | K) by their spelling (the
 * softmax-plus-spelling mode; an LL-RNN scored through its features has
 * its own line, score_llopen.c). */
void sopen_summary(const sopen *o, int spread_unk, double L, double L_oov, size_t W, size_t S, size_t O);

#endif
