/*
 * lmtrain.h - private to lib/family/rnnlm: the language model's batches
 * for training (corpus.c), used by its training job (train.c).
 */
#ifndef LLR_FAMILY_RNNLM_LMTRAIN_H
#define LLR_FAMILY_RNNLM_LMTRAIN_H

#include "family/family.h"

/* Batch buffers of at most maxB x maxT tokens. */
typedef struct lm_batcher {
	int maxB, maxT;
	int32_t *input, *target;
	float *logp;
} lm_batcher;
int lm_batcher_init(lm_batcher *b, int maxB, int maxT);
void lm_batcher_free(lm_batcher *b);
/* The batch of pieces p[0..B), time-major: input <s> (or the previous
 * word for a later piece of a split sentence) then the words; targets the
 * words then </s>; padding has target -1. */
llr_batch lm_make_batch(lm_batcher *bb, const llr_lm_corpus *c, const llr_lm_piece *const *p, int B);

/* With an automaton background (x->fsa): every sentence of c accepted
 * by it and none cut in pieces (max_len), else LLR_EFORMAT or
 * LLR_ERANGE naming the stream name and the sentence. */
int lm_corpus_check_fsa(const llr_lm_corpus *c, const llr_lexicon *x, const char *name, int max_len, llr_err *err);

/* An epoch's batches: batch k is p[first[k] .. first[k+1]). */
typedef struct lm_order {
	const llr_lm_piece **p;
	size_t *first;
	size_t nbatches;
} lm_order;
/* Length-bucketed batches of B: with rng, the pieces shuffled, sorted by
 * length (stably, so pieces of equal length meet different neighbours
 * every epoch), cut into batches and the batches shuffled; without rng
 * (validation) sorted by length, ties in corpus order.  LLR_ENOMEM. */
int lm_make_order(lm_order *o, const llr_lm_corpus *c, int B, llr_rng *rng);
void lm_order_free(lm_order *o);

#endif
