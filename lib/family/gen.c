/*
 * gen.c - the generation calls of the one model interface (llr_gen_*,
 * lib/llrnn.h): a generator over a model, dispatched to its family's
 * generation operations (gen.h), with what every family keeps alike, the
 * prefix and the sentences being generated.  The decoding itself is the
 * family's (lib/family/<name>/gen.c).
 */
#include "family/gen.h"
#include "fsa/gbnf.h"

#include <math.h>
#include <stdio.h>
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

static int constrained(const llr_gen_opts *o)
{
	return (o->fsa != NULL) + (o->regex != NULL) + (o->grammar != NULL);
}

/* The grammar of o.grammar over the vocabulary fv, and the refusal of
 * one that accepts no sentence of its tokens. */
static int grammar_init(llr_gen *g, llr_err *err)
{
	if (!(g->fsa.gr = llr_gbnf_read(g->o.grammar, err)) || !(g->fsa.gt = llr_gbnf_tok_new(g->fsa.gr, g->fsa.fv, err)))
		return llr_err_code(err, LLR_EFORMAT);
	const char *name = strcmp(g->o.grammar, "-") ? g->o.grammar : "<stdin>";
	if (!(g->fsa.gname = llr_strndup(name, strlen(name))))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	llr_gbnf_tok_on_notice(g->fsa.gt, &g->m->notice, g->fsa.gname);
	const int32_t *lab, *dst;
	int32_t n = llr_gbnf_tok_arcs(g->fsa.gt, 0, &lab, &dst, err);
	if (n < 0)
		return n;
	if (!n)
		return llr_err_set(err, LLR_EFORMAT, "%s: the grammar accepts no sentence of the tokens of %s", g->o.grammar,
		                   g->m->path);
	g->fsa.q0 = 0;
	return LLR_OK;
}

/* The constraint of o.fsa, o.regex or o.grammar over the vocabulary fv,
 * as an llr_fsa, into g->fsa.mine. */
static int constraint_read(llr_gen *g, llr_err *err)
{
	const llr_gen_opts *o = &g->o;
	g->fsa.mine = llr_fsa_constraint(o->fsa, o->regex, o->grammar, g->fsa.fv, &g->m->notice, err);
	return g->fsa.mine ? LLR_OK : llr_err_code(err, LLR_EFORMAT);
}

/* The constraint of o.fsa, o.regex or o.grammar intersected with own,
 * the automaton the model was trained under, into g->fsa.both, and
 * what messages call it; an empty intersection refused, naming both. */
static int meet_init(llr_gen *g, const llr_fsa *own, llr_err *err)
{
	size_t len;
	const char *mine = g->o.fsa ? "--fsa" : g->o.regex ? "--regex" : "--grammar";
	const char *ownk = llr_fsa_grammar_source(own, &len) ? "grammar" : "automaton";
	int rc = constraint_read(g, err);
	if (rc < 0)
		return rc;
	if (!(g->fsa.both = llr_fsa_meet(own, g->fsa.mine, err)))
		return llr_err_prefix(err, "%s: the model's %s and %s", g->m->path, ownk, mine);
	snprintf(g->fsa.what, sizeof g->fsa.what, "intersection of the model's %s and the %s", ownk,
	         g->o.fsa ? "automaton" : g->o.regex ? "regular expression" : "grammar");
	g->fsa.a = g->fsa.both;
	return LLR_OK;
}

/* gen.h's fsa: the automaton of o.fsa or o.regex, the grammar of
 * o.grammar, or the automaton background the model was trained under,
 * over the model's vocabulary, as the family names its words; with both
 * the model's and one of o's, their intersection.  A source family's
 * search follows its own automaton by itself. */
