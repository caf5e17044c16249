/*
 * senc_model.c - model files of the discourse sentence encoders
 * (llrnn-model(5), family "sentenc"): the meta (encoder, sizes, tasks,
 * CONJ class names), the lexicon whose vocabulary and input features the
 * encoder reads, params/<tensor> for every tensor of llr_senc_tensor
 * that the configuration has, and the training state (trainstate.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FAMILY "sentenc"

void llr_senc_model_free(llr_senc_model *m)
{
	if (!m)
		return;
	llr_senc_free(m->enc);
	llr_lexicon_free(m->lex);
	llr_meta_free(m->meta);
	free(m);
}

static int derived_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "encoder", "embed", "hidden", "tasks", "conj_classes", "n_params", "dropout", "word_dropout", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int build_meta(const llr_senc_model *m, llr_meta *meta)
{
	const llr_senc_config *c = llr_senc_cfg(m->enc);
	int rc = llr_lexicon_to_meta(m->lex, meta);
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!derived_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	if (rc < 0 || (rc = llr_meta_set(meta, "family", FAMILY)) < 0 ||
	    (rc = llr_meta_set(meta, "encoder", llr_senc_encoder_name(c->encoder))) < 0 ||
	    (rc = llr_meta_setf(meta, "embed", "%d", c->E)) < 0 || (rc = llr_meta_setf(meta, "hidden", "%d", c->H)) < 0 ||
	    (rc = llr_meta_setf(meta, "tasks", "%d", c->tasks)) < 0 ||
	    (rc = llr_meta_setf(meta, "dropout", "%g", (double)c->dropout)) < 0 ||
	    (rc = llr_meta_setf(meta, "word_dropout", "%g", (double)c->word_dropout)) < 0 ||
	    (rc = llr_meta_setf(meta, "n_params", "%zu", llr_senc_n_params(m->enc))) < 0)
		return rc;
	if (c->tasks & LLR_TASK_CONJ) {
		llr_buf b = {0};
		for (int k = 0; k < c->n_conj; k++)
			if (llr_buf_printf(&b, "%s%s", k ? "," : "", m->conj[k]) < 0) {
				llr_buf_free(&b);
				return LLR_ENOMEM;
			}
		rc = llr_meta_set(meta, "conj_classes", b.data);
		llr_buf_free(&b);
		if (rc < 0)
			return rc;
	}
	llr_lexicon bare = *m->lex;
	bare.meta = NULL;
	return llr_lexicon_to_meta(&bare, meta);
}

static int write_model(llr_tensor_writer *w, const llr_senc_model *m, const llr_train_state *ts, llr_err *err)
{
	int rc = llr_lexicon_write(w, m->lex, err);
	if (rc < 0)
		return rc;
	size_t n = llr_senc_n_params(m->enc);
	float *cur = llr_senc_params(m->enc);
	const float *par = ts && ts->best ? ts->best : cur;
	for (int i = 0; i < llr_senc_n_tensors() && rc >= 0; i++) {
		const char *tn;
		int64_t shape[2];
		size_t off = llr_senc_tensor(m->enc, i, &tn, shape);
		if (!shape[0])
			continue;
		char name[64];
		snprintf(name, sizeof name, "params/%s", tn);
		rc = llr_tw_put_raw(w, name, LLR_F32, 2, shape, par + off, err);
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

int llr_senc_model_save(const char *path, const llr_senc_model *m, const llr_train_state *ts, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta_any, write_any, ts, err);
}

int llr_senc_model_new(const char *features, llr_senc_model **out, llr_err *err)
{
	*out = NULL;
	llr_senc_model *m = llr_calloc(1, sizeof *m);
	if (!m || !(m->meta = llr_meta_new())) {
		free(m);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	llr_tensor_reader *r = llr_tr_open(features, "features", err);
	int rc = r ? llr_lexicon_read(r, &m->lex, err) : llr_err_code(err, LLR_EIO);
	llr_tr_close(r);
	if (rc < 0) {
		llr_senc_model_free(m);
		if (r && strncmp(err->msg, features, strlen(features)))
			llr_err_prefix(err, "%s", features);
		return rc;
	}
	llr_disc_conj_builtin(m->conj, &m->n_conj);
	*out = m;
	return LLR_OK;
}

/* ------------------------------------------------------------- loading */

