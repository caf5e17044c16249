/*
 * gen.c - generation from a feed-forward language model (llr_gen, gen.h;
 * fflm.h): ancestral sampling (temperature, top-k, top-p through
 * llr_sample) or greedy decoding of up to LLR_GEN_BATCH sentences at
 * once, every step one llr_ffnet_dist over the live sentences' contexts
 * (their last order - 1 tokens); beam search over K hypotheses the
 * same way (genbeam.c).  A prefix word outside
 * the vocabulary is <unk> (refused without one); <unk> is never drawn
 * with no_unk.
 */
#include "family/fflm/fflm.h"
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>

typedef struct fgen {
	llr_fflm *m;
	int C;
	int32_t V, eos, unk;
	llr_sampler *sampler;
	int32_t *pre; /* the prefix's ids */
	size_t npre, precap;
	int32_t *ctx, *tg; /* LLR_GEN_BATCH contexts, or the prefix's */
	float *rows;       /* LLR_GEN_BATCH x V */
	float *lp;
	size_t cap;        /* positions ctx, tg and lp hold */
	int live[LLR_GEN_BATCH];
	llr_gen_hyp hs[LLR_GEN_BATCH];
	llr_gen_beams beam;
	llr_row row; /* a word's features */
} fgen;

static void fgen_free(void *state)
{
	fgen *q = state;
	llr_sampler_free(q->sampler);
	free(q->pre);
	free(q->ctx);
	free(q->tg);
	free(q->rows);
	free(q->lp);
	for (int b = 0; b < LLR_GEN_BATCH; b++)
		llr_gen_hyp_free(&q->hs[b]);
	llr_gen_beam_free(&q->beam);
	llr_row_free(&q->row);
	free(q);
}

/* Room for n positions (at least a batch of sentences). */
static int room(fgen *q, size_t n)
{
	n = LLR_MAX(n, (size_t)LLR_GEN_BATCH);
	if (n <= q->cap)
		return LLR_OK;
	free(q->ctx);
	free(q->tg);
	free(q->lp);
	q->ctx = llr_reallocarray(NULL, n * (size_t)q->C, sizeof *q->ctx);
	q->tg = llr_reallocarray(NULL, n, sizeof *q->tg);
	q->lp = llr_reallocarray(NULL, n, sizeof *q->lp);
	q->cap = q->ctx && q->tg && q->lp ? n : 0;
	return q->cap ? LLR_OK : LLR_ENOMEM;
}

static int fgen_init(llr_gen *g, llr_err *err)
{
	fgen *q = llr_calloc(1, sizeof *q);
	if (!q)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->state = q;
	const fflm *r = g->m->state;
	q->m = r->model;
	q->C = llr_ffnet_cfg(q->m->net)->order - 1;
	q->V = llr_ffnet_cfg(q->m->net)->vocab;
	q->eos = q->m->lex->eos_id;
	q->unk = q->m->lex->unk_id;
	if (!(q->sampler = llr_sampler_new(q->V, err)))
		return llr_err_code(err, LLR_ENOMEM);
	if (room(q, 0) < 0 || !(q->rows = llr_malloc((size_t)LLR_GEN_BATCH * (size_t)q->V * sizeof *q->rows)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

/* Prefix words k0 .. k0 + m - 1's log p rows (llr_gen_prefix_mask_rows). */
static int prefix_rows(void *state, size_t k0, size_t m, float *out, llr_err *err)
{
	fgen *q = state;
	return llr_ffnet_dist(q->m->net, m, q->ctx + k0 * (size_t)q->C, out, err);
}

/* The prefix as ids, scored word by word. */
static int fgen_start(llr_gen *g, llr_err *err)
{
	fgen *q = g->state;
	size_t n = g->pre.n;
	if (n > q->precap) {
		int32_t *p = llr_reallocarray(q->pre, n, sizeof *p);
		if (!p)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		q->pre = p;
		q->precap = n;
	}
	if (room(q, n) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		int oov;
		int32_t id = fflm_word_id(q->m, llr_gen_pword(g, k), &oov, err);
		if (id < 0)
			return id;
		q->pre[k] = id;
	}
	q->npre = n;
	for (size_t k = 0; k < n; k++)
		fflm_context(q->pre, (int64_t)k, q->C, q->ctx + k * (size_t)q->C);
	int rc = llr_ffnet_score(q->m->net, n, q->ctx, q->pre, g->pre.lps, NULL, err);
	if (rc >= 0) /* under a constraint, each word renormalised over its step's tokens */
		rc = llr_gen_prefix_mask_rows(g, prefix_rows, q->rows, q->V, err);
	return rc < 0 ? rc : LLR_OK;
}

/* Sentence h's context: the last C of the prefix and its tokens. */
static void hyp_context(const fgen *q, const llr_gen_hyp *h, int32_t *ctx)
{
	int64_t len = (int64_t)(q->npre + h->n);
	for (int j = 0; j < q->C; j++) {
		int64_t p = len - q->C + j;
		ctx[j] = p < 0 ? LLR_BOS_ID : p < (int64_t)q->npre ? q->pre[p] : h->ids[p - (int64_t)q->npre];
	}
}

static int fgen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err)
{
	fgen *q = g->state;
	for (size_t i = 0; i < n; i++) {
		llr_gen_hyp_restart(&q->hs[i], g->pre.lp);
		llr_rng_seed(&q->hs[i].rng, llr_rng_u64(rng));
		g->res[i] = &q->hs[i];
	}
	g->nres = n;
	for (;;) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (!q->hs[i].done) {
				hyp_context(q, &q->hs[i], q->ctx + k * (size_t)q->C);
				q->live[k++] = (int)i;
			}
		if (!k)
			return LLR_OK;
		int rc = llr_ffnet_dist(q->m->net, k, q->ctx, q->rows, err);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < k; j++) {
			int32_t id;
			if ((rc = llr_gen_hyp_draw(g, &q->hs[q->live[j]], q->rows + j * (size_t)q->V, q->sampler, q->eos, q->unk,
			                           &id, err)) < 0)
				return rc;
		}
	}
}

/* The distributions after hypotheses h[0..n) (beam search's). */
static int fgen_dist(llr_gen *g, const llr_gen_hyp *h, int n, float *rows, llr_err *err)
{
	fgen *q = g->state;
	if (room(q, (size_t)n) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int b = 0; b < n; b++)
		hyp_context(q, &h[b], q->ctx + (size_t)b * q->C);
	return llr_ffnet_dist(q->m->net, (size_t)n, q->ctx, rows, err);
}

static int fgen_beam(llr_gen *g, llr_err *err)
{
	fgen *q = g->state;
	const llr_gen_beam_model bm = {q->V, q->eos, q->unk, fgen_dist};
	return llr_gen_beam_search(g, &q->beam, &bm, err);
}

/* Token k of result h (k < the prefix's length: prefix word k). */
static int fgen_features(llr_gen *g, const llr_gen_hyp *h, size_t k, llr_buf *out, llr_err *err)
{
	fgen *q = g->state;
	return rnnlm_closed_features(g, q->m->lex, &q->row, h, k, out, err);
}

static const char *fgen_word(const llr_gen *g, int32_t id)
{
	const fgen *q = g->state;
	return llr_strmap_str(q->m->lex->vocab, id);
}

const llr_gen_ops llr_fflm_gen_ops = {
	.init = fgen_init,
	.free = fgen_free,
	.start = fgen_start,
	.sample = fgen_sample,
	.beam = fgen_beam,
	.word = fgen_word,
	.features = fgen_features,
};
