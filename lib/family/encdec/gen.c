/*
 * gen.c - generation from an encoder-decoder (llr_gen, family/gen.h):
 * llr_gen_start's sentence is the source, its tokens mapped to the
 * model's ids (<unk> for unknown ones) then the source </s>, encoded by
 * every model of the ensemble (llr_gen_ensemble: models that share the
 * target vocabulary, their log-probabilities averaged, Neubig's tutorial
 * 7.4); llr_gen_beam is greedy search (1 beam) or beam search with
 * length normalisation and n-best lists (llr_encdec_search, 7.2),
 * optionally with the first model's attention, and under gen --fsa
 * (llr_gen_opts.fsa, read by llr_gen_new into g->fsa.a) the mask-only
 * mode of models trained without an automaton (llr_search_opts.mask).
 * No sampling.  The
 * models are those of the family's state (encdec.h).
 */
#include "family/encdec/encdec.h"

#include <stdlib.h>

typedef struct egen {
	int M;
	llr_encdec_model **models; /* [0]: g->m's */
	llr_encdec **nets;
	llr_encdec_state **states;
	int32_t *sids; /* the source's ids in one model's source vocabulary */
	size_t scap;
	int S;
	llr_search_opts so;
	llr_hyp *hyps; /* nbest */
	int nout;
	llr_gen_hyp *res;
} egen;

static void clear_hyps(egen *q)
{
	for (int i = 0; i < q->nout; i++)
		llr_hyp_clear(&q->hyps[i]);
	q->nout = 0;
}

static void egen_free(void *state)
{
	egen *q = state;
	clear_hyps(q);
	for (int k = 0; k < q->M; k++)
		llr_encdec_state_free(q->states[k]);
	for (int i = 0; q->res && i < q->so.nbest; i++)
		llr_gen_hyp_free(&q->res[i]);
	free(q->models);
	free(q->nets);
	free(q->states);
	free(q->sids);
	free(q->hyps);
	free(q->res);
	free(q);
}

/* Model e joins the ensemble. */
static int add(egen *q, llr_encdec_model *e, llr_err *err)
{
	llr_encdec_model **ms = llr_reallocarray(q->models, (size_t)q->M + 1, sizeof *ms);
	if (ms)
		q->models = ms;
	llr_encdec **ns = llr_reallocarray(q->nets, (size_t)q->M + 1, sizeof *ns);
	if (ns)
		q->nets = ns;
	llr_encdec_state **ss = llr_reallocarray(q->states, (size_t)q->M + 1, sizeof *ss);
	if (ss)
		q->states = ss;
	if (!ms || !ns || !ss || !(ss[q->M] = llr_encdec_state_new(e->net, q->so.beam)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	ms[q->M] = e;
	ns[q->M] = e->net;
	q->M++;
	return LLR_OK;
}

static int egen_init(llr_gen *g, llr_err *err)
{
	egen *q = llr_calloc(1, sizeof *q);
	if (!q)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->state = q;
	const llr_gen_opts *o = &g->o;
	q->so = (llr_search_opts){.beam = LLR_MAX(o->beam, 1), .nbest = o->nbest, .max_len = o->max_len, .len_norm = o->len_norm, .attention = o->attention};
	q->hyps = llr_calloc((size_t)q->so.nbest, sizeof *q->hyps);
	q->res = llr_calloc((size_t)q->so.nbest, sizeof *q->res);
	if (!q->hyps || !q->res)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return add(q, llr_encdec_of(g->m), err);
}

static int egen_ensemble(llr_gen *g, llr_model *other, llr_err *err)
{
	egen *q = g->state;
	llr_encdec_model *e = llr_encdec_of(other); /* llr_gen_ensemble checked its family */
	const llr_strmap *v0 = q->models[0]->lex->vocab, *v = e->lex->vocab;
	int same = llr_strmap_size(v0) == llr_strmap_size(v);
	for (size_t i = 0; same && i < llr_strmap_size(v); i++)
		same = !strcmp(llr_strmap_str(v0, (int32_t)i), llr_strmap_str(v, (int32_t)i));
	if (!same)
		return llr_err_set(err, LLR_EINVAL,
		                   "%s: its target vocabulary differs from the first model's: an ensemble needs one target vocabulary",
		                   other->path);
	return add(q, e, err);
}

/* The source's ids in model k's source vocabulary, then its </s>. */
static int source_ids(egen *q, const llr_gen *g, int k, llr_err *err)
{
	const llr_source *s = q->models[k]->src;
	if (g->pre.n + 1 > q->scap) {
		int32_t *ids = llr_reallocarray(q->sids, g->pre.n + 1, sizeof *ids);
		if (!ids)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a source of %zu tokens", g->pre.n);
		q->sids = ids;
		q->scap = g->pre.n + 1;
	}
	for (size_t i = 0; i < g->pre.n; i++)
		q->sids[i] = llr_source_id(s, llr_gen_pword(g, i), strlen(llr_gen_pword(g, i)));
	q->sids[g->pre.n] = s->eos_id;
	return (int)g->pre.n + 1;
}

static int egen_start(llr_gen *g, llr_err *err)
{
	egen *q = g->state;
	clear_hyps(q);
	for (int k = 0; k < q->M; k++) {
		int n = source_ids(q, g, k, err), rc;
		if (n < 0)
			return n;
		if ((rc = llr_encdec_start(q->nets[k], q->states[k], q->sids, n, err)) < 0)
			return rc;
		q->S = n;
	}
	return LLR_OK;
}

static int egen_beam(llr_gen *g, llr_err *err)
{
	egen *q = g->state;
	clear_hyps(q);
	q->so.mask = g->fsa.a; /* --fsa's automaton, or its intersection with the first model's (llr_gen_new), or NULL */
	int32_t eos = q->models[0]->lex->eos_id;
	int rc = llr_encdec_search(q->nets, q->states, q->M, eos, &q->so, q->hyps, &q->nout, err);
	if (rc < 0)
		return rc;
	for (int i = 0; i < q->nout; i++) {
		const llr_hyp *h = &q->hyps[i];
		llr_gen_hyp *r = &q->res[i];
		llr_gen_hyp_restart(r, 0);
		for (int t = 0; t < (h->finished ? h->len - 1 : h->len); t++)
			if (llr_gen_hyp_push(r, h->ids[t], 0, -1) < 0)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
		r->lp = h->logp;
		r->ended = h->finished;
		r->score = h->score;
		r->attn = h->attn;
		r->arows = (size_t)h->len;
		r->acols = (size_t)q->S;
		g->res[i] = r;
	}
	g->nres = (size_t)q->nout;
	return LLR_OK;
}

/* The first model's output automaton (train --output-fsa), which its
 * search follows and llr_gen intersects with --fsa. */
static const llr_fsa *egen_automaton(const llr_gen *g)
{
	const egen *q = g->state;
	return llr_encdec_fsa(q->nets[0]);
}

static const char *egen_word(const llr_gen *g, int32_t id)
{
	const egen *q = g->state;
	return llr_strmap_str(q->models[0]->lex->vocab, id);
}

const llr_gen_ops llr_encdec_gen_ops = {
	.init = egen_init,
	.free = egen_free,
	.start = egen_start,
	.beam = egen_beam,
	.word = egen_word,
	.ensemble = egen_ensemble,
	.automaton = egen_automaton,
	.source = 1,
};
