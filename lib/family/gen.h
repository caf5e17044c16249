/*
 * gen.h - what a family gives llr_gen, the generation calls of the one
 * model interface (lib/llrnn.h, gen(1)): its table of generation
 * operations (llr_family.gen) and the state every family shares, the
 * prefix and the sentences being generated (lib/family/gen.c).  Private
 * to lib/family; not API.
 */
#ifndef LLR_FAMILY_GEN_H
#define LLR_FAMILY_GEN_H

#include "family/family.h"

/* A sentence being generated: ids and per-token log p after the prefix.
 * A string outside the vocabulary has id -1 - (its offset in oov), and
 * sig its signature (-1: a spelled <unk>). */
typedef struct llr_gen_hyp {
	int32_t *ids, *sig;
	llr_buf oov;
	float *lps;
	size_t n, cap;
	double lp;    /* log p of prefix + generated tokens (+ </s> if ended) */
	int ended;    /* </s> generated */
	int done;
	float eos_lp;
	llr_rng rng;
	double score;      /* a source model's rank */
	const float *attn; /* and its attention, arows x acols (NULL: none) */
	size_t arows, acols;
} llr_gen_hyp;

/* A family's generation.  init sets up g->state for g->m (g->o set);
 * start scores the prefix (g->pre.n words at llr_gen_pword, log p into
 * g->pre.lps, each then through llr_gen_prefix_mask); sample draws n <= LLR_GEN_BATCH sentences, each from a
 * generator seeded by one llr_rng_u64 of rng, and beam runs the beam
 * search; both point g->res at the results and set g->nres.  word is
 * a vocabulary id's string.  ensemble adds another model of the family
 * (a source family's; source: start's sentence is a source, and the
 * results have no per-token log p).  automaton is the automaton
 * background the model was trained under (featurize --background fsa:,
 * regex: or grammar:; an encoder-decoder's train --output-fsa, the
 * first model's), over the ids of word, owned by the model; NULL: none.
 * llr_gen follows it (a source family's search follows it by itself),
 * and intersects it with gen's --fsa, --regex or --grammar.
 * sample, beam, features, note, ensemble and automaton may be NULL. */
typedef struct llr_gen_ops {
	int (*init)(llr_gen *g, llr_err *err);
	void (*free)(void *state);
	int (*start)(llr_gen *g, llr_err *err);
	int (*sample)(llr_gen *g, llr_rng *rng, size_t n, llr_err *err);
	int (*beam)(llr_gen *g, llr_err *err);
	const char *(*word)(const llr_gen *g, int32_t id);
	/* token k of result i (k < g->pre.n: prefix word k), lexicon style */
	int (*features)(llr_gen *g, const llr_gen_hyp *h, size_t k, llr_buf *out, llr_err *err);
	int (*note)(const llr_gen *g, llr_buf *out);
	int (*ensemble)(llr_gen *g, llr_model *other, llr_err *err);
	const llr_fsa *(*automaton)(const llr_gen *g);
	int source;
} llr_gen_ops;

struct llr_gen {
	const llr_gen_ops *ops;
	llr_model *m;
	llr_gen_opts o;
	void *state; /* the family's */
	struct {
		llr_buf text; /* the words, each NUL-terminated */
		size_t *off;
		float *lps;
		size_t n, cap;
		double lp;
	} pre;
	const llr_gen_hyp **res; /* the results of the last sample or beam */
	size_t nres, rescap;
	/* With an automaton (o.fsa or o.regex, read into mine; or own, the
	 * model's automaton background, whose weights are already in the
	 * model's distribution; or both, the intersection of the model's
	 * with mine, o.fsa's, o.regex's or o.grammar's, weighted by mine
	 * alone, which messages call what) or a grammar (o.grammar, gr and
	 * its recogniser over the vocabulary gt; o.max_len is then one more
	 * than asked, for the </s> after max_len words): the automaton a
	 * over the vocabulary fv (V words, </s> at eos, <unk> at unk or
	 * -1, <s> at bos or -1), its state after the prefix, the max_len asked, and scratch
	 * for a state's allowed tokens (V each). */
	struct {
		const llr_fsa *a;
		llr_fsa *mine, *both;
		char what[80];
		int own;
		struct llr_gbnf *gr;
		struct llr_gbnf_tok *gt;
		char *gname; /* the grammar's name in gt's notices */
		llr_strmap *fv;
		int32_t V, eos, unk, bos, q0, max_len;
		int32_t *xs, *to;
		float *lw;
		int32_t *pq, *px; /* prefix word k's state before it and its id */
		size_t pcap;
	} fsa;
};

/* Prefix word k (NUL-terminated). */
static inline const char *llr_gen_pword(const llr_gen *g, size_t k)
{
	return g->pre.text.data + g->pre.off[k];
}

/* Room for n results in g->res. */
int llr_gen_reserve(llr_gen *g, size_t n, llr_err *err);

