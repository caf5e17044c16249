/*
 * encdec_model.c - encoder-decoder model files (kind "model", meta
 * family=encdec, llrnn-model(5)): the target lexicon, the source side,
 * the network's configuration (meta) and weights (params/), and the
 * training state (trainstate.c); an output automaton (train
 * --output-fsa) is the lexicon's (fsa/ members, lib/fsa/fsaio.c).  Saving is atomic and byte-for-byte
 * reproducible as for language models (model.c); loading checks every
 * shape and weight.  Not here: training (lib/family/encdec/) or the
 * network (lib/nn/encdec.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FAMILY "encdec"

void llr_encdec_model_free(llr_encdec_model *m)
{
	if (!m)
		return;
	llr_encdec_free(m->net);
	llr_lexicon_free(m->lex);
	llr_source_free(m->src);
	llr_meta_free(m->meta);
	free(m);
}

/* ------------------------------------------------------------ the config */

static int get_int(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err)
{
	int64_t v;
	int rc = llr_meta_get_i64(meta, key, &v, err);
	if (rc < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)v, (long long)lo, (long long)hi);
	*out = (int32_t)v;
	return LLR_OK;
}

int llr_encdec_model_config(const llr_meta *meta, const llr_lexicon *x, const llr_source *s, llr_encdec_config *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	const char *out = llr_meta_get(meta, "output"), *att = llr_meta_get(meta, "attention");
	if (!out || (strcmp(out, "loglinear") && strcmp(out, "softmax")))
		return llr_err_set(err, LLR_EFORMAT, "meta: output=%s is neither loglinear nor softmax", out ? out : "(missing)");
	c->output = !strcmp(out, "softmax") ? LLR_OUT_SOFTMAX : LLR_OUT_LOGLINEAR;
	if (!att || !(c->attention = llr_attention_parse(att)))
		return llr_err_set(err, LLR_EFORMAT, "meta: attention=%s is not dot, bilinear or mlp", att ? att : "(missing)");
	int32_t primed;
	int rc;
	if ((rc = get_int(meta, "embed", 1, 1 << 20, &c->embed, err)) < 0 || (rc = get_int(meta, "hidden", 2, 1 << 20, &c->hidden, err)) < 0 ||
	    (rc = get_int(meta, "enc_layers", 1, 16, &c->enc_layers, err)) < 0 || (rc = get_int(meta, "attn_hidden", 0, 1 << 16, &c->attn_hidden, err)) < 0 ||
	    (rc = get_int(meta, "primed", 0, 1, &primed, err)) < 0)
		return rc;
	double p;
	if (llr_meta_get_f64(meta, "dropout", &p, NULL) < 0 || !(p >= 0.0 && p < 1.0))
		return llr_err_set(err, LLR_EFORMAT, "meta: dropout=%s: missing or out of range [0, 1)", llr_meta_get(meta, "dropout") ? llr_meta_get(meta, "dropout") : "(missing)");
	c->dropout = (float)p;
	c->primed = primed;
	if (primed && !s->table)
		return llr_err_set(err, LLR_EFORMAT, "meta: primed=1 but the source has no priming table (prime=none)");
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	c->src_vocab = s->psi->rows;
	c->src_feat = s->psi->cols;
	c->vocab = V;
	c->feat_out = c->output == LLR_OUT_SOFTMAX ? V : x->phi->cols;
	c->feat_in = c->output == LLR_OUT_SOFTMAX ? V : x->psi ? x->psi->cols
	                                                       : x->phi->cols;
	return LLR_OK;
}

/* llr_encdec_model_net, its weights left for llr_encdec_params_grow
 * when empty. */
static llr_encdec *model_net(const llr_encdec_config *c, const llr_lexicon *x, const llr_source *s, int empty, llr_err *err)
{
	int sm = c->output == LLR_OUT_SOFTMAX;
	if (x->bg && !sm)
		return llr_err_set(err, LLR_EINVAL, "an n-gram background (featurize --background ngram:) is for the LSTM language model; the encoder-decoder takes uniform, unigram or file backgrounds"), NULL;
	llr_encdec *net = (empty ? llr_encdec_new_empty : llr_encdec_new)(c, s->psi, sm ? NULL : x->phi, sm ? NULL : x->psi, sm ? NULL : x->logb, c->primed ? s->table : NULL, err);
	if (net && x->fsa && llr_encdec_set_fsa(net, x->fsa, err) < 0) {
		llr_encdec_free(net);
		return NULL;
	}
	return net;
}

llr_encdec *llr_encdec_model_net(const llr_encdec_config *c, const llr_lexicon *x, const llr_source *s, llr_err *err)
{
	return model_net(c, x, s, 0, err);
}

/* ------------------------------------------------------------- fitting */

