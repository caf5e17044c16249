/*
 * setup.c - an encoder-decoder set up for training (lib/llrnn.h,
 * llr_encdec_setup): the training stream read (lexicon, source side,
 * pairs), a new model built, primed, seeded and given its optimiser, or
 * a saved one resumed (the options it fixes checked against its meta, the
 * stream's sides against its own).  The training itself is the job of
 * train.c under lib/train's driver.
 */
#include "family/family.h"

#include <stdio.h>
#include <stdlib.h>

int llr_encdec_stream_has_source(const char *path)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	if (!r)
		return 0;
	int yes = llr_meta_get(llr_tr_meta(r), "source_vocab_size") != NULL;
	llr_tr_close(r);
	return yes;
}

int llr_encdec_stream_read(const char *path, const char *name, int max_len, llr_lexicon **x, llr_source **s,
                           llr_encdec_pairs *p, llr_err *err)
{
	*x = NULL;
	*s = NULL;
	llr_tensor_reader *r = llr_tr_open(path, "features", err);
	if (!r)
		return llr_err_code(err, LLR_EIO);
	int rc = LLR_OK;
	if (!llr_meta_get(llr_tr_meta(r), "source_vocab_size"))
		rc = llr_err_set(err, LLR_EFORMAT,
		                 "%s: no source side: not made by featurize --source (an encoder-decoder needs parallel data)", name);
	else if ((rc = llr_lexicon_read(r, x, err)) < 0 || (rc = llr_source_read(r, (int32_t)llr_strmap_size((*x)->vocab), s, err)) < 0) {
		if (strncmp(err->msg, name, strlen(name)))
			llr_err_prefix(err, "%s", name);
	} else
		rc = llr_encdec_pairs_read(r, name, *x, *s, max_len, p, err);
	llr_tr_close(r);
	if (rc < 0) {
		llr_lexicon_free(*x);
		llr_source_free(*s);
		*x = NULL;
		*s = NULL;
	}
	return rc;
}

/* s's priming table from the training pairs tp, estimated with iters
 * and k. */
