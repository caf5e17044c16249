/*
 * encdec.c - encoder-decoders (family=encdec) behind llr_model
 * (family.h): they score a target given a source, so their operation is
 * llr_model_score_pairs, not llr_model_score.  A batch of pairs becomes
 * one llr_encdec_score call, time-major: the sources' ids then the
 * source </s> (S x B, padding 0), the decoder's input <s> then the
 * target words (T x B, padding </s>), its target the words then </s>
 * (padding -1); a word outside a vocabulary is that vocabulary's <unk>.
 * Under a decode-time mask (llr_model_mask_pairs, score --fsa) the pairs
 * are scored one by one, step by step (llr_encdec_force).  Generation
 * from a source (llr_gen, gen(1)) is gen.c's, over the same state
 * (encdec.h).
 */
#include "family/encdec/encdec.h"

#include <stdlib.h>

static void encdec_close(void *state)
{
	encdec *d = state;
	llr_encdec_model_free(d->e);
	free(d->src);
	free(d->slen);
	free(d->in);
	free(d->tgt);
	free(d->lp);
	llr_fsa_free(d->mask); /* before the automaton it may borrow */
	llr_fsa_free(d->mine);
	llr_encdec_state_free(d->one);
	free(d->ids);
	free(d);
}

static int encdec_open(llr_model *m, const char *path, llr_err *err)
{
	encdec *d = llr_calloc(1, sizeof *d);
	if (!d)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->state = d;
	return llr_encdec_model_load(path, &d->e, NULL, err);
}

static void encdec_describe(const llr_model *m, llr_model_info *info)
{
	const encdec *d = m->state;
	llr_family_describe_lex(d->e->lex, d->e->meta, "enc_layers", info);
}

static const llr_meta *encdec_meta(const llr_model *m)
{
	const encdec *d = m->state;
	return d->e->meta;
}

/* Room for S x B source ids and T x B decoder steps. */
static int ensure(encdec *d, size_t S, size_t T, size_t B)
{
	if (S * B > d->cap_s) {
		free(d->src);
		d->cap_s = (d->src = llr_reallocarray(NULL, S * B, sizeof *d->src)) ? S * B : 0;
	}
	if (T * B > d->cap_t) {
		free(d->in);
		free(d->tgt);
		free(d->lp);
		d->in = llr_reallocarray(NULL, T * B, sizeof *d->in);
		d->tgt = llr_reallocarray(NULL, T * B, sizeof *d->tgt);
		d->lp = llr_reallocarray(NULL, T * B, sizeof *d->lp);
		d->cap_t = d->in && d->tgt && d->lp ? T * B : 0;
	}
	if (B > d->cap_b) {
		free(d->slen);
		d->cap_b = (d->slen = llr_reallocarray(NULL, B, sizeof *d->slen)) ? B : 0;
	}
	return d->cap_s >= S * B && d->cap_t >= T * B && d->cap_b >= B ? LLR_OK : LLR_ENOMEM;
}

/* Pair b's columns: the source's ids, the target's (its oov flags at
 * oov[0 .. n]). */
static void fill_pair(encdec *d, const llr_sentence *src, const llr_sentence *tgt, size_t b, size_t B, size_t S, size_t T,
                      unsigned char *oov)
{
	const llr_source *sv = d->e->src;
	const llr_lexicon *x = d->e->lex;
	for (size_t j = 0; j < S; j++)
		d->src[j * B + b] = j < src->n ? llr_source_id(sv, src->words[j], strlen(src->words[j])) : j == src->n ? sv->eos_id : 0;
	d->slen[b] = (int32_t)src->n + 1;
	int32_t prev = LLR_BOS_ID;
	for (size_t t = 0; t < T; t++) {
		int32_t id = -1;
		if (t < tgt->n) {
			id = llr_strmap_get(x->vocab, tgt->words[t], strlen(tgt->words[t]));
			oov[t] = id < 0;
			id = id < 0 ? x->unk_id : id;
		} else if (t == tgt->n) {
			id = x->eos_id;
			oov[t] = 0;
		}
		d->in[t * B + b] = t <= tgt->n ? prev : x->eos_id;
		d->tgt[t * B + b] = id;
		prev = id;
	}
}

/* The mask of score --fsa, --regex or --grammar: the constraint given,
 * or on a model trained under an output automaton their intersection,
 * weighted by the one given alone (the model's log p holds its own
 * automaton's weights), as gen's search follows it. */
