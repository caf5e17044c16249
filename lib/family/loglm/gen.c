/*
 * gen.c - generation from a log-linear language model (llr_gen, gen.h;
 * loglm.h): ancestral sampling (temperature, top-k, top-p through
 * llr_sample) or greedy decoding of up to LLR_GEN_BATCH sentences at
 * once, every step one llr_maxent_dist over the live sentences (each
 * its prefix and tokens so far, the features' context).  A prefix word
 * outside the vocabulary is <unk> (refused without one); <unk> is never
 * drawn with no_unk.  Beam search (genbeam.c) the same way over its
 * live hypotheses.
 */
#include "family/loglm/loglm.h"
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>

typedef struct lgen {
	llr_loglm *m;
	int32_t V, eos, unk;
	llr_sampler *sampler;
	int32_t *pre; /* the prefix's ids */
	size_t npre, precap;
	llr_maxent_pos *pos; /* the prefix's positions, or a step's */
	size_t poscap;
	int32_t *seq[LLR_GEN_BATCH]; /* each sentence: the prefix, then its tokens */
	size_t seqcap[LLR_GEN_BATCH];
	float *rows; /* LLR_GEN_BATCH x V */
	int live[LLR_GEN_BATCH];
	llr_gen_hyp hs[LLR_GEN_BATCH];
	llr_row row; /* a word's features */
	llr_gen_beams beam;
	int32_t *bseq; /* beam search: K sentences of up to bcap ids */
	size_t bseqcap;
} lgen;

static void lgen_free(void *state)
{
	lgen *q = state;
	llr_sampler_free(q->sampler);
	free(q->pre);
	free(q->pos);
	free(q->rows);
	for (int b = 0; b < LLR_GEN_BATCH; b++) {
		free(q->seq[b]);
		llr_gen_hyp_free(&q->hs[b]);
	}
	llr_row_free(&q->row);
	llr_gen_beam_free(&q->beam);
	free(q->bseq);
	free(q);
}

static int lgen_init(llr_gen *g, llr_err *err)
{
	lgen *q = llr_calloc(1, sizeof *q);
	if (!q)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->state = q;
	const loglm *r = g->m->state;
	q->m = r->model;
	q->V = llr_maxent_cfg(q->m->me)->vocab;
	q->eos = q->m->lex->eos_id;
	q->unk = q->m->lex->unk_id;
	if (!(q->sampler = llr_sampler_new(q->V, err)))
		return llr_err_code(err, LLR_ENOMEM);
	if (!(q->rows = llr_malloc((size_t)LLR_GEN_BATCH * (size_t)q->V * sizeof *q->rows)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

/* Room for n entries of *p (each size bytes), its capacity *cap. */
static int grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return LLR_OK;
	size_t c = n + n / 2 + 8;
	void *x = llr_reallocarray(*(void **)p, c, size);
	if (!x)
		return LLR_ENOMEM;
	*(void **)p = x;
	*cap = c;
	return LLR_OK;
}

/* Prefix words k0 .. k0 + m - 1's log p rows (llr_gen_prefix_mask_rows). */
static int prefix_rows(void *state, size_t k0, size_t m, float *out, llr_err *err)
{
	lgen *q = state;
	return llr_maxent_dist(q->m->me, m, q->pos + k0, out, err);
}

/* The prefix as ids, scored word by word. */
static int lgen_start(llr_gen *g, llr_err *err)
{
	lgen *q = g->state;
	size_t n = g->pre.n;
	if (grow(&q->pre, &q->precap, n, sizeof *q->pre) < 0 || grow(&q->pos, &q->poscap, LLR_MAX(n, (size_t)LLR_GEN_BATCH), sizeof *q->pos) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		int oov;
		int32_t id = loglm_word_id(q->m, llr_gen_pword(g, k), &oov, err);
		if (id < 0)
			return id;
		q->pre[k] = id;
		q->pos[k] = (llr_maxent_pos){q->pre, (int64_t)k, id};
	}
	q->npre = n;
	int rc = llr_maxent_score(q->m->me, n, q->pos, g->pre.lps, NULL, err);
	if (rc >= 0) /* under a constraint, each word renormalised over its step's tokens */
		rc = llr_gen_prefix_mask_rows(g, prefix_rows, q->rows, q->V, err);
	return rc < 0 ? rc : LLR_OK;
}

static int lgen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err)
{
	lgen *q = g->state;
	for (size_t i = 0; i < n; i++) {
		llr_gen_hyp_restart(&q->hs[i], g->pre.lp);
		llr_rng_seed(&q->hs[i].rng, llr_rng_u64(rng));
		g->res[i] = &q->hs[i];
		if (grow(&q->seq[i], &q->seqcap[i], q->npre + 1, sizeof *q->seq[i]) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (q->npre)
			memcpy(q->seq[i], q->pre, q->npre * sizeof *q->pre);
	}
	g->nres = n;
	for (;;) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (!q->hs[i].done) {
				q->pos[k] = (llr_maxent_pos){q->seq[i], (int64_t)(q->npre + q->hs[i].n), -1};
				q->live[k++] = (int)i;
			}
		if (!k)
			return LLR_OK;
		int rc = llr_maxent_dist(q->m->me, k, q->pos, q->rows, err);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < k; j++) {
			int i = q->live[j];
			size_t at = q->npre + q->hs[i].n;
			if (grow(&q->seq[i], &q->seqcap[i], at + 1, sizeof *q->seq[i]) < 0)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
			if ((rc = llr_gen_hyp_draw(g, &q->hs[i], q->rows + j * (size_t)q->V, q->sampler, q->eos, q->unk,
			                           &q->seq[i][at], err)) < 0)
				return rc;
		}
	}
}

