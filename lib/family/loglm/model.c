/*
 * model.c - log-linear language model files (kind "model", meta
 * family=loglm, llrnn-model(5)) and new models: the lexicon, the
 * output and features in the meta (output, order, skip, bag, hash_size,
 * n_params; a file without output has the softmax), the weights as
 * params/bias (V), params/theta (hash_size) and with the log-linear
 * output params/alpha (hash_size), and the training state
 * (trainstate.c).  Saving is atomic and byte-for-byte
 * reproducible; loading checks every shape and weight.  Not here: the
 * scorer (lib/nn/maxent.c), training (train.c).
 */
#include "family/loglm/loglm.h"

#include <stdio.h>
#include <stdlib.h>

#define FAMILY "loglm"

void llr_loglm_free(llr_loglm *m)
{
	if (!m)
		return;
	llr_maxent_free(m->me);
	llr_lexicon_free(m->lex);
	llr_meta_free(m->meta);
	free(m);
}

int32_t loglm_word_id(const llr_loglm *m, const char *w, int *oov, llr_err *err)
{
	llr_rnnlm lm = {.lex = m->lex};
	return llr_rnnlm_target(&lm, w, strlen(w), oov, err);
}

/* The scorer over x, the log-linear output's phi and background x's
 * (output LLR_OUT_LOGLINEAR; else the softmax). */
static llr_maxent *scorer_of(int order, int skip, int bag, int64_t hash_size, int output, const llr_lexicon *x, int empty, llr_err *err)
{
	if (x->bg)
		return llr_err_set(err, LLR_EINVAL, "an n-gram background (featurize --background ngram:) is for the LSTM language model"), NULL;
	int ll = output == LLR_OUT_LOGLINEAR;
	llr_maxent_config c = {.vocab = (int32_t)llr_strmap_size(x->vocab), .unk = x->unk_id, .order = order, .skip = skip, .bag = bag,
	                       .hash_size = (uint64_t)hash_size, .phi = ll ? x->phi : NULL, .logb = ll ? x->logb : NULL};
	return (empty ? llr_maxent_new_empty : llr_maxent_new)(&c, err);
}

static int loglinear(const llr_maxent *me)
{
	return llr_maxent_cfg(me)->phi != NULL;
}

/* The weight tensors (two, three with the log-linear output): name,
 * length, offset in the parameters. */
static void tensor(const llr_maxent *me, int i, const char **name, int64_t *len, size_t *off)
{
	static const char *const names[] = {"params/bias", "params/theta", "params/alpha"};
	const llr_maxent_config *c = llr_maxent_cfg(me);
	*name = names[i];
	*len = i == 0 ? c->vocab : (int64_t)c->hash_size;
	*off = i == 0 ? 0 : (size_t)c->vocab + (size_t)(i - 1) * (size_t)c->hash_size;
}

/* ------------------------------------------------------------ saving */

static int own_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "output", "order", "skip", "bag", "hash_size", "n_params", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int build_meta(const void *mv, llr_meta *meta)
{
	const llr_loglm *m = mv;
	const llr_maxent_config *c = llr_maxent_cfg(m->me);
	size_t n;
	llr_maxent_params(m->me, &n);
	/* the lexicon's keys, m->meta's, the features, then the lexicon's own
	 * keys again (they win) */
	int rc = llr_lexicon_to_meta(m->lex, meta);
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!own_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	if (rc < 0)
		return rc;
	rc |= llr_meta_set(meta, "family", FAMILY);
	rc |= llr_meta_set(meta, "output", loglinear(m->me) ? "loglinear" : "softmax");
	rc |= llr_meta_setf(meta, "order", "%d", c->order);
	rc |= llr_meta_setf(meta, "skip", "%d", c->skip);
	rc |= llr_meta_setf(meta, "bag", "%d", c->bag);
	rc |= llr_meta_setf(meta, "hash_size", "%llu", (unsigned long long)c->hash_size);
	rc |= llr_meta_setf(meta, "n_params", "%zu", n);
	if (rc < 0)
		return LLR_ENOMEM;
	llr_lexicon bare = *m->lex;
	bare.meta = NULL;
	return llr_lexicon_to_meta(&bare, meta);
}

static int write_model(llr_tensor_writer *w, const void *mv, const llr_train_state *ts, llr_err *err)
{
	const llr_loglm *m = mv;
	int rc = llr_lexicon_write(w, m->lex, err);
	size_t n;
	float *cur = llr_maxent_params(m->me, &n);
	const float *par = ts && ts->best ? ts->best : cur;
	for (int i = 0; rc >= 0 && i < 2 + loglinear(m->me); i++) {
		const char *name;
		int64_t len;
		size_t off;
		tensor(m->me, i, &name, &len, &off);
		rc = llr_tw_put_raw(w, name, LLR_F32, 1, &len, par + off, err);
	}
	if (rc < 0 || !ts)
		return rc;
	return llr_state_write(w, ts, cur, n, err);
}

int llr_loglm_save(const char *path, const llr_loglm *m, const llr_train_state *ts, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta, write_model, ts, err);
}