static int fsa_init(llr_gen *g, llr_err *err)
{
	const llr_fsa *own = g->ops->automaton ? g->ops->automaton(g) : NULL;
	if (!constrained(&g->o) && (!own || g->ops->source))
		return LLR_OK;
	llr_model_info info;
	llr_model_describe(g->m, &info);
	if (info.vocab < 1 || info.vocab > INT32_MAX)
		return llr_err_set(err, LLR_EINVAL, "%s: no vocabulary to constrain", g->m->path);
	int32_t V = (int32_t)info.vocab;
	if (!(g->fsa.fv = llr_strmap_new()) || !(g->fsa.to = llr_malloc((size_t)V * sizeof *g->fsa.to)) ||
	    !(g->fsa.xs = llr_malloc((size_t)V * sizeof *g->fsa.xs)) || !(g->fsa.lw = llr_malloc((size_t)V * sizeof *g->fsa.lw)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int32_t x = 0; x < V; x++) {
		const char *w = g->ops->word(g, x);
		if (llr_strmap_add(g->fsa.fv, w, strlen(w)) != x)
			return llr_err_set(err, LLR_EINVAL, "%s: word %d '%s' of the vocabulary is not unique", g->m->path, x, w);
	}
	g->fsa.V = V;
	g->fsa.eos = llr_strmap_get(g->fsa.fv, LLR_EOS, strlen(LLR_EOS));
	if (g->fsa.eos < 0)
		return llr_err_set(err, LLR_EINVAL, "%s: the vocabulary has no %s", g->m->path, LLR_EOS);
	g->fsa.unk = llr_strmap_get(g->fsa.fv, LLR_UNK, strlen(LLR_UNK));
	g->fsa.bos = llr_strmap_get(g->fsa.fv, LLR_BOS, strlen(LLR_BOS));
	int rc = LLR_OK;
	if (own && constrained(&g->o)) {
		rc = meet_init(g, own, err);
	} else if (own) {
		g->fsa.a = own;
		g->fsa.own = 1;
		g->o.max_len = g->fsa.max_len + 1; /* as llr_gen_new does for --fsa */
	} else if (g->o.grammar && !g->ops->source) { /* a source family's search queries an llr_fsa */
		return grammar_init(g, err);
	} else if ((rc = constraint_read(g, err)) >= 0) {
		g->fsa.a = g->fsa.mine;
	}
	if (rc >= 0)
		g->fsa.q0 = llr_fsa_start(g->fsa.a);
	return rc;
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
	if (constrained(o) && !ops->word)
		return llr_err_set(err, LLR_EINVAL, "%s: --fsa, --regex and --grammar constrain word-level language models, not %s",
		                   m->path, m->fam->what);
	if (constrained(o) > 1)
		return llr_err_set(err, LLR_EINVAL, "llr_gen_new: more than one of an automaton, a regular expression and a grammar");
	llr_gen *g = llr_calloc(1, sizeof *g);
	if (!g)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->ops = ops;
	g->m = m;
	g->o = *o;
	g->fsa.max_len = o->max_len;
	if (constrained(o) && !ops->source) { /* a source family's search masks and looks ahead itself */
		g->o.closed = 1;
		g->o.max_len = o->max_len + 1; /* room for the </s> the mask forces after max_len words */
	}
	if ((rc = llr_gen_reserve(g, LLR_MAX((size_t)LLR_GEN_BATCH, (size_t)o->nbest), err)) < 0 ||
	    (rc = ops->init(g, err)) < 0 || (rc = fsa_init(g, err)) < 0) {
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
	llr_fsa_free(g->fsa.both); /* before the automaton it borrows */
	llr_fsa_free(g->fsa.mine);
	llr_gbnf_tok_free(g->fsa.gt);
	llr_gbnf_free(g->fsa.gr);
	free(g->fsa.gname);
	llr_strmap_free(g->fsa.fv);
	free(g->fsa.to);
	free(g->fsa.xs);
	free(g->fsa.lw);
	free(g->fsa.pq);
	free(g->fsa.px);
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

/* The state after token x in state q of the automaton or the grammar
 * (-1: x not allowed) into *to. */
static int fsa_next(llr_gen *g, int32_t q, int32_t x, int32_t *to, llr_err *err)
{
	if (g->fsa.gt)
		return llr_gbnf_tok_next(g->fsa.gt, q, x, to, err);
	*to = llr_fsa_next(g->fsa.a, q, x, NULL);
	return LLR_OK;
}

/* The fewest tokens from q to a final state, more than limit when not
 * within limit; or an error. */
static int32_t fsa_dist(llr_gen *g, int32_t q, int32_t limit, llr_err *err)
{
	if (g->fsa.gt)
		return llr_gbnf_tok_dist(g->fsa.gt, q, limit, err);
	return llr_fsa_dist_within(g->fsa.a, q, limit, err);
}

/* Is the constraint a grammar (--grammar, or a model's grammar
 * background)? */
static int fsa_is_grammar(const llr_gen *g)
{
	size_t len;
	return g->fsa.gt || (g->fsa.a && llr_fsa_grammar_source(g->fsa.a, &len));
}

/* The constraint as messages name it. */
static const char *fsa_what(const llr_gen *g)
{
	if (g->fsa.both)
		return g->fsa.what;
	if (g->fsa.own)
		return fsa_is_grammar(g) ? "model's grammar" : "model's automaton";
	return g->fsa.gt ? "grammar" : "automaton";
}

/* The state after the prefix, in g->fsa.q0.  The model's own automaton
 * reads a word outside the vocabulary as <unk>, as the model does. */
static int fsa_prefix(llr_gen *g, llr_err *err)
{
	if ((!g->fsa.a && !g->fsa.gt) || g->ops->source) /* a source is not read by the automaton */
		return LLR_OK;
	const char *what = fsa_what(g);
	int32_t q = g->fsa.gt ? 0 : llr_fsa_start(g->fsa.a);
	if (g->pre.n > g->fsa.pcap) {
		int32_t *pq = llr_reallocarray(g->fsa.pq, g->pre.n, sizeof *pq);
		if (pq)
			g->fsa.pq = pq;
		int32_t *px = llr_reallocarray(g->fsa.px, g->pre.n, sizeof *px);
		if (px)
			g->fsa.px = px;
		if (!pq || !px)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a prefix of %zu words", g->pre.n);
		g->fsa.pcap = g->pre.n;
	}
	for (size_t k = 0; k < g->pre.n; k++) {
		const char *w = llr_gen_pword(g, k);
		int32_t x = llr_strmap_get(g->fsa.fv, w, strlen(w));
		if (x < 0 && g->fsa.own)
			x = g->fsa.unk;
		g->fsa.pq[k] = q;
		g->fsa.px[k] = x;
		int rc = x < 0 ? (q = -1, LLR_OK) : fsa_next(g, q, x, &q, err);
		if (rc < 0)
			return rc;
		if (q < 0)
			return llr_err_set(err, LLR_EINVAL, "the prefix: the %s rejects word %zu '%s'%s", what, k + 1, w,
			                   x < 0 ? " (not in the vocabulary)" : x == g->fsa.unk && g->fsa.own ? " (read as <unk>)" : "");
	}
	int32_t d = fsa_dist(g, q, g->fsa.max_len, err);
	if (d < 0)
		return d;
	if (d > g->fsa.max_len && (fsa_is_grammar(g) || g->fsa.both)) /* their searches give no length beyond max_len */
		return llr_err_set(err, LLR_EINVAL, "no accepting state is reachable within --max-len %d: every sentence of the %s%s needs more words",
		                   g->fsa.max_len, what, g->pre.n ? " after the prefix" : "");
	if (d > g->fsa.max_len)
		return llr_err_set(err, LLR_EINVAL, "no accepting state is reachable within --max-len %d: the shortest sentence of the %s%s needs %d words",
		                   g->fsa.max_len, what, g->pre.n ? " after the prefix" : "", d);
	g->fsa.q0 = q;
	return LLR_OK;
}

int llr_gen_start(llr_gen *g, const llr_sentence *prefix, llr_err *err)
{
	g->nres = 0;
	int rc = llr_family_check_utf8(g->m, "the prefix", 0, prefix, 1, err);
	if (rc < 0)
		return rc;
	rc = set_prefix(g, prefix, err);
	if (rc < 0 || (rc = fsa_prefix(g, err)) < 0 || (rc = g->ops->start(g, err)) < 0)
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
	int rc = llr_gen_constrain(g, h, row, g->fsa.V, err);
	if (rc < 0)
		return rc;
	if (g->o.no_unk && unk >= 0 && unk != eos)
		row[unk] = -INFINITY;
	if ((*id = llr_sample(s, &g->o.sample, row, &h->rng)) < 0)
		return llr_gen_no_word(g, h, 1, err);
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

/* ----------------------------------------------------------- automaton */

/* The prefix and h's words, for a message. */
static void fsa_context(const llr_gen *g, const llr_gen_hyp *h, llr_buf *b)
{
	for (size_t k = 0; k < g->pre.n; k++)
		llr_buf_printf(b, "%s%s", b->len ? " " : "", llr_gen_pword(g, k));
	for (size_t k = 0; k < h->n; k++)
		llr_buf_printf(b, "%s%s", b->len ? " " : "", h->ids[k] >= 0 ? g->ops->word(g, h->ids[k]) : "?");
	if (!b->len)
		llr_buf_printf(b, "<s>");
}

static int fsa_stuck(const llr_gen *g, const llr_gen_hyp *h, const char *why, llr_err *err)
{
	llr_buf b = {0};
	fsa_context(g, h, &b);
	llr_err_set(err, LLR_EINVAL, "after '%.200s': %s", b.data ? b.data : "", why);
	llr_buf_free(&b);
	return LLR_EINVAL;
}

int llr_gen_no_word(const llr_gen *g, const llr_gen_hyp *h, int by_no_unk, llr_err *err)
{
	if ((!g->fsa.a && !g->fsa.gt) || g->ops->source)
		return llr_err_set(err, LLR_EINVAL, "the model gives no finite log-probability to any word");
	char why[200];
	snprintf(why, sizeof why, "the model gives no token the %s allows a finite probability%s", fsa_what(g),
	         by_no_unk && g->o.no_unk ? " (--no-unk: not <unk>)" : "");
	return fsa_stuck(g, h, why, err);
}

/* The tokens the grammar allows in state q (weight 1), as fsa_allowed. */
static int32_t grammar_allowed(llr_gen *g, int32_t q, llr_err *err)
{
	int32_t n = 0;
	if (llr_gbnf_tok_final(g->fsa.gt, q)) {
		g->fsa.xs[n] = g->fsa.eos;
		g->fsa.to[n] = q;
		g->fsa.lw[n++] = 0;
	}
	const int32_t *lab, *dst;
	int32_t m = llr_gbnf_tok_arcs(g->fsa.gt, q, &lab, &dst, err);
	if (m < 0)
		return m;
	for (int32_t k = 0; k < m; k++)
		if (lab[k] < g->fsa.V) {
			g->fsa.xs[n] = lab[k];
			g->fsa.to[n] = dst[k];
			g->fsa.lw[n++] = 0;
		}
	return n;
}

/* An arc's or final state's ln weight w in the mask: 0 for the model's
 * own automaton, whose weights its distribution holds already (b_fsa is
 * a factor of its background). */
static float weight(const llr_gen *g, float w)
{
	return g->fsa.own ? 0.0f : w;
}

/* The tokens the automaton allows in state q with their next states and
 * ln weights, into g->fsa.xs, to and lw; their count.  q's arcs, then,
 * when it has a default arc, every other token but </s> and <s> to the
 * default's state (one pass over V beside the sorted arcs, not a query
 * per token: an intersection's cost one each). */
static int32_t fsa_allowed(llr_gen *g, int32_t q, llr_err *err)
{
	if (g->fsa.gt)
		return grammar_allowed(g, q, err);
	const llr_fsa *a = g->fsa.a;
	int32_t n = 0;
	float fw = llr_fsa_final(a, q), dw = 0;
	if (fw != -INFINITY) {
		g->fsa.xs[n] = g->fsa.eos;
		g->fsa.to[n] = q;
		g->fsa.lw[n++] = weight(g, fw);
	}
	const int32_t *lab, *dst;
	const float *lw;
	int32_t m = llr_fsa_arcs(a, q, &lab, &dst, &lw), def = llr_fsa_default(a, q, &dw);
	for (int32_t k = 0, x = 0; def >= 0 ? x < g->fsa.V : k < m; x++) {
		if (def < 0)
			x = lab[k]; /* the arcs alone */
		while (k < m && lab[k] < x)
			k++;
		int listed = k < m && lab[k] == x;
		int32_t to = listed ? dst[k] : def;
		if (to >= 0 && x < g->fsa.V && x != g->fsa.eos && x != g->fsa.bos) {
			g->fsa.xs[n] = x;
			g->fsa.to[n] = to;
			g->fsa.lw[n++] = weight(g, listed ? lw[k] : dw);
		}
		k += def < 0;
	}
	return n;
}

/* The log of the sum over the n tokens fsa_allowed put in g->fsa.xs of
 * p(x) w(q, x) (row: log p), by a running max; -inf when none has a
 * finite log p. */
static double allowed_lz(const llr_gen *g, int32_t n, const float *row)
{
	double mx = -INFINITY, sum = 0;
	for (int32_t k = 0; k < n; k++) {
		float r = row[g->fsa.xs[k]];
		if (!(r > -INFINITY))
			continue;
		double v = (double)r + (double)g->fsa.lw[k];
		if (v > mx) {
			sum = sum * exp(mx - v) + 1.0;
			mx = v;
		} else
			sum += exp(v - mx);
	}
	return mx > -INFINITY ? mx + log(sum) : -INFINITY;
}

int llr_gen_masks_prefix(const llr_gen *g)
{
	return constrained(&g->o) && !g->ops->source && (g->fsa.a || g->fsa.gt);
}

int llr_gen_prefix_mask(llr_gen *g, size_t k, const float *row, int32_t W, llr_err *err)
{
	if (!llr_gen_masks_prefix(g))
		return LLR_OK;
	LLR_ASSERT(k < g->pre.n && W >= g->fsa.V);
	int32_t n = fsa_allowed(g, g->fsa.pq[k], err), x = g->fsa.px[k];
	if (n < 0)
		return n;
	double lz = allowed_lz(g, n, row);
	float lp = -INFINITY;
	for (int32_t i = 0; i < n && lz > -INFINITY; i++)
		if (g->fsa.xs[i] == x && row[x] > -INFINITY)
			lp = (float)((double)row[x] + (double)g->fsa.lw[i] - lz);
	g->pre.lps[k] = lp;
	return LLR_OK;
}

int llr_gen_prefix_mask_rows(llr_gen *g, llr_gen_rows_fn rows, float *out, int32_t V, llr_err *err)
{
	int rc = LLR_OK;
	for (size_t k0 = 0; rc >= 0 && llr_gen_masks_prefix(g) && k0 < g->pre.n; k0 += LLR_GEN_BATCH) {
		size_t m = LLR_MIN(g->pre.n - k0, (size_t)LLR_GEN_BATCH);
		rc = rows(g->state, k0, m, out, err);
		for (size_t k = 0; rc >= 0 && k < m; k++)
			rc = llr_gen_prefix_mask(g, k0 + k, out + k * (size_t)V, V, err);
	}
	return rc;
}

int llr_gen_constrain(llr_gen *g, const llr_gen_hyp *h, float *row, int32_t W, llr_err *err)
{
	if ((!g->fsa.a && !g->fsa.gt) || g->ops->source) /* a source is not read by the automaton */
		return LLR_OK;
	int32_t q = g->fsa.q0;
	LLR_ASSERT(W >= g->fsa.V);
	for (size_t k = 0; k < h->n; k++) {
		int rc = h->ids[k] >= 0 ? fsa_next(g, q, h->ids[k], &q, err) : (q = -1, LLR_OK);
		if (rc < 0)
			return rc;
		LLR_ASSERT(q >= 0); /* the mask let only allowed words through */
	}
	int32_t n = fsa_allowed(g, q, err);
	if (n < 0)
		return n;
	double lz = allowed_lz(g, n, row);
	if (!(lz > -INFINITY)) { /* a family that masks <unk> itself (n-grams) under --no-unk */
		int unk_allowed = 0; /* fsa.unk is -1 without <unk>, never a token */
		for (int32_t k = 0; k < n; k++)
			unk_allowed |= g->fsa.xs[k] == g->fsa.unk;
		return llr_gen_no_word(g, h, unk_allowed, err);
	}
	int live = 0;
	int32_t room = g->fsa.max_len - (int32_t)h->n - 1; /* words left after this one */
	for (int32_t k = 0; k < n; k++) {
		int32_t x = g->fsa.xs[k];
		int32_t d = row[x] > -INFINITY && x != g->fsa.eos && room >= 0 ? fsa_dist(g, g->fsa.to[k], room, err) : 0;
		if (d < 0)
			return d;
		int ok = row[x] > -INFINITY && (x == g->fsa.eos || (room >= 0 && d <= room));
		g->fsa.lw[k] = ok ? (float)((double)row[x] + (double)g->fsa.lw[k] - lz) : -INFINITY;
		live += ok;
	}
	for (int32_t x = 0; x < W; x++)
		row[x] = -INFINITY;
	for (int32_t k = 0; k < n; k++)
		row[g->fsa.xs[k]] = g->fsa.lw[k];
	if (!live) {
		char why[128];
		snprintf(why, sizeof why, "no accepting state is reachable within --max-len %d", g->fsa.max_len);
		return fsa_stuck(g, h, why, err);
	}
	return LLR_OK;
}