static int same_names(const llr_strmap *a, const llr_strmap *b, const char *what, llr_err *err)
{
	size_t na = llr_strmap_size(a), nb = llr_strmap_size(b);
	if (na != nb)
		return llr_err_set(err, LLR_EFORMAT, "%s differ (%zu in the model, %zu here)", what, na, nb);
	for (size_t i = 0; i < na; i++)
		if (strcmp(llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i)))
			return llr_err_set(err, LLR_EFORMAT, "%s differ at %zu ('%s' in the model, '%s' here)", what, i, llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i));
	return LLR_OK;
}

int llr_encdec_model_fits(const llr_encdec_model *m, const llr_lexicon *x, const llr_source *s, llr_err *err)
{
	llr_rnnlm lm = {.lex = m->lex};
	int rc = llr_rnnlm_fits(&lm, x, err);
	if (rc < 0)
		return rc;
	const llr_source *y = m->src;
	if ((rc = same_names(y->vocab, s->vocab, "source vocabularies", err)) < 0 || (rc = same_names(y->features, s->features, "source features", err)) < 0)
		return rc;
	const llr_csr *a = y->psi, *b = s->psi;
	if (a->nnz != b->nnz || memcmp(a->indptr, b->indptr, ((size_t)a->rows + 1) * sizeof(int32_t)) ||
	    memcmp(a->indices, b->indices, (size_t)a->nnz * sizeof(int32_t)) || memcmp(a->data, b->data, (size_t)a->nnz * sizeof(float)))
		return llr_err_set(err, LLR_EFORMAT, "source psi differs");
	if (!y->table != !s->table)
		return llr_err_set(err, LLR_EFORMAT, "priming tables differ (%s in the model, %s here)", y->table ? "one" : "none", s->table ? "one" : "none");
	size_t n = (size_t)a->rows * llr_strmap_size(x->vocab);
	if (y->table && memcmp(y->table, s->table, n * sizeof(float)))
		return llr_err_set(err, LLR_EFORMAT, "priming tables differ");
	return LLR_OK;
}

/* -------------------------------------------------------------- saving */

static int derived_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "output", "attention", "embed", "hidden", "enc_layers", "attn_hidden", "dropout", "primed", "n_params", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return !strncmp(k, "source_", 7) || !strncmp(k, "prime", 5);
}

