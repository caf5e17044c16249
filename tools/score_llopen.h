/*
 * score_llopen.h - score's summary lines for an LL-RNN scored open
 * (issue 14; score(1), "Open vocabulary"): the open model, and the
 * details of its norm check.  The scoring is the library's
 * (llr_model_score; lib/family/rnnlm/).  CLI-only.
 */
#ifndef LLR_SCORE_LLOPEN_H
#define LLR_SCORE_LLOPEN_H

#include "llrnn.h"

/* One stderr line on the open model (info, and m its meta). */
void sllopen_summary(const llr_model_info *info, const llr_meta *m);
/* The norm check's error and verdict against tol (t: the figures over
 * every position; draws: --norm-samples), after score's two norm check
 * lines; m the model's meta. */
void sllopen_norm_summary(const llr_open *op, const llr_meta *m, long long draws, const llr_norm_stat *t, double tol);
/* 1 when the norm check (of draws > 0 strings) draws the mass outside
 * the vocabulary (the model's signature masses were drawn). */
int sllopen_norm_drawn(const llr_open *op, long long draws);
/* 1 when the norm check of exact signature masses found a drawn string
 * whose row is not its class's. */
int sllopen_norm_failed(const llr_open *op, long long draws);

#endif
