/*
 * gen.c - generation from an LSTM language model (llr_gen, gen.h;
 * rnnlm.h): the prefix fed through one stream, then ancestral sampling
 * (temperature, top-k, top-p through llr_sample) or greedy decoding of
 * LLR_GEN_BATCH sentences side by side, or beam search; the network runs
 * step by step (llr_net_step).  The streams of a state are always
 * max(beam, LLR_GEN_BATCH), whatever is live, so a row's numbers do not
 * depend on how many sentences are drawn.  The open vocabulary's draws
 * are genopen.c's, the beam search beam.c's.
 */
#include "family/rnnlm/rnnlm.h"

#include <math.h>
#include <stdlib.h>

static void rgen_free(void *state)
{
	rgen *q = state;
	llr_buf_free(&q->word);
	free(q->row1);
	free(q->rows);
	free(q->inputs);
	free(q->pin);
	free(q->ptgt);
	llr_net_state_free(q->st1);
	llr_net_state_free(q->stA);
	llr_net_state_free(q->stB);
	llr_sampler_free(q->sampler);
	for (int b = 0; b < LLR_GEN_BATCH; b++)
		llr_gen_hyp_free(&q->hs[b]);
	for (int b = 0; q->fin && b < 2 * q->nstreams; b++) {
		if (b < q->nstreams) {
			llr_gen_hyp_free(&q->live[b]);
			llr_gen_hyp_free(&q->next[b]);
		}
		llr_gen_hyp_free(&q->fin[b]);
	}
	free(q->live);
	free(q->next);
	free(q->fin);
	free(q->cs);
	free(q->top);
	free(q->order);
	llr_row_free(&q->row);
	free(q);
}

/* The beam search's hypotheses and candidates (K = g->o.beam). */
static int beam_init(rgen *q, int K)
{
	size_t k = (size_t)q->nstreams; /* >= K, so rgen_free knows the sizes */
	q->live = llr_calloc(k, sizeof *q->live);
	q->next = llr_calloc(k, sizeof *q->next);
	q->fin = llr_calloc(2 * k, sizeof *q->fin);
	q->cs = llr_reallocarray(NULL, (size_t)K * 2 * (size_t)K, sizeof *q->cs);
	q->top = llr_reallocarray(NULL, (size_t)K * 2, sizeof *q->top);
	q->order = llr_reallocarray(NULL, (size_t)K * 2, sizeof *q->order);
	return q->live && q->next && q->fin && q->cs && q->top && q->order ? LLR_OK : LLR_ENOMEM;
}

static int rgen_init(llr_gen *g, llr_err *err)
{
	rgen *q = llr_calloc(1, sizeof *q);
	if (!q)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->state = q;
	q->r = g->m->state;
	q->net = q->r->model->net;
	q->lex = q->r->model->lex;
	q->V = (int32_t)llr_strmap_size(q->lex->vocab);
	q->unk = q->lex->unk_id;
	q->eos = q->lex->eos_id;
	rgen_open_init(q, &g->o);
	int B = q->nstreams = LLR_MAX(g->o.beam, LLR_GEN_BATCH);
	if (!(q->sampler = llr_sampler_new(q->W, err)))
		return llr_err_code(err, LLR_ENOMEM);
	q->st1 = llr_net_state_new(q->net, 1);
	q->stA = llr_net_state_new(q->net, B);
	q->stB = llr_net_state_new(q->net, B);
	q->row1 = llr_reallocarray(NULL, (size_t)q->W, sizeof *q->row1);
	q->rows = llr_reallocarray(NULL, (size_t)B * (size_t)q->W, sizeof *q->rows);
	q->inputs = llr_reallocarray(NULL, (size_t)B, sizeof *q->inputs);
	if (!q->st1 || !q->stA || !q->stB || !q->row1 || !q->rows || !q->inputs || (g->o.beam && beam_init(q, g->o.beam) < 0))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the generator's %d streams", B);
	return LLR_OK;
}

