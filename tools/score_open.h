/*
 * score_open.h - score's open-vocabulary summary (score(1), "Open
 * vocabulary"): nats per token, the OOVs' share and bits per character,
 * from the totals and the characters counted here.  The scoring itself
 * is the library's (llr_model_score); CLI-only, not libllrnn API.
 */
#ifndef LLR_SCORE_OPEN_H
#define LLR_SCORE_OPEN_H

#include <stddef.h>

#include "llrnn.h"

/* The characters of a line's n words (NUL-terminated, at offsets tok
 * into text): each word's code points (a byte that is not UTF-8 counts
 * one) and one for the space or newline after it, or 1 for an empty
 * line: the tokens a character model predicts on tok --chars's form of
 * it. */
size_t sopen_count(const char *text, const size_t *tok, size_t n);
/* The open summary lines on stderr for model info: L the natural-log
 * total over W words and S sentences, of which L_oov on the O OOV words,
 * C characters; for LLR_OOV_SPREAD first the line that OOV words share
 * p(<unk> | K) by their spelling (an LL-RNN scored through its features
 * has its own line, score_llopen.c). */
void sopen_summary(const llr_model_info *info, size_t C, double L, double L_oov, size_t W, size_t S, size_t O);

#endif