static int prefixed(llr_err *err, const char *path)
{
	if (err && strncmp(err->msg, path, strlen(path)))
		llr_err_prefix(err, "%s", path);
	return llr_err_code(err, LLR_EFORMAT);
}

static int get_int(const llr_meta *meta, const char *path, const char *key, int64_t lo, int64_t hi, int *out, llr_err *err)
{
	int64_t v;
	if (llr_meta_get_i64(meta, key, &v, NULL) < 0 || v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "%s: %s=%s is not an integer in [%lld, %lld]", path, key,
		                   llr_meta_get(meta, key) ? llr_meta_get(meta, key) : "(missing)", (long long)lo, (long long)hi);
	*out = (int)v;
	return LLR_OK;
}

/* A probability in [0, 1) of key; 0 when the key is missing (a model
 * written before that kind of dropout existed has none). */
static int get_prob(const llr_meta *meta, const char *path, const char *key, float *out, llr_err *err)
{
	double p = 0;
	if (llr_meta_get(meta, key) && (llr_meta_get_f64(meta, key, &p, NULL) < 0 || !(p >= 0 && p < 1)))
		return llr_err_set(err, LLR_EFORMAT, "%s: %s=%s is not a probability in [0, 1)", path, key, llr_meta_get(meta, key));
	*out = (float)p;
	return LLR_OK;
}

static int parse_conj(llr_senc_model *m, const char *path, const char *list, llr_err *err)
{
	if (!list)
		return llr_err_set(err, LLR_EFORMAT, "%s: conj_classes missing", path);
	int n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	if (n < 2 || n > LLR_SENC_MAX_CONJ)
		return llr_err_set(err, LLR_EFORMAT, "%s: conj_classes: %d classes", path, n);
	const char *p = list;
	for (int k = 0; k < n; k++) {
		size_t len = strcspn(p, ",");
		if (!len || len >= sizeof m->conj[k])
			return llr_err_set(err, LLR_EFORMAT, "%s: conj_classes: bad class name", path);
		memcpy(m->conj[k], p, len);
		m->conj[k][len] = 0;
		p += len + (p[len] == ',');
	}
	m->n_conj = n;
	return LLR_OK;
}

/* A file written when the validation loss decided (no valid_criterion
 * in its meta): its best becomes the best epoch's error, the mean over
 * the tasks of 100 minus the accuracies its meta kept, so a resumed run
 * compares errors with an error. */
static void old_criterion(const llr_meta *meta, llr_train_state *ts)
{
	static const char *const acc_key[3] = {"valid_order_acc", "valid_next_acc", "valid_conj_acc"};
	if (llr_meta_get(meta, "valid_criterion") || !isfinite(ts->best_valid))
		return;
	double err = 0;
	int nt = 0;
	for (int t = 0; t < 3; t++) {
		double acc;
		if (llr_meta_get_f64(meta, acc_key[t], &acc, NULL) == LLR_OK && isfinite(acc)) {
			err += 100.0 - acc;
			nt++;
		}
	}
	ts->best_valid = nt ? err / nt : INFINITY;
}