/* The distributions after hypotheses h[0..n) (beam search's): each
 * one's sentence, the prefix then its tokens, in bseq. */
static int lgen_dist(llr_gen *g, const llr_gen_hyp *h, int n, float *rows, llr_err *err)
{
	lgen *q = g->state;
	size_t len = q->npre + (size_t)g->o.max_len + 1;
	if (grow(&q->bseq, &q->bseqcap, (size_t)n * len, sizeof *q->bseq) < 0 || grow(&q->pos, &q->poscap, (size_t)n, sizeof *q->pos) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int b = 0; b < n; b++) {
		int32_t *seq = q->bseq + (size_t)b * len;
		if (q->npre)
			memcpy(seq, q->pre, q->npre * sizeof *seq);
		memcpy(seq + q->npre, h[b].ids, h[b].n * sizeof *seq);
		q->pos[b] = (llr_maxent_pos){seq, (int64_t)(q->npre + h[b].n), -1};
	}
	return llr_maxent_dist(q->m->me, (size_t)n, q->pos, rows, err);
}

static int lgen_beam(llr_gen *g, llr_err *err)
{
	lgen *q = g->state;
	const llr_gen_beam_model bm = {q->V, q->eos, q->unk, lgen_dist};
	return llr_gen_beam_search(g, &q->beam, &bm, err);
}

/* Token k of result h (k < the prefix's length: prefix word k). */
static int lgen_features(llr_gen *g, const llr_gen_hyp *h, size_t k, llr_buf *out, llr_err *err)
{
	lgen *q = g->state;
	return rnnlm_closed_features(g, q->m->lex, &q->row, h, k, out, err);
}

static const char *lgen_word(const llr_gen *g, int32_t id)
{
	const lgen *q = g->state;
	return llr_strmap_str(q->m->lex->vocab, id);
}

const llr_gen_ops llr_loglm_gen_ops = {
	.init = lgen_init,
	.free = lgen_free,
	.start = lgen_start,
	.sample = lgen_sample,
	.beam = lgen_beam,
	.word = lgen_word,
	.features = lgen_features,
};