/* A token id with its log p (added to h->lp); LLR_ENOMEM. */
int llr_gen_hyp_push(llr_gen_hyp *h, int32_t id, float lp, int32_t sig);
/* An unseen word w of signature sig (-1: none). */
int llr_gen_hyp_push_word(llr_gen_hyp *h, const llr_buf *w, float lp, int32_t sig);
/* Back to no tokens, lp as given, not ended. */
void llr_gen_hyp_restart(llr_gen_hyp *h, double lp);
int llr_gen_hyp_copy(llr_gen_hyp *dst, const llr_gen_hyp *src);
void llr_gen_hyp_free(llr_gen_hyp *h);
/* After token id (eos: </s>) with log p lp: does h stop (max_len)? */
int llr_gen_hyp_advance(llr_gen_hyp *h, int32_t id, float lp, int32_t eos, int max_len);
/* Sampling's step for hypothesis h from row, the log-probabilities of
 * the next word after it: <unk> (unk, unless it is eos) masked under
 * --no-unk, a draw by s with g's options and h's generator, h advanced;
 * the word in *id.  LLR_EINVAL when no word has a finite
 * log-probability, LLR_ENOMEM. */
int llr_gen_hyp_draw(llr_gen *g, llr_gen_hyp *h, float *row, llr_sampler *s, int32_t eos, int32_t unk, int32_t *id,
                     llr_err *err);
/* LLR_EINVAL, its message for when no word is left to draw after
 * hypothesis h (the best one, for a beam): under a constraint, with h's
 * prefix and the constraint named, and --no-unk when it took <unk>, the
 * last word left, away (by_no_unk). */
int llr_gen_no_word(const llr_gen *g, const llr_gen_hyp *h, int by_no_unk, llr_err *err);

/* With an automaton (gen.h's fsa), row (W >= V entries: the log p of
 * the next token after hypothesis h's words) masked to the tokens it
 * allows after them, weighted (not by the model's own automaton, whose
 * weights the row holds) and renormalised over those; a token
 * from which no final state is reachable within max_len words is -inf
 * (not in the renormalisation: the probabilities stay the masked
 * model's), and so is every entry from V on (unseen words).  A no-op
 * without an automaton.  LLR_EINVAL when no allowed token has a
 * finite log p, or none can finish in time. */
int llr_gen_constrain(llr_gen *g, const llr_gen_hyp *h, float *row, int32_t W, llr_err *err);

/* Does llr_gen_prefix_mask change the prefix's log p (a constraint of
 * o.fsa, o.regex or o.grammar on a family that is not a source one)? */
int llr_gen_masks_prefix(const llr_gen *g);
/* Under such a constraint, prefix word k's log p (g->pre.lps[k], set by
 * the family's start from row, the W >= V log p of every token after
 * the words before it) as llr_gen_constrain makes a generated word's:
 * row[x] w(q, x) renormalised over the tokens the constraint allows in
 * the state q after the words before it.  Called by the family's start
 * for each k after g->pre.lps[k] is set (the prefix was read by the
 * constraint before start); a no-op where llr_gen_masks_prefix is 0.
 * The constraint's errors (a grammar's LLR_ENOMEM). */
int llr_gen_prefix_mask(llr_gen *g, size_t k, const float *row, int32_t W, llr_err *err);
/* The same for a family that gets the prefix's log p rows a batch at a
 * time: rows(g->state, k0, m, out, err) puts those of prefix words k0 to
 * k0 + m - 1 (m <= LLR_GEN_BATCH) into out (LLR_GEN_BATCH x V), each
 * then through llr_gen_prefix_mask; nothing where llr_gen_masks_prefix
 * is 0.  rows' errors and llr_gen_prefix_mask's. */
typedef int (*llr_gen_rows_fn)(void *state, size_t k0, size_t m, float *out, llr_err *err);
int llr_gen_prefix_mask_rows(llr_gen *g, llr_gen_rows_fn rows, float *out, int32_t V, llr_err *err);

/* Beam search's shared parts: a continuation (total log p, its beam, the
 * word and its log p), their order for qsort (best first, ties by beam
 * then word), and the ranking of the nfin finished hypotheses fin by log
 * p per generated token (</s> included; stable) into g->res, the
 * g->o.nbest first (order: nfin ints of scratch). */
typedef struct llr_gen_cand {
	double score;
	int beam;
	int32_t id;
	float lp;
} llr_gen_cand;
int llr_gen_cand_cmp(const void *a, const void *b);
void llr_gen_rank(llr_gen *g, llr_gen_hyp *fin, int nfin, int *order);

/* genbeam.c: the beam search of a family whose step is a distribution
 * over its V words for each live hypothesis from its words alone (the
 * prefix's, then h's): dist writes the log-probabilities of hypotheses
 * h[0..n) into rows (n x V).  The search's arrays (zeroed before the
 * first call; freed by llr_gen_beam_free) grow to g->o.beam beams. */
typedef struct llr_gen_beam_model {
	int32_t V, eos, unk; /* unk: -1 none */
	int (*dist)(llr_gen *g, const llr_gen_hyp *h, int n, float *rows, llr_err *err);
} llr_gen_beam_model;
typedef struct llr_gen_beams {
	llr_gen_hyp *bl, *bn, *bf; /* K live, K next, 2 K finished */
	llr_gen_cand *cs;          /* K x 2 K candidates */
	int32_t *top;
	int *order;
	float *rows; /* K x V */
	int K;
} llr_gen_beams;
int llr_gen_beam_search(llr_gen *g, llr_gen_beams *b, const llr_gen_beam_model *bm, llr_err *err);
void llr_gen_beam_free(llr_gen_beams *b);

#endif