/* ----------------------------------------------------------- loading */

static int get_int(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int64_t *out, llr_err *err)
{
	if (llr_meta_get_i64(meta, key, out, NULL) < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (*out < lo || *out > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)*out, (long long)lo, (long long)hi);
	return LLR_OK;
}

static llr_maxent *scorer_in(const llr_meta *meta, const llr_lexicon *x, llr_err *err)
{
	int64_t order, skip, bag, hs;
	const char *out = llr_meta_get(meta, "output");
	if (out && strcmp(out, "softmax") && strcmp(out, "loglinear"))
		return llr_err_set(err, LLR_EFORMAT, "meta: output=%s is neither softmax nor loglinear", out), NULL;
	if (get_int(meta, "order", 1, LLR_ME_MAX_ORDER, &order, err) < 0 || get_int(meta, "skip", 0, LLR_ME_MAX_ORDER, &skip, err) < 0 ||
	    get_int(meta, "bag", 0, 1, &bag, err) < 0 || get_int(meta, "hash_size", LLR_ME_CHUNK, 1ll << 31, &hs, err) < 0)
		return NULL;
	int output = out && !strcmp(out, "loglinear") ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
	return scorer_of((int)order, (int)skip, (int)bag, hs, output, x, 1, err);
}

/* The params/ members into the weights; *name, *more: the member after. */
static void param_tensor(const void *me, size_t i, llr_param_tensor *t)
{
	const char *name;
	int64_t len;
	tensor(me, (int)i, &name, &len, &t->off);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->nd = 1;
	t->shape[0] = len;
}

static float *grow(void *me, size_t n, llr_err *err)
{
	return llr_maxent_params_grow(me, n, err);
}

static int load(llr_tensor_reader *r, const char *path, void *mv, llr_train_state **tsp, llr_err *err)
{
	llr_loglm *m = mv;
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not a log-linear LM (family=%s)", path, fam ? fam : "lm", FAMILY);
	if (!(m->meta = llr_meta_new()))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	int rc = 0;
	for (size_t i = 0; rc >= 0 && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		rc = llr_meta_set(m->meta, k, v);
	}
	if (rc < 0)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	if (llr_lexicon_read(r, &m->lex, err) < 0 || !(m->me = scorer_in(meta, m->lex, err))) {
		if (strncmp(err->msg, path, strlen(path)))
			llr_err_prefix(err, "%s", path);
		return llr_err_code(err, LLR_EFORMAT);
	}
	/* the weights grow as their members arrive, never first from the meta */
	size_t n;
	llr_maxent_params(m->me, &n);
	llr_param_grow g = {grow, m->me};
	return llr_params_load(r, path, meta, m->me, 2 + (size_t)loglinear(m->me), param_tensor, NULL, n, &g, tsp, err);
}

static void free_any(void *m)
{
	llr_loglm_free(m);
}

int llr_loglm_load(const char *path, llr_loglm **out, llr_train_state **tsp, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load, free_any, &m, tsp, err);
	*out = m;
	return rc;
}

/* ------------------------------------------------------- a new model */

static int fresh_meta(llr_meta *m, const llr_loglm_setup *o, double lr)
{
	int rc = 0;
	rc |= llr_meta_set(m, "optim", llr_optim_name(o->optim));
	rc |= llr_meta_setf(m, "lr", "%g", lr);
	rc |= llr_meta_setf(m, "batch", "%d", o->batch);
	rc |= llr_meta_setf(m, "l2", "%.9g", o->l2);
	rc |= llr_meta_setf(m, "l1", "%.9g", o->l1);
	rc |= llr_meta_setf(m, "clip", "%.9g", o->clip);
	rc |= llr_meta_setf(m, "min_improvement", "%.9g", o->min_impr);
	rc |= llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_loglm_fresh(llr_lexicon *x, const llr_loglm_setup *o, llr_loglm **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	*tsp = NULL;
	if (o->output == LLR_OUT_LOGLINEAR && llr_csr_one_hot(x->phi))
		return llr_lm_featureless(err);
	llr_loglm *m = llr_calloc(1, sizeof *m);
	if (!m || !(m->meta = llr_meta_new())) {
		free(m);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	if (!(m->me = scorer_of(o->order, o->skip, o->bag, o->hash_size, o->output, x, 0, err))) {
		llr_loglm_free(m);
		return llr_err_code(err, LLR_EINVAL);
	}
	llr_rng init;
	size_t np;
	llr_maxent_params(m->me, &np);
	llr_train_state *ts = llr_train_state_fresh(o->seed, o->optim, o->lr, o->eps, np, &init, err);
	int rc = ts ? fresh_meta(m->meta, o, ts->lr) : llr_err_code(err, LLR_ENOMEM);
	if (rc < 0) {
		llr_err_set(err, rc, "out of memory");
		llr_train_state_free(ts);
		llr_loglm_free(m);
		return rc;
	}
	llr_maxent_init(m->me);
	m->lex = x;
	*out = m;
	*tsp = ts;
	return LLR_OK;
}
