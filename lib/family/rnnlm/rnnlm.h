/*
 * rnnlm.h - the state of an LSTM language model behind llr_model
 * (rnnlm.c), shared by the family's files: scoring (rnnlm.c) and
 * generation (gen.c, genopen.c).  Private to lib/family/rnnlm.
 */
#ifndef LLR_FAMILY_RNNLM_H
#define LLR_FAMILY_RNNLM_H

#include "family/gen.h"

typedef struct rnnlm {
	llr_rnnlm *model;
	llr_rnnlm_inputs *in;
	int32_t eos_id;
	llr_openbg *spread;  /* open scoring: the spelling model's share of <unk> */
	llr_open *op;        /* open scoring of an LL-RNN through its features */
	llr_open_batch *rows; /* and the batch's strings outside V' */
	int check_norm;
	llr_fsa *mask;        /* llr_model_mask's automaton, owned (the network borrows it) */
	llr_fsa *meet;        /* or its intersection with the model's own, which it borrows */
	/* the batch, time-major: T x B */
	int32_t *in_ids, *tgt_ids;
	float *lp;
	float *sched;    /* a variable-computation cell's m_t (score --show-computation) */
	double *lp_open; /* added to lp: an OOV word's share of <unk> (spread), else 0 */
	unsigned char *oov_at;
	size_t cap;
} rnnlm;

/* Generation (gen.c): the open vocabulary's modes (genopen.c). */
enum { RGEN_CLOSED, /* <unk> is a word */
       RGEN_LL,     /* signatures next to the words (r->op) */
       RGEN_SPELL   /* <unk> spelled out (r->spread) */
};

/* A generator's state: the network states and rows of the decoding
 * loops (gen.c), the prefix as the model sees it, the open vocabulary's
 * counts (genopen.c). */
typedef struct rgen {
	rnnlm *r;
	llr_net *net;
	const llr_lexicon *lex;
	int32_t V, W; /* W: entries of a row, V or V + S signatures (RGEN_LL) */
	int32_t unk, eos;
	int mode;
	int64_t words, draws, fallbacks; /* unseen words, p_spell draws, give-ups */
	llr_buf word;                    /* a drawn unseen word */
	llr_sampler *sampler;
	llr_net_state *st1, *stA, *stB;
	float *row1, *rows;
	int32_t *inputs;
	int nstreams;
	int32_t *pin, *ptgt; /* the prefix's input and target ids */
	size_t pcap;
	llr_gen_hyp hs[LLR_GEN_BATCH];
	llr_gen_hyp *live, *next, *fin; /* beam search: K, K, 2K */
	llr_gen_cand *cs;
	int32_t *top;
	int *order;
	llr_row row; /* llr_gen_features' scratch */
} rgen;

/* genopen.c: the mode for q->r under o; the mask of the signatures and
 * of a spelled <unk>; the draw of a token, an unseen string included
 * (-1, the string in q->word) with g's options and hypothesis h's
 * generator, h's context naming a dead end; the prefix's unseen words by their
 * spelling; the -v note. */
void rgen_open_init(rgen *q, const llr_gen_opts *o);
void rgen_open_mask(const rgen *q, float *row);
int rgen_open_pick(rgen *q, const llr_gen *g, llr_gen_hyp *h, float *row, float lp_unk, int32_t *id, float *lp, int32_t *sig,
                   llr_err *err);
int rgen_open_prefix(rgen *q, const llr_gen *g, llr_err *err);
int rgen_open_note(const llr_gen *g, llr_buf *out);

/* gen.c: a step of the network (llr_net_step with the inputs' psi);
 * --no-unk's mask (<unk> and the unseen words).  beam.c: the beam
 * search. */
int rgen_step(rgen *q, llr_net_state *s, const int32_t *in, float *logp, llr_err *err);
void rgen_mask_row(const rgen *q, const llr_gen_opts *o, float *row);
int rgen_beam(llr_gen *g, llr_err *err);

extern const llr_gen_ops llr_rnnlm_gen_ops;

/* features.c: a word's features, emitted one by one: row r of p (phi or
 * the signatures'), or word w's (vid its vocabulary id, -1 outside: its
 * string's, filling row); rnnlm_put_feature, an emit that appends
 * gen(1)'s "NAME" or "NAME=VALUE" to the llr_buf ctx; word's features
 * in lex (vocabulary word or not); the family's word_features operation
 * (llr_model_word_features); and for the closed-vocabulary families
 * (fflm, loglm) token k of gen's result h (k < the prefix's length:
 * prefix word k) into out, row their scratch. */
int rnnlm_csr_features(const llr_lexicon *lex, const llr_csr *p, int32_t r, llr_feature_fn emit, void *ctx);
int rnnlm_word_features(const llr_lexicon *lex, llr_row *row, const char *w, int32_t vid, llr_feature_fn emit,
                        void *ctx, llr_err *err);
int rnnlm_put_feature(const char *name, size_t len, float value, void *ctx);
int rnnlm_lex_word_features(const llr_lexicon *lex, const char *word, llr_feature_fn emit, void *ctx, llr_err *err);
int rnnlm_model_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err);
int rnnlm_closed_features(const llr_gen *g, const llr_lexicon *x, llr_row *row, const llr_gen_hyp *h, size_t k, llr_buf *out,
                          llr_err *err);

#endif
