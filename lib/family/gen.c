/*
 * gen.c - the generation calls of the one model interface (llr_gen_*,
 * lib/llrnn.h): a generator over a model, dispatched to its family's
 * generation operations (gen.h), with what every family keeps alike, the
 * prefix and the sentences being generated.  The decoding itself is the
 * family's (lib/family/<name>/gen.c).
 */
#include "family/gen.h"

#include <math.h>
#include <stdlib.h>

void llr_gen_opts_init(llr_gen_opts *o)
{
	memset(o, 0, sizeof *o);
	llr_sample_opts_init(&o->sample);
	o->max_len = 100;
	o->nbest = 1;
	o->spell_tries = 100000;
	o->len_norm = 1;
}

int llr_gen_reserve(llr_gen *g, size_t n, llr_err *err)
{
	if (n <= g->rescap)
		return LLR_OK;
	const llr_gen_hyp **r = llr_reallocarray(g->res, n, sizeof *r);
	if (!r)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->res = r;
	g->rescap = n;
	return LLR_OK;
}

int llr_gen_new(llr_model *m, const llr_gen_opts *o, llr_gen **out, llr_err *err)
{
	*out = NULL;
	const llr_gen_ops *ops = m->fam->gen;
	if (!ops)
		return llr_err_set(err, LLR_EINVAL, "%s: %s cannot generate", m->path, m->fam->what);
	if (o->beam > 0 && !ops->beam)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no beam search", m->path, m->fam->what);
	int rc = llr_sample_opts_check(&o->sample, err);
	if (rc < 0)
		return rc;
	if (!(o->len_norm >= 0) || o->max_len < 1 || o->beam < 0 || o->nbest < 1 || (o->beam && o->nbest > o->beam) || o->spell_tries < 1)
		return llr_err_set(err, LLR_EINVAL, "llr_gen_new: max_len %d, beam %d, nbest %d, spell_tries %lld out of range",
		                   o->max_len, o->beam, o->nbest, (long long)o->spell_tries);
	llr_gen *g = llr_calloc(1, sizeof *g);
	if (!g)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->ops = ops;
	g->m = m;
	g->o = *o;
	if ((rc = llr_gen_reserve(g, LLR_MAX((size_t)LLR_GEN_BATCH, (size_t)o->nbest), err)) < 0 ||
	    (rc = ops->init(g, err)) < 0) {
		llr_gen_free(g);
		return rc;
	}
	*out = g;
	return LLR_OK;
}

void llr_gen_free(llr_gen *g)
{
	if (!g)
		return;
	if (g->state)
		g->ops->free(g->state);
	llr_buf_free(&g->pre.text);
	free(g->pre.off);
	free(g->pre.lps);
	free(g->res);
	free(g);
}

/* Copy the prefix's words into g->pre. */
static int set_prefix(llr_gen *g, const llr_sentence *p, llr_err *err)
{
	llr_buf_clear(&g->pre.text);
	g->pre.n = 0;
	g->pre.lp = 0;
	if (p->n > g->pre.cap) {
		size_t *off = llr_reallocarray(g->pre.off, p->n, sizeof *off);
		if (off)
			g->pre.off = off;
		float *lps = llr_reallocarray(g->pre.lps, p->n, sizeof *lps);
		if (lps)
			g->pre.lps = lps;
		if (!off || !lps)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a prefix of %zu words", p->n);
		g->pre.cap = p->n;
	}
	for (size_t k = 0; k < p->n; k++) {
		g->pre.off[k] = g->pre.text.len;
		g->pre.lps[k] = 0;
		if (llr_buf_append(&g->pre.text, p->words[k], strlen(p->words[k]) + 1))
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a prefix of %zu words", p->n);
	}
	g->pre.n = p->n;
	return LLR_OK;
}