static int load(llr_tensor_reader *r, const char *path, llr_senc_model *m, llr_train_state **tsp, llr_err *err)
{
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not a sentence encoder (family=%s)", path, fam ? fam : "lm", FAMILY);
	int rc;
	if (!(m->meta = llr_meta_new()))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if ((rc = llr_meta_set(m->meta, k, v)) < 0)
			return llr_err_set(err, rc, "%s: out of memory", path);
	}
	llr_senc_config c = {0};
	const char *enc = llr_meta_get(meta, "encoder");
	if (!enc || !(c.encoder = llr_senc_encoder_parse(enc)))
		return llr_err_set(err, LLR_EFORMAT, "%s: unknown encoder '%s'", path, enc ? enc : "(missing)");
	if ((rc = get_int(meta, path, "embed", 1, 65536, &c.E, err)) < 0 || (rc = get_int(meta, path, "hidden", 0, 65536, &c.H, err)) < 0 ||
	    (rc = get_int(meta, path, "tasks", 1, LLR_TASK_ALL, &c.tasks, err)) < 0)
		return rc;
	if ((c.tasks & LLR_TASK_CONJ) && (rc = parse_conj(m, path, llr_meta_get(meta, "conj_classes"), err)) < 0)
		return rc;
	if ((rc = get_prob(meta, path, "dropout", &c.dropout, err)) < 0 ||
	    (rc = get_prob(meta, path, "word_dropout", &c.word_dropout, err)) < 0)
		return rc;
	c.n_conj = m->n_conj;
	if ((rc = llr_lexicon_read(r, &m->lex, err)) < 0)
		return prefixed(err, path);
	/* the weights grow as their members arrive, never first from the meta */
	if (!(m->enc = llr_senc_new_empty(&c, m->lex->psi ? m->lex->psi : m->lex->phi, err)))
		return prefixed(err, path);
	size_t n = llr_senc_n_params(m->enc);
	float *cur;
	int64_t np;
	if (llr_meta_get_i64(meta, "n_params", &np, NULL) < 0 || np != (int64_t)n)
		return llr_err_set(err, LLR_EFORMAT, "%s: n_params does not match the configuration's %zu parameters", path, n);
	const char *name = NULL;
	for (int i = 0; i < llr_senc_n_tensors(); i++) {
		const char *tn;
		int64_t shape[2];
		size_t off = llr_senc_tensor(m->enc, i, &tn, shape);
		if (!shape[0])
			continue;
		char want[64];
		snprintf(want, sizeof want, "params/%s", tn);
		if ((rc = llr_tr_next(r, &name, err)) < 0)
			return rc;
		if (rc == 0)
			return llr_err_set(err, LLR_ETRUNC, "%s: truncated: %s missing", path, want);
		if (strcmp(name, want))
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s where %s was expected", path, name, want);
		llr_tensor *t = NULL;
		if ((rc = llr_tr_tensor_expect(r, LLR_F32, 2, shape, &t, err)) < 0)
			return rc;
		size_t cnt = llr_tensor_numel(t);
		const float *d = t->data;
		for (size_t k = 0; k < cnt; k++)
			if (!isfinite(d[k])) {
				llr_tensor_free(t);
				return llr_err_set(err, LLR_ENAN, "%s: %s: NaN weights", path, want);
			}
		if (!(cur = llr_senc_params_grow(m->enc, off + cnt, err))) {
			llr_tensor_free(t);
			return prefixed(err, path);
		}
		memcpy(cur + off, d, cnt * sizeof(float));
		llr_tensor_free(t);
	}
	if (!(cur = llr_senc_params_grow(m->enc, n, err))) /* the gradients; tensors of no rows */
		return prefixed(err, path);
	if ((rc = llr_tr_next(r, &name, err)) < 0)
		return rc;
	if ((rc = llr_state_tail(r, path, name, rc > 0, cur, n, tsp, err)) < 0 || !tsp || !*tsp)
		return rc;
	old_criterion(m->meta, *tsp);
	return LLR_OK;
}

static int load_any(llr_tensor_reader *r, const char *path, void *m, llr_train_state **tsp, llr_err *err)
{
	return load(r, path, m, tsp, err);
}

static void free_any(void *m)
{
	llr_senc_model_free(m);
}

int llr_senc_model_load(const char *path, llr_senc_model **out, llr_train_state **tsp, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load_any, free_any, &m, tsp, err);
	*out = m;
	return rc;
}