static int build_meta(const llr_encdec_model *m, llr_meta *meta)
{
	const llr_encdec_config *c = llr_encdec_cfg(m->net);
	size_t n;
	llr_encdec_params(m->net, &n);
	int rc = llr_lexicon_to_meta(m->lex, meta);
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!derived_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	if (rc < 0 || (rc = llr_meta_set(meta, "family", FAMILY)) < 0 ||
	    (rc = llr_meta_set(meta, "output", c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear")) < 0 ||
	    (rc = llr_meta_set(meta, "attention", llr_attention_name(c->attention))) < 0 ||
	    (rc = llr_meta_setf(meta, "embed", "%d", c->embed)) < 0 || (rc = llr_meta_setf(meta, "hidden", "%d", c->hidden)) < 0 ||
	    (rc = llr_meta_setf(meta, "enc_layers", "%d", c->enc_layers)) < 0 || (rc = llr_meta_setf(meta, "attn_hidden", "%d", c->attn_hidden)) < 0 ||
	    (rc = llr_meta_setf(meta, "dropout", "%.9g", (double)c->dropout)) < 0 || (rc = llr_meta_setf(meta, "primed", "%d", c->primed)) < 0 ||
	    (rc = llr_meta_setf(meta, "n_params", "%zu", n)) < 0 || (rc = llr_source_to_meta(m->src, meta)) < 0)
		return rc;
	llr_lexicon bare = *m->lex;
	bare.meta = NULL;
	return llr_lexicon_to_meta(&bare, meta);
}

static int write_model(llr_tensor_writer *w, const llr_encdec_model *m, const llr_train_state *ts, llr_err *err)
{
	int32_t V = (int32_t)llr_strmap_size(m->lex->vocab);
	int rc;
	if ((rc = llr_lexicon_write(w, m->lex, err)) < 0 || (rc = llr_source_write(w, m->src, V, err)) < 0)
		return rc;
	size_t n;
	float *cur = llr_encdec_params(m->net, &n);
	const float *par = ts && ts->best ? ts->best : cur;
	for (size_t i = 0; i < llr_encdec_n_tensors(m->net) && rc >= 0; i++) {
		const char *tn;
		int nd;
		int64_t shape[2];
		size_t off;
		char name[64];
		llr_encdec_tensor_info(m->net, i, &tn, &nd, shape, &off);
		snprintf(name, sizeof name, "params/%s", tn);
		rc = llr_tw_put_raw(w, name, LLR_F32, nd, shape, par + off, err);
	}
	if (rc < 0 || !ts)
		return rc;
	return llr_state_write(w, ts, cur, n, err);
}

static int build_meta_any(const void *m, llr_meta *meta)
{
	return build_meta(m, meta);
}

static int write_any(llr_tensor_writer *w, const void *m, const llr_train_state *ts, llr_err *err)
{
	return write_model(w, m, ts, err);
}

int llr_encdec_model_save(const char *path, const llr_encdec_model *m, const llr_train_state *ts, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta_any, write_any, ts, err);
}

/* ------------------------------------------------------------- loading */

static int prefixed(llr_err *err, const char *path)
{
	if (err && strncmp(err->msg, path, strlen(path)))
		llr_err_prefix(err, "%s", path);
	return llr_err_code(err, LLR_EFORMAT);
}

/* The params/ members into net's weights, grown as their data arrives
 * (a meta declaring a huge network over a short file allocates nothing
 * first); *name, *more: the member after. */
static int read_params(llr_tensor_reader *r, const char *path, llr_encdec *net, const char **name, int *more, llr_err *err)
{
	float *par;
	int rc;
	for (size_t i = 0; i < llr_encdec_n_tensors(net); i++) {
		const char *tn;
		int nd;
		int64_t shape[2];
		size_t off;
		char want[64];
		llr_encdec_tensor_info(net, i, &tn, &nd, shape, &off);
		snprintf(want, sizeof want, "params/%s", tn);
		if ((rc = llr_tr_next(r, name, err)) < 0)
			return rc;
		if (rc == 0)
			return llr_err_set(err, LLR_ETRUNC, "%s: truncated: %s missing", path, want);
		if (strcmp(*name, want))
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s where %s was expected", path, *name, want);
		llr_tensor *t = NULL;
		if ((rc = llr_tr_tensor_expect(r, LLR_F32, nd, shape, &t, err)) < 0)
			return rc;
		size_t cnt = llr_tensor_numel(t);
		const float *d = t->data;
		for (size_t k = 0; k < cnt; k++)
			if (!isfinite(d[k])) {
				llr_tensor_free(t);
				return llr_err_set(err, LLR_ENAN, "%s: %s: NaN weights", path, want);
			}
		if (!(par = llr_encdec_params_grow(net, off + cnt, err))) {
			llr_tensor_free(t);
			return prefixed(err, path);
		}
		memcpy(par + off, d, cnt * sizeof(float));
		llr_tensor_free(t);
	}
	size_t n;
	llr_encdec_params(net, &n);
	if (!llr_encdec_params_grow(net, n, err)) /* the gradients, and a net of no tensors */
		return prefixed(err, path);
	rc = llr_tr_next(r, name, err);
	*more = rc > 0;
	return rc < 0 ? rc : LLR_OK;
}

static int load(llr_tensor_reader *r, const char *path, llr_encdec_model *m, llr_train_state **tsp, llr_err *err)
{
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not an encoder-decoder (family=%s)", path, fam ? fam : "lm", FAMILY);
	int rc;
	if (!(m->meta = llr_meta_new()))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if ((rc = llr_meta_set(m->meta, k, v)) < 0)
			return llr_err_set(err, rc, "%s: out of memory", path);
	}
	if ((rc = llr_lexicon_read(r, &m->lex, err)) < 0)
		return prefixed(err, path);
	if ((rc = llr_source_read(r, (int32_t)llr_strmap_size(m->lex->vocab), &m->src, err)) < 0)
		return prefixed(err, path);
	llr_encdec_config c;
	if ((rc = llr_encdec_model_config(meta, m->lex, m->src, &c, err)) < 0)
		return prefixed(err, path);
	if (!(m->net = model_net(&c, m->lex, m->src, 1, err)))
		return prefixed(err, path);
	size_t n;
	llr_encdec_params(m->net, &n);
	int64_t np;
	if (llr_meta_get_i64(meta, "n_params", &np, NULL) < 0 || np != (int64_t)n)
		return llr_err_set(err, LLR_EFORMAT, "%s: n_params=%s but the configuration has %zu parameters", path, llr_meta_get(meta, "n_params") ? llr_meta_get(meta, "n_params") : "(missing)", n);
	const char *name = NULL;
	int more = 0;
	if ((rc = read_params(r, path, m->net, &name, &more, err)) < 0)
		return rc;
	return llr_state_tail(r, path, name, more, llr_encdec_params(m->net, NULL), n, tsp, err);
}

static int load_any(llr_tensor_reader *r, const char *path, void *m, llr_train_state **tsp, llr_err *err)
{
	return load(r, path, m, tsp, err);
}

static void free_any(void *m)
{
	llr_encdec_model_free(m);
}

int llr_encdec_model_load(const char *path, llr_encdec_model **out, llr_train_state **tsp, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load_any, free_any, &m, tsp, err);
	*out = m;
	return rc;
}