int llr_gen_start(llr_gen *g, const llr_sentence *prefix, llr_err *err)
{
	g->nres = 0;
	int rc = llr_family_check_utf8(g->m, "the prefix", 0, prefix, 1, err);
	if (rc < 0)
		return rc;
	rc = set_prefix(g, prefix, err);
	if (rc < 0 || (rc = g->ops->start(g, err)) < 0)
		return rc;
	g->pre.lp = 0;
	for (size_t k = 0; k < g->pre.n; k++)
		g->pre.lp += g->pre.lps[k];
	return LLR_OK;
}

const float *llr_gen_prefix_logp(const llr_gen *g, double *total)
{
	if (total)
		*total = g->pre.lp;
	return g->pre.lps;
}

int llr_gen_ensemble(llr_gen *g, llr_model *other, llr_err *err)
{
	if (!g->ops->ensemble || other->fam != g->m->fam)
		return llr_err_set(err, LLR_EINVAL, "%s: %s make no ensemble with %s", other->path, other->fam->what, g->m->path);
	return g->ops->ensemble(g, other, err);
}

int llr_gen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err)
{
	g->nres = 0;
	if (!g->ops->sample)
		return llr_err_set(err, LLR_EINVAL, "%s: %s do not sample (beam search: 1 beam is greedy)", g->m->path, g->m->fam->what);
	if (n < 1 || n > LLR_GEN_BATCH)
		return llr_err_set(err, LLR_EINVAL, "llr_gen_sample: %zu sentences at once (1 .. %d)", n, LLR_GEN_BATCH);
	return g->ops->sample(g, rng, n, err);
}

int llr_gen_beam(llr_gen *g, llr_err *err)
{
	g->nres = 0;
	if (g->o.beam < 1)
		return llr_err_set(err, LLR_EINVAL, "llr_gen_beam: the generator was made without a beam (llr_gen_opts.beam)");
	int rc = g->ops->beam(g, err);
	return rc < 0 ? rc : (int)g->nres;
}

void llr_gen_result_get(const llr_gen *g, size_t i, llr_gen_result *r)
{
	LLR_ASSERT(i < g->nres);
	const llr_gen_hyp *h = g->res[i];
	*r = (llr_gen_result){h->n, g->ops->source ? NULL : h->lps, h->lp, h->ended, h->eos_lp, h->score};
}

const float *llr_gen_attention(const llr_gen *g, size_t i, size_t *rows, size_t *cols)
{
	LLR_ASSERT(i < g->nres);
	*rows = g->res[i]->arows;
	*cols = g->res[i]->acols;
	return g->res[i]->attn;
}

const char *llr_gen_word(const llr_gen *g, size_t i, size_t k)
{
	LLR_ASSERT(i < g->nres && k < g->res[i]->n);
	const llr_gen_hyp *h = g->res[i];
	int32_t id = h->ids[k];
	return id < 0 ? h->oov.data + (-1 - (int64_t)id) : g->ops->word(g, id);
}

int llr_gen_features(llr_gen *g, size_t i, size_t k, llr_buf *out, llr_err *err)
{
	if (!g->ops->features)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no features to show", g->m->path, g->m->fam->what);
	LLR_ASSERT(i < g->nres && k < g->pre.n + g->res[i]->n);
	return g->ops->features(g, g->res[i], k, out, err);
}

int llr_gen_note(const llr_gen *g, llr_buf *out)
{
	return g->ops->note ? g->ops->note(g, out) : LLR_OK;
}

/* ------------------------------------------------------------ sentences */

int llr_gen_hyp_push(llr_gen_hyp *h, int32_t id, float lp, int32_t sig)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 32;
		int32_t *ids = llr_reallocarray(h->ids, cap, sizeof *ids);
		if (ids)
			h->ids = ids;
		int32_t *sg = llr_reallocarray(h->sig, cap, sizeof *sg);
		if (sg)
			h->sig = sg;
		float *lps = llr_reallocarray(h->lps, cap, sizeof *lps);
		if (lps)
			h->lps = lps;
		if (!ids || !sg || !lps)
			return LLR_ENOMEM;
		h->cap = cap;
	}
	h->ids[h->n] = id;
	h->sig[h->n] = sig;
	h->lps[h->n] = lp;
	h->n++;
	h->lp += lp;
	return LLR_OK;
}

