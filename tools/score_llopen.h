/*
 * score_llopen.h - score's open-vocabulary mode for the LL-RNN (issue 14;
 * score(1), "Open vocabulary"): every token a finite log-probability, a
 * word outside the vocabulary by its own features and its spelling,
 * lib/lm/open.c doing the sums.  CLI-only.
 */
#ifndef LLR_SCORE_LLOPEN_H
#define LLR_SCORE_LLOPEN_H

#include "anyrow.h"
#include "score_lm.h"

typedef struct sllopen {
	llr_open *op;          /* NULL: the model is not open, or not scored open */
	llr_csr_builder *rows; /* this batch's targets outside V' */
	llr_csr *xphi;
	float *xlogb;
	size_t nx, xcap;
	anyrow r; /* scratch row */
	int32_t V;
	long long norm_samples; /* the norm check's draws (0: no check) */
	const llr_lexicon *lex;
} sllopen;

/* Set a loaded model up for open scoring when its lexicon has a
 * spelling model and signature masses (1), else leave it closed (0);
 * with norm_samples > 0, draw that many strings (seeded) for the norm
 * check. */
int sllopen_init(sllopen *s, slm *m, long long norm_samples, unsigned long long seed);
/* A new batch: no rows outside V' yet. */
void sllopen_reset(sllopen *s);
/* Target id of word w: its id in V', or V + i for the i-th string
 * outside V' of the batch (*oov set); exits on error. */
int32_t sllopen_target(sllopen *s, const char *w, size_t len, int *oov);
/* The batch's rows and log backgrounds, for llr_batch xphi and xlogb
 * (NULL when none). */
void sllopen_finish(sllopen *s, const llr_csr **xphi, const float **xlogb);
/* One stderr line on the open model. */
void sllopen_summary(const sllopen *s);
/* The norm check's error and verdict against tol (t: the figures over
 * every position), after score's two norm check lines. */
void sllopen_norm_summary(const sllopen *s, const llr_norm_stat *t, double tol);
/* 1 when the norm check draws the mass outside the vocabulary (the
 * model's signature masses were drawn). */
int sllopen_norm_drawn(const sllopen *s);
/* 1 when the norm check of exact signature masses found a drawn string
 * whose row is not its class's. */
int sllopen_norm_failed(const sllopen *s);
void sllopen_free(sllopen *s);

#endif