static int prime(llr_source *s, const llr_lexicon *x, const llr_encdec_pairs *tp, int iters, double k, llr_err *err)
{
	int32_t Vs = (int32_t)llr_strmap_size(s->vocab), V = (int32_t)llr_strmap_size(x->vocab);
	free(s->table);
	if (!(s->table = llr_calloc((size_t)Vs * (size_t)V, sizeof *s->table)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the priming table");
	int rc = llr_prime_table(Vs, V, tp->n, tp->src, tp->soff, tp->tgt, tp->toff, iters, k, s->table, err);
	if (rc < 0)
		return rc;
	s->prime_iters = iters;
	s->prime_k = k;
	return LLR_OK;
}

/* The meta train --resume reads back. */
static int fresh_meta(llr_meta *m, const llr_encdec_setup *o, double lr)
{
	int rc = llr_meta_set(m, "optim", llr_optim_name(o->optim));
	rc |= llr_meta_setf(m, "lr", "%g", lr);
	rc |= llr_meta_setf(m, "batch", "%d", o->batch);
	rc |= llr_meta_setf(m, "max_len", "%d", o->max_len);
	rc |= llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_encdec_fresh(const llr_encdec_setup *o, llr_lexicon *x, llr_source *s, const llr_encdec_pairs *tp,
                     llr_encdec_model **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	*tsp = NULL;
	int output = o->output ? o->output : LLR_OUT_LOGLINEAR, sm = output == LLR_OUT_SOFTMAX;
	if (sm && o->prime)
		return llr_err_set(err, LLR_EINVAL, "--prime table: the background of a softmax output is uniform; use --output loglinear");
	int rc = o->prime ? prime(s, x, tp, o->prime_iters, o->prime_k, err) : LLR_OK;
	if (rc < 0)
		return rc;
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	llr_encdec_config c = {
	    .src_vocab = s->psi->rows,
	    .src_feat = s->psi->cols,
	    .vocab = V,
	    .feat_out = sm ? V : x->phi->cols,
	    .feat_in = sm ? V : x->psi ? x->psi->cols : x->phi->cols,
	    .embed = o->embed,
	    .hidden = o->hidden,
	    .enc_layers = o->enc_layers,
	    .attn_hidden = o->attn_hidden,
	    .attention = o->attention,
	    .output = output,
	    .primed = o->prime,
	    .dropout = (float)o->dropout,
	};
	llr_encdec_model *m = llr_calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	llr_train_state *ts = NULL;
	llr_rng init;
	size_t np;
	if (!(m->net = llr_encdec_model_net(&c, x, s, err)))
		rc = llr_err_code(err, LLR_EINVAL);
	else if (!(m->meta = llr_meta_new()))
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	else if (llr_encdec_params(m->net, &np), !(ts = llr_train_state_fresh(o->seed, o->optim, o->lr, o->eps, np, &init, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	else if ((rc = fresh_meta(m->meta, o, ts->lr)) < 0)
		llr_err_set(err, rc, "out of memory");
	if (rc < 0) {
		llr_train_state_free(ts);
		llr_encdec_model_free(m); /* x and s are not its own yet */
		return rc;
	}
	llr_encdec_init(m->net, &init);
	m->lex = x;
	m->src = s;
	*out = m;
	*tsp = ts;
	return LLR_OK;
}

/* Field f of o as the meta writes it. */
static void field_value(const llr_encdec_setup *o, int f, char *want, size_t n)
{
	switch (1u << f) {
	case LLR_EDS_OUTPUT: snprintf(want, n, "%s", o->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear"); break;
	case LLR_EDS_ATTENTION: snprintf(want, n, "%s", llr_attention_name(o->attention)); break;
	case LLR_EDS_EMBED: snprintf(want, n, "%d", o->embed); break;
	case LLR_EDS_HIDDEN: snprintf(want, n, "%d", o->hidden); break;
	case LLR_EDS_ENC_LAYERS: snprintf(want, n, "%d", o->enc_layers); break;
	case LLR_EDS_ATTN_HIDDEN: snprintf(want, n, "%d", o->attn_hidden); break;
	case LLR_EDS_DROPOUT: snprintf(want, n, "%.9g", (double)(float)o->dropout); break;
	case LLR_EDS_BATCH: snprintf(want, n, "%d", o->batch); break;
	case LLR_EDS_MAX_LEN: snprintf(want, n, "%d", o->max_len); break;
	case LLR_EDS_OPTIM: snprintf(want, n, "%s", llr_optim_name(o->optim)); break;
	case LLR_EDS_PRIME: snprintf(want, n, "%d", o->prime); break;
	case LLR_EDS_SEED: snprintf(want, n, "%llu", (unsigned long long)o->seed); break;
	}
}

/* The fields of given must be the meta's: the first that is not, into *bad. */
static int check_fixed(const llr_encdec_setup *o, unsigned given, const llr_meta *m, int *bad, llr_err *err)
{
	static const char *const key[LLR_EDS_NFIXED] = {"output", "attention", "embed", "hidden", "enc_layers", "attn_hidden",
	                                                "dropout", "batch", "max_len", "optim", "primed", "seed"};
	char want[64];
	for (int f = 0; f < LLR_EDS_NFIXED; f++) {
		if (!(given & 1u << f))
			continue;
		field_value(o, f, want, sizeof want);
		const char *have = llr_meta_get(m, key[f]);
		if (!have || strcmp(have, want)) {
			*bad = f;
			return llr_err_set(err, LLR_EINVAL, "%s=%s", key[f], have ? have : "(none)");
		}
	}
	return LLR_OK;
}

int llr_encdec_resume(const char *path, llr_encdec_setup *o, unsigned given, llr_encdec_model **out, llr_train_state **tsp,
                      int *bad, llr_err *err)
{
	llr_encdec_model *m = NULL;
	llr_train_state *ts = NULL;
	*bad = -1;
	int rc = llr_encdec_model_load(path, &m, &ts, err);
	if (rc < 0)
		return rc;
	if (!ts || !ts->optim)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no training state to resume from", path);
	else if ((rc = check_fixed(o, given, m->meta, bad, err)) == LLR_OK) {
		double v;
		if (llr_meta_get_f64(m->meta, "batch", &v, NULL) == LLR_OK)
			o->batch = (int)v;
		if (llr_meta_get_f64(m->meta, "max_len", &v, NULL) == LLR_OK)
			o->max_len = (int)v;
		o->dropout = llr_encdec_cfg(m->net)->dropout;
		if (o->batch < 1 || o->max_len < 1)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: bad batch or max_len in meta", path);
	}
	if (rc < 0) {
		llr_train_state_free(ts);
		llr_encdec_model_free(m);
		return rc;
	}
	*out = m;
	*tsp = ts;
	return LLR_OK;
}

int llr_encdec_resume_sides(llr_encdec_model *m, const char *path, llr_lexicon *x, llr_source *s, const char *name,
                            const llr_encdec_pairs *tp, llr_err *err)
{
	/* the same table from the same pairs */
	int rc = m->src->table ? prime(s, x, tp, m->src->prime_iters, m->src->prime_k, err) : LLR_OK;
	/* the automaton is the model's own (train --output-fsa), not the stream's */
	llr_lexicon bare = *m->lex;
	bare.fsa = x->fsa ? m->lex->fsa : NULL;
	llr_encdec_model own = *m;
	own.lex = &bare;
	if (rc == LLR_OK && (rc = llr_encdec_model_fits(&own, x, s, err)) < 0)
		llr_err_prefix(err, "%s: does not fit %s", path, name);
	llr_lexicon_free(x);
	llr_source_free(s);
	return rc;
}