int llr_gen_hyp_push_word(llr_gen_hyp *h, const llr_buf *w, float lp, int32_t sig)
{
	if (h->oov.len > INT32_MAX / 2)
		return LLR_ERANGE;
	int32_t id = -1 - (int32_t)h->oov.len;
	if (llr_buf_append(&h->oov, w->data ? w->data : "", w->len) || llr_buf_putc(&h->oov, '\0'))
		return LLR_ENOMEM;
	return llr_gen_hyp_push(h, id, lp, sig);
}

void llr_gen_hyp_restart(llr_gen_hyp *h, double lp)
{
	h->n = 0;
	llr_buf_clear(&h->oov);
	h->lp = lp;
	h->ended = h->done = 0;
}

int llr_gen_hyp_copy(llr_gen_hyp *dst, const llr_gen_hyp *src)
{
	dst->n = 0;
	llr_buf_clear(&dst->oov);
	if (src->oov.len && llr_buf_append(&dst->oov, src->oov.data, src->oov.len))
		return LLR_ENOMEM;
	for (size_t i = 0; i < src->n; i++)
		if (llr_gen_hyp_push(dst, src->ids[i], src->lps[i], src->sig[i]) < 0)
			return LLR_ENOMEM;
	dst->lp = src->lp;
	dst->ended = src->ended;
	dst->done = src->done;
	dst->eos_lp = src->eos_lp;
	return LLR_OK;
}

void llr_gen_hyp_free(llr_gen_hyp *h)
{
	free(h->ids);
	free(h->sig);
	llr_buf_free(&h->oov);
	free(h->lps);
}

int llr_gen_hyp_advance(llr_gen_hyp *h, int32_t id, float lp, int32_t eos, int max_len)
{
	if (id == eos) {
		h->lp += lp;
		h->eos_lp = lp;
		h->ended = h->done = 1;
		return LLR_OK;
	}
	if (llr_gen_hyp_push(h, id, lp, -1) < 0)
		return LLR_ENOMEM;
	if ((int)h->n >= max_len)
		h->done = 1;
	return LLR_OK;
}

int llr_gen_hyp_draw(llr_gen *g, llr_gen_hyp *h, float *row, llr_sampler *s, int32_t eos, int32_t unk, int32_t *id,
                     llr_err *err)
{
	if (g->o.no_unk && unk >= 0 && unk != eos)
		row[unk] = -INFINITY;
	if ((*id = llr_sample(s, &g->o.sample, row, &h->rng)) < 0)
		return llr_err_set(err, LLR_EINVAL, "the model gives no finite log-probability to any word");
	if (llr_gen_hyp_advance(h, *id, row[*id], eos, g->o.max_len) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

int llr_gen_cand_cmp(const void *pa, const void *pb)
{
	const llr_gen_cand *a = pa, *b = pb;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->beam != b->beam)
		return a->beam < b->beam ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static double norm_score(const llr_gen_hyp *h, double prefix_lp)
{
	size_t len = h->n + (size_t)h->ended;
	return len ? (h->lp - prefix_lp) / (double)len : 0;
}

void llr_gen_rank(llr_gen *g, llr_gen_hyp *fin, int nfin, int *order)
{
	for (int i = 0; i < nfin; i++)
		order[i] = i;
	for (int i = 1; i < nfin; i++) {
		int v = order[i], j = i;
		double sv = norm_score(&fin[v], g->pre.lp);
		while (j > 0 && norm_score(&fin[order[j - 1]], g->pre.lp) < sv) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	g->nres = 0;
	for (int i = 0; i < nfin && i < g->o.nbest; i++)
		g->res[g->nres++] = &fin[order[i]];
}