int rgen_step(rgen *q, llr_net_state *s, const int32_t *in, float *logp, llr_err *err)
{
	return llr_net_step(q->net, s, in, llr_rnnlm_inputs_psi(q->r->in), logp, err);
}

/* The prefix's ids: target (the vocabulary's, or <unk>) and input. */
static int prefix_ids(rgen *q, const llr_gen *g, llr_err *err)
{
	size_t n = g->pre.n;
	if (n > q->pcap) {
		int32_t *a = llr_reallocarray(q->pin, n, sizeof *a);
		if (a)
			q->pin = a;
		int32_t *b = llr_reallocarray(q->ptgt, n, sizeof *b);
		if (b)
			q->ptgt = b;
		if (!a || !b)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a prefix of %zu words", n);
		q->pcap = n;
	}
	llr_rnnlm_inputs_reset(q->r->in);
	for (size_t k = 0; k < n; k++) {
		const char *w = llr_gen_pword(g, k);
		size_t wl = strlen(w);
		int oov;
		int32_t vid = llr_strmap_get(q->lex->vocab, w, wl);
		if ((q->ptgt[k] = llr_rnnlm_target(q->r->model, w, wl, &oov, err)) < 0)
			return q->ptgt[k];
		if ((q->pin[k] = llr_rnnlm_inputs_add(q->r->in, w, wl, vid, err)) < 0)
			return q->pin[k];
	}
	return LLR_OK;
}

/* Feed <s> and the prefix through st1 (one stream), scoring each prefix
 * word; row1 then holds log p of the first word to generate. */
static int rgen_start(llr_gen *g, llr_err *err)
{
	rgen *q = g->state;
	int rc = prefix_ids(q, g, err);
	if (rc < 0)
		return rc;
	llr_net_state_reset(q->st1);
	int32_t in = LLR_BOS_ID;
	if ((rc = rgen_step(q, q->st1, &in, q->row1, err)) < 0)
		return rc;
	for (size_t k = 0; k < g->pre.n; k++) {
		g->pre.lps[k] = q->row1[q->ptgt[k]];
		if ((rc = llr_gen_prefix_mask(g, k, q->row1, q->W, err)) < 0)
			return rc;
		in = q->pin[k];
		if ((rc = rgen_step(q, q->st1, &in, q->row1, err)) < 0)
			return rc;
	}
	return rgen_open_prefix(q, g, err);
}

/* --no-unk: neither <unk> nor an unseen word. */
void rgen_mask_row(const rgen *q, const llr_gen_opts *o, float *row)
{
	if (o->no_unk && q->unk >= 0 && q->unk != q->eos)
		row[q->unk] = -INFINITY;
	if (o->no_unk)
		rgen_open_mask(q, row);
}

/* Draw hypothesis h's next token from row; the next input id in *next,
 * or LLR_BOS_ID when h is done. */