static int encdec_mask_pairs(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err)
{
	encdec *d = m->state;
	const llr_fsa *own = llr_encdec_fsa(d->e->net);
	llr_fsa *a = llr_fsa_constraint(fsa, regex, grammar, d->e->lex->vocab, &m->notice, err);
	if (!a)
		return llr_err_code(err, LLR_EFORMAT);
	llr_fsa *both = own ? llr_fsa_meet(own, a, err) : NULL;
	int rc = own && !both ? llr_err_prefix(err, "%s: the model's automaton and %s", m->path, fsa ? "--fsa" : regex ? "--regex" : "--grammar")
	                      : LLR_OK;
	if (rc >= 0 && !d->one && !(d->one = llr_encdec_state_new(d->e->net, 1)))
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0) {
		llr_fsa_free(both);
		llr_fsa_free(a);
		return rc;
	}
	llr_fsa_free(d->mask);
	llr_fsa_free(d->mine);
	d->mask = both ? both : a;
	d->mine = both ? a : NULL;
	return LLR_OK;
}

/* Room for n ids in d->ids. */
static int ids_room(encdec *d, size_t n)
{
	if (n <= d->cap_ids)
		return LLR_OK;
	int32_t *p = llr_reallocarray(d->ids, n, sizeof *p);
	if (!p)
		return LLR_ENOMEM;
	d->ids = p;
	d->cap_ids = n;
	return LLR_OK;
}

/* The pairs one by one under d->mask (llr_encdec_force). */
static int score_masked(encdec *d, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp, unsigned char *oov,
                        llr_err *err)
{
	const llr_source *sv = d->e->src;
	const llr_lexicon *x = d->e->lex;
	for (size_t b = 0, o = 0; b < B; o += tgt[b].n + 1, b++) {
		if (ids_room(d, LLR_MAX(src[b].n, tgt[b].n) + 1) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a pair of %zu and %zu tokens", src[b].n, tgt[b].n);
		for (size_t j = 0; j < src[b].n; j++)
			d->ids[j] = llr_source_id(sv, src[b].words[j], strlen(src[b].words[j]));
		d->ids[src[b].n] = sv->eos_id;
		int rc = llr_encdec_start(d->e->net, d->one, d->ids, (int)src[b].n + 1, err);
		if (rc < 0)
			return rc;
		for (size_t t = 0; t < tgt[b].n; t++) {
			int32_t id = llr_strmap_get(x->vocab, tgt[b].words[t], strlen(tgt[b].words[t]));
			oov[o + t] = id < 0;
			d->ids[t] = id < 0 ? x->unk_id : id;
		}
		oov[o + tgt[b].n] = 0;
		if ((rc = llr_encdec_force(d->e->net, d->one, d->ids, (int)tgt[b].n, x->eos_id, d->mask, logp + o, err)) < 0)
			return rc;
	}
	return LLR_OK;
}

static int encdec_score_pairs(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
                              unsigned char *oov, llr_err *err)
{
	encdec *d = m->state;
	if (d->mask)
		return score_masked(d, src, tgt, B, logp, oov, err);
	size_t S = 0, T = 0;
	for (size_t b = 0; b < B; b++) {
		S = LLR_MAX(S, src[b].n + 1);
		T = LLR_MAX(T, tgt[b].n + 1);
	}
	if (ensure(d, S, T, B) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu pairs", B);
	for (size_t b = 0, o = 0; b < B; o += tgt[b].n + 1, b++)
		fill_pair(d, &src[b], &tgt[b], b, B, S, T, oov + o);
	llr_encdec_batch bt = {.B = (int)B, .S = (int)S, .T = (int)T, .src = d->src, .src_len = d->slen, .input = d->in, .target = d->tgt};
	int rc = llr_encdec_score(d->e->net, &bt, d->lp, NULL, err);
	if (rc < 0)
		return rc;
	for (size_t b = 0, o = 0; b < B; b++)
		for (size_t t = 0; t <= tgt[b].n; t++, o++)
			logp[o] = (double)d->lp[t * B + b];
	return LLR_OK;
}

const llr_family llr_family_encdec = {
	.name = "encdec",
	.what = "encoder-decoder models",
	.instead = "they score pairs: llr_model_score_pairs, score --source",
	.family_key = "encdec",
	.open = encdec_open,
	.close = encdec_close,
	.describe = encdec_describe,
	.meta = encdec_meta,
	.score_pairs = encdec_score_pairs,
	.mask_pairs = encdec_mask_pairs,
	.gen = &llr_encdec_gen_ops,
	.train = &llr_encdec_train_ops,
	.trainer = &llr_encdec_trainer,
};
