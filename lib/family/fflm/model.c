/*
 * model.c - feed-forward language model files (kind "model", meta
 * family=fflm, llrnn-model(5)) and new models: the lexicon, the
 * network's configuration in the meta (output, order, embed, hidden,
 * layers, direct, dropout when not 0, n_params), its weights as params/<tensor> in
 * llr_ffnet_tensor_info order, and the training state (trainstate.c).
 * Saving is atomic and byte-for-byte reproducible; loading checks every
 * shape and weight.  Not here: the network (lib/nn/ffnet.c), training
 * (train.c).
 */
#include "family/fflm/fflm.h"

#include <stdio.h>
#include <stdlib.h>

#define FAMILY "fflm"

void llr_fflm_free(llr_fflm *m)
{
	if (!m)
		return;
	llr_ffnet_free(m->net);
	llr_lexicon_free(m->lex);
	llr_meta_free(m->meta);
	free(m);
}

int llr_fflm_fits(const llr_fflm *m, const llr_lexicon *x, llr_err *err)
{
	return llr_lexicon_same(m->lex, x, "the model", "here", err);
}

int32_t fflm_word_id(const llr_fflm *m, const char *w, int *oov, llr_err *err)
{
	llr_rnnlm lm = {.lex = m->lex};
	return llr_rnnlm_target(&lm, w, strlen(w), oov, err);
}

/* The network of configuration c over x, its weights left for
 * llr_ffnet_params_grow when empty. */
static llr_ffnet *net_of(const llr_ffnet_config *c, const llr_lexicon *x, int empty, llr_err *err)
{
	if (x->bg)
		return llr_err_set(err, LLR_EINVAL, "an n-gram background (featurize --background ngram:) is for the LSTM language model; the feed-forward model takes uniform, unigram or file backgrounds"), NULL;
	llr_ffnet_config k = *c;
	k.vocab = (int32_t)llr_strmap_size(x->vocab);
	int sm = c->output == LLR_OUT_SOFTMAX;
	return (empty ? llr_ffnet_new_empty : llr_ffnet_new)(&k, sm ? NULL : x->phi, sm ? NULL : x->psi, sm ? NULL : x->logb, err);
}

/* ------------------------------------------------------------ saving */

static int own_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "output", "order", "embed", "hidden", "layers", "direct", "dropout", "n_params", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int build_meta(const void *mv, llr_meta *meta)
{
	const llr_fflm *m = mv;
	const llr_ffnet_config *c = llr_ffnet_cfg(m->net);
	size_t n;
	llr_ffnet_params(m->net, &n);
	/* the lexicon's keys, m->meta's (newer than a loaded lexicon's copy),
	 * the configuration, then the lexicon's own keys again (they win) */
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
	rc |= llr_meta_set(meta, "output", c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear");
	rc |= llr_meta_setf(meta, "order", "%d", c->order);
	rc |= llr_meta_setf(meta, "embed", "%d", c->embed);
	rc |= llr_meta_setf(meta, "hidden", "%d", c->hidden);
	rc |= llr_meta_setf(meta, "layers", "%d", c->layers);
	rc |= llr_meta_setf(meta, "direct", "%d", c->direct);
	if (c->dropout > 0.0f)
		rc |= llr_meta_setf(meta, "dropout", "%.9g", (double)c->dropout);
	rc |= llr_meta_setf(meta, "n_params", "%zu", n);
	if (rc < 0)
		return LLR_ENOMEM;
	llr_lexicon bare = *m->lex;
	bare.meta = NULL;
	return llr_lexicon_to_meta(&bare, meta);
}

static int write_model(llr_tensor_writer *w, const void *mv, const llr_train_state *ts, llr_err *err)
{
	const llr_fflm *m = mv;
	int rc = llr_lexicon_write(w, m->lex, err);
	size_t n;
	float *cur = llr_ffnet_params(m->net, &n);
	const float *par = ts && ts->best ? ts->best : cur;
	for (size_t i = 0; rc >= 0 && i < llr_ffnet_n_tensors(m->net); i++) {
		const char *tn;
		int nd;
		int64_t shape[2];
		size_t off;
		char name[64];
		llr_ffnet_tensor_info(m->net, i, &tn, &nd, shape, &off);
		snprintf(name, sizeof name, "params/%s", tn);
		rc = llr_tw_put_raw(w, name, LLR_F32, nd, shape, par + off, err);
	}
	if (rc < 0 || !ts)
		return rc;
	return llr_state_write(w, ts, cur, n, err);
}

int llr_fflm_save(const char *path, const llr_fflm *m, const llr_train_state *ts, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta, write_model, ts, err);
}

/* ----------------------------------------------------------- loading */

static int get_int(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err)
{
	int64_t v;
	if (llr_meta_get_i64(meta, key, &v, NULL) < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)v, (long long)lo, (long long)hi);
	*out = (int32_t)v;
	return LLR_OK;
}

