/*
 * gen_open.h - gen's open vocabulary (issue 14; gen(1), "Unseen words"):
 * with a model that carries a spelling model, a sampled token can be a
 * string outside the vocabulary.  An LL-RNN with signature masses draws a
 * signature among the words, then a spelling of it (llr_open_draw); any
 * other model spells the <unk> it draws from p_spell outside the
 * vocabulary (llr_openbg_draw), the softmax-plus-spelling baseline.
 * CLI-only.
 */
#ifndef LLR_GEN_OPEN_H
#define LLR_GEN_OPEN_H

#include "gen_lm.h"

enum { GOPEN_CLOSED,  /* today's generation: <unk> is a word */
       GOPEN_LL,      /* signatures next to the words */
       GOPEN_SPELL }; /* <unk> spelled out */

typedef struct genopen {
	int mode;
	llr_open *op;          /* GOPEN_LL: the open network */
	llr_open_batch *rows;  /* and the prefix's rows */
	llr_openbg *bg; /* GOPEN_SPELL */
	int32_t V, W, unk;
	int64_t tries;                   /* p_spell draws a spelling may take */
	int64_t words, draws, fallbacks; /* unseen words, p_spell draws, give-ups */
} genopen;

/* Choose the mode for lm (closed: --closed) and set the network up. */
void genopen_init(genopen *o, slm *lm, int closed, int64_t tries);
void genopen_free(genopen *o);
/* Draw the next token from row (W entries, log p; changed): a vocabulary
 * id, with its log p in *lp, or -1 for a string outside the vocabulary,
 * in word, with its log p and *sig its signature (-1: a spelled <unk>).
 * lp_unk: log p(<unk>) before --no-unk masked it.  Greedy decoding
 * stays in the vocabulary.  Exits on error. */
int32_t genopen_pick(genopen *o, llr_sampler *s, const llr_sample_opts *so, float *row, float lp_unk, llr_rng *rng,
                     llr_buf *word, float *lp, int32_t *sig);
/* Keep the row's entries past V out of a draw, and <unk> when it is
 * spelled (--no-unk, --greedy, --beam). */
void genopen_mask(const genopen *o, float *row);
/* The log-probabilities of the n prefix words ws after <s> (GOPEN_LL:
 * an unseen word by its own row, llr_net_score; GOPEN_SPELL: <unk>'s
 * share) into lps, where the closed ones were computed; input ids in. */
void genopen_prefix(genopen *o, slm *lm, char *const *ws, size_t n, const int32_t *in, float *lps);
/* The features of signature sig, lexicon style, appended to out. */
void genopen_sig_features(const genopen *o, slm *lm, int32_t sig, llr_buf *out);
/* With -v: a line on the unseen words drawn. */
void genopen_summary(const genopen *o);

#endif
