/*
 * open.h - score's summary lines on open-vocabulary scoring (score(1),
 * "Open vocabulary"): how OOV words were scored, nats per token, the
 * OOVs' share and bits per character, from the totals, the characters
 * counted here and what llr_model_describe tells; and the details of the
 * norm check of a model scored through its features.  The scoring itself
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
 * C characters; first the line on how OOV words were scored (their
 * share of p(<unk> | K), or an LL-RNN's own features). */
void sopen_summary(const llr_model_info *info, size_t C, double L, double L_oov, size_t W, size_t S, size_t O);
/* 1 when the norm check draws the mass outside the vocabulary (a model
 * scored through its features whose signature masses were drawn). */
int sopen_norm_drawn(const llr_model_info *info);
/* The norm check's error and verdict against tol (t: the figures over
 * every position) for a model scored through its features, after
 * score's two norm check lines. */
void sopen_norm_summary(const llr_model_info *info, const llr_norm_stat *t, double tol);
/* 1 when the norm check of exact signature masses found a drawn string
 * whose row is not its class's. */
int sopen_norm_failed(const llr_model_info *info);

#endif