static int sample_next(rgen *q, llr_gen *g, llr_gen_hyp *h, float *row, int32_t *next, llr_err *err)
{
	const llr_gen_opts *o = &g->o;
	int rc = llr_gen_constrain(g, h, row, q->W, err);
	if (rc < 0)
		return rc;
	float lp_unk = q->unk >= 0 ? row[q->unk] : 0, lp;
	int32_t id, sig;
	rgen_mask_row(q, o, row);
	rc = rgen_open_pick(q, g, h, row, lp_unk, &id, &lp, &sig, err);
	if (rc < 0)
		return rc;
	if (id >= 0) {
		if (llr_gen_hyp_advance(h, id, lp, q->eos, o->max_len) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		*next = h->done ? LLR_BOS_ID : id;
		return LLR_OK;
	}
	if ((rc = llr_gen_hyp_push_word(h, &q->word, lp, sig)) < 0)
		return llr_err_set(err, rc, rc == LLR_ERANGE ? "generated words too long" : "out of memory");
	if ((int)h->n >= o->max_len)
		h->done = 1;
	*next = LLR_BOS_ID;
	if (h->done)
		return LLR_OK;
	int32_t in = llr_rnnlm_inputs_add(q->r->in, q->word.data ? q->word.data : "", q->word.len, -1, err);
	if (in < 0)
		return in;
	*next = in;
	return LLR_OK;
}

/* n sentences after the prefix, side by side in stA, each with its own
 * generator drawn from rng (so sentence i does not depend on n). */
static int rgen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err)
{
	rgen *q = g->state;
	const int32_t W = q->W;
	int G = (int)n, rc;
	llr_rnnlm_inputs_reset(q->r->in); /* the prefix is in st1; rows of unseen words from here */
	for (int b = 0; b < G; b++) {
		llr_gen_hyp_restart(&q->hs[b], g->pre.lp);
		llr_rng_seed(&q->hs[b].rng, llr_rng_u64(rng));
		llr_net_state_copy(q->stA, b, q->st1, 0);
		memcpy(q->rows + (size_t)b * W, q->row1, (size_t)W * sizeof *q->rows);
	}
	for (int b = G; b < q->nstreams; b++)
		llr_net_state_copy(q->stA, b, q->st1, 0);
	for (;;) {
		int live = 0;
		for (int b = 0; b < G; b++) {
			q->inputs[b] = LLR_BOS_ID;
			if (q->hs[b].done)
				continue;
			if ((rc = sample_next(q, g, &q->hs[b], q->rows + (size_t)b * W, &q->inputs[b], err)) < 0)
				return rc;
			live += !q->hs[b].done;
		}
		if (!live)
			break;
		for (int b = G; b < q->nstreams; b++)
			q->inputs[b] = LLR_BOS_ID;
		if ((rc = rgen_step(q, q->stA, q->inputs, q->rows, err)) < 0)
			return rc;
	}
	for (int b = 0; b < G; b++)
		g->res[b] = &q->hs[b];
	g->nres = (size_t)G;
	return LLR_OK;
}

static const char *rgen_word(const llr_gen *g, int32_t id)
{
	const rgen *q = g->state;
	return llr_strmap_str(q->lex->vocab, id);
}

static int rgen_features(llr_gen *g, const llr_gen_hyp *h, size_t k, llr_buf *out, llr_err *err)
{
	rgen *q = g->state;
	if (k < g->pre.n) {
		const char *w = llr_gen_pword(g, k);
		return rnnlm_word_features(q->lex, &q->row, w, llr_strmap_get(q->lex->vocab, w, strlen(w)), rnnlm_put_feature,
		                           out, err);
	}
	k -= g->pre.n;
	int32_t id = h->ids[k];
	if (id >= 0)
		return rnnlm_word_features(q->lex, &q->row, rgen_word(g, id), id, rnnlm_put_feature, out, err);
	if (h->sig[k] >= 0) /* a drawn unseen word: its signature's row */
		return rnnlm_csr_features(q->lex, llr_lexicon_sig_phi(q->lex), h->sig[k], rnnlm_put_feature, out) < 0
		           ? llr_err_set(err, LLR_ENOMEM, "out of memory")
		           : LLR_OK;
	return rnnlm_word_features(q->lex, &q->row, h->oov.data + (-1 - (int64_t)id), -1, rnnlm_put_feature, out, err);
}

static const llr_fsa *rgen_automaton(const llr_gen *g)
{
	const rgen *q = g->state;
	return q->lex->fsa;
}

const llr_gen_ops llr_rnnlm_gen_ops = {
	.init = rgen_init,
	.free = rgen_free,
	.start = rgen_start,
	.sample = rgen_sample,
	.beam = rgen_beam,
	.word = rgen_word,
	.features = rgen_features,
	.note = rgen_open_note,
	.automaton = rgen_automaton,
};