static int config(const llr_meta *meta, llr_ffnet_config *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	const char *out = llr_meta_get(meta, "output");
	if (!out || (strcmp(out, "loglinear") && strcmp(out, "softmax")))
		return llr_err_set(err, LLR_EFORMAT, "meta: output=%s is neither loglinear nor softmax", out ? out : "(missing)");
	c->output = !strcmp(out, "softmax") ? LLR_OUT_SOFTMAX : LLR_OUT_LOGLINEAR;
	int32_t direct;
	int rc;
	if ((rc = get_int(meta, "order", 2, LLR_FF_MAX_ORDER, &c->order, err)) < 0 || (rc = get_int(meta, "embed", 1, 1 << 20, &c->embed, err)) < 0 ||
	    (rc = get_int(meta, "hidden", 0, 1 << 20, &c->hidden, err)) < 0 || (rc = get_int(meta, "layers", 0, LLR_FF_MAX_LAYERS, &c->layers, err)) < 0 ||
	    (rc = get_int(meta, "direct", 0, 1, &direct, err)) < 0)
		return rc;
	c->direct = direct;
	/* a model without the key was trained without dropout */
	double p = 0.0;
	if (llr_meta_get(meta, "dropout") && (rc = llr_meta_get_f64(meta, "dropout", &p, err)) < 0)
		return rc;
	if (!(p >= 0.0 && p < 1.0))
		return llr_err_set(err, LLR_EFORMAT, "meta: dropout=%g out of range [0, 1)", p);
	c->dropout = (float)p;
	return LLR_OK;
}

/* The params/ members into the net's weights; *name, *more: the member
 * after them. */
static void param_tensor(const void *net, size_t i, llr_param_tensor *t)
{
	const char *tn;
	llr_ffnet_tensor_info(net, i, &tn, &t->nd, t->shape, &t->off);
	snprintf(t->name, sizeof t->name, "params/%s", tn);
}

static float *grow(void *net, size_t n, llr_err *err)
{
	return llr_ffnet_params_grow(net, n, err);
}

static int load(llr_tensor_reader *r, const char *path, void *mv, llr_train_state **tsp, llr_err *err)
{
	llr_fflm *m = mv;
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not a feed-forward LM (family=%s)", path, fam ? fam : "lm", FAMILY);
	if (!(m->meta = llr_meta_new()))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	int rc = 0;
	for (size_t i = 0; rc >= 0 && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		rc = llr_meta_set(m->meta, k, v);
	}
	llr_ffnet_config c;
	if (rc < 0)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	if (llr_lexicon_read(r, &m->lex, err) < 0 || config(meta, &c, err) < 0 || !(m->net = net_of(&c, m->lex, 1, err))) {
		if (strncmp(err->msg, path, strlen(path)))
			llr_err_prefix(err, "%s", path);
		return llr_err_code(err, LLR_EFORMAT);
	}
	/* the weights grow as their members arrive, never first from the meta */
	size_t n;
	llr_ffnet_params(m->net, &n);
	llr_param_grow g = {grow, m->net};
	return llr_params_load(r, path, meta, m->net, llr_ffnet_n_tensors(m->net), param_tensor, NULL, n, &g, tsp, err);
}

static void free_any(void *m)
{
	llr_fflm_free(m);
}

int llr_fflm_load(const char *path, llr_fflm **out, llr_train_state **tsp, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load, free_any, &m, tsp, err);
	*out = m;
	return rc;
}

/* ------------------------------------------------------- a new model */

static int fresh_meta(llr_meta *m, const llr_fflm_setup *o, double lr)
{
	int rc = 0;
	rc |= llr_meta_set(m, "optim", llr_optim_name(o->optim));
	rc |= llr_meta_setf(m, "lr", "%g", lr);
	rc |= llr_meta_setf(m, "batch", "%d", o->batch);
	rc |= llr_meta_setf(m, "clip", "%.9g", o->clip);
	rc |= llr_meta_setf(m, "min_improvement", "%.9g", o->min_impr);
	rc |= llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed);
	if (o->l2 > 0)
		rc |= llr_meta_setf(m, "l2", "%.17g", o->l2);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_fflm_fresh(llr_lexicon *x, const llr_fflm_setup *o, llr_fflm **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	*tsp = NULL;
	llr_ffnet_config c = {.order = o->order,
	                      .embed = o->embed,
	                      .hidden = o->hidden,
	                      .layers = o->layers,
	                      .direct = o->direct,
	                      .output = o->output,
	                      .dropout = (float)o->dropout};
	int plain = llr_csr_one_hot(x->phi) && llr_csr_one_hot(x->psi);
	if (c.output == LLR_OUT_LOGLINEAR && plain)
		return llr_lm_featureless(err);
	if (!c.output)
		c.output = plain ? LLR_OUT_SOFTMAX : LLR_OUT_LOGLINEAR;
	llr_fflm *m = llr_calloc(1, sizeof *m);
	if (!m || !(m->meta = llr_meta_new())) {
		free(m);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	if (!(m->net = net_of(&c, x, 0, err))) {
		llr_fflm_free(m);
		return llr_err_code(err, LLR_EINVAL);
	}
	llr_rng init;
	size_t np;
	llr_ffnet_params(m->net, &np);
	llr_train_state *ts = llr_train_state_fresh(o->seed, o->optim, o->lr, o->eps, np, &init, err);
	int rc = ts ? fresh_meta(m->meta, o, ts->lr) : llr_err_code(err, LLR_ENOMEM);
	if (rc < 0) {
		llr_err_set(err, rc, "out of memory");
		llr_train_state_free(ts);
		llr_fflm_free(m);
		return rc;
	}
	llr_ffnet_init(m->net, &init);
	m->lex = x;
	*out = m;
	*tsp = ts;
	return LLR_OK;
}
