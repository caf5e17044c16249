/*
 * model.c - model files (kind "model", llrnn-model(5)): saving a trained
 * network with its lexicon and training state, loading it back with every
 * shape and weight checked, and checking that a features stream is the one
 * a model was trained on.  It does no training (tools/train.c) and no
 * arithmetic beyond checks (net.c).
 *
 * Layout: meta; the lexicon members (llr_lexicon_write); params/<name>
 * float32 in llr_net_tensor_info order; then, for --resume, state/info
 * (text key=value), state/rng (int64 2x4), state/optim/<buffer> and
 * state/weights (float32, n parameters).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MODEL_KIND "model"

void llr_model_free(llr_model *m)
{
	if (!m)
		return;
	llr_net_free(m->net);
	llr_lexicon_free(m->lex);
	llr_meta_free(m->meta);
	free(m);
}

void llr_train_state_free(llr_train_state *s)
{
	if (!s)
		return;
	llr_optim_free(s->optim);
	free(s->best);
	free(s);
}

/* ----------------------------------------------------------- the config */

static const char *output_name(int output)
{
	return output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear";
}

static int get_dim(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err)
{
	int64_t v;
	int rc = llr_meta_get_i64(meta, key, &v, err);
	if (rc < 0)
		return rc;
	if (v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)v, (long long)lo, (long long)hi);
	*out = (int32_t)v;
	return LLR_OK;
}

int llr_model_config(const llr_meta *meta, const llr_lexicon *x, llr_net_config *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	const char *out = llr_meta_get(meta, "output");
	if (!out)
		return llr_err_set(err, LLR_EFORMAT, "meta: missing key 'output'");
	if (!strcmp(out, "loglinear"))
		c->output = LLR_OUT_LOGLINEAR;
	else if (!strcmp(out, "softmax"))
		c->output = LLR_OUT_SOFTMAX;
	else
		return llr_err_set(err, LLR_EFORMAT, "meta: output=%s is neither loglinear nor softmax", out);
	int rc;
	if ((rc = get_dim(meta, "embed", 1, 1 << 20, &c->embed, err)) < 0 ||
	    (rc = get_dim(meta, "hidden", 1, 1 << 20, &c->hidden, err)) < 0 ||
	    (rc = get_dim(meta, "layers", 1, 64, &c->layers, err)) < 0)
		return rc;
	double p;
	if ((rc = llr_meta_get_f64(meta, "dropout", &p, err)) < 0)
		return rc;
	if (!(p >= 0.0 && p < 1.0))
		return llr_err_set(err, LLR_EFORMAT, "meta: dropout=%g out of range [0, 1)", p);
	c->dropout = (float)p;
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	c->vocab = V;
	if (c->output == LLR_OUT_SOFTMAX) {
		c->feat_out = c->feat_in = V;
	} else {
		c->feat_out = x->phi->cols;
		c->feat_in = x->psi ? x->psi->cols : x->phi->cols;
	}
	return LLR_OK;
}

/* ------------------------------------------------------------- fitting */

static int same_strmap(const llr_strmap *a, const llr_strmap *b, const char *what, llr_err *err)
{
	size_t na = llr_strmap_size(a), nb = llr_strmap_size(b);
	if (na != nb)
		return llr_err_set(err, LLR_EFORMAT, "%s differ (%zu in the model, %zu here)", what, na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t la = llr_strmap_len(a, (int32_t)i), lb = llr_strmap_len(b, (int32_t)i);
		if (la != lb || memcmp(llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i), la))
			return llr_err_set(err, LLR_EFORMAT, "%s differ at %zu ('%s' in the model, '%s' here)", what, i, llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i));
	}
	return LLR_OK;
}

static int same_csr(const llr_csr *a, const llr_csr *b)
{
	if (!a || !b)
		return a == b;
	return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
	       !memcmp(a->indptr, b->indptr, ((size_t)a->rows + 1) * sizeof(int32_t)) &&
	       !memcmp(a->indices, b->indices, (size_t)a->nnz * sizeof(int32_t)) &&
	       !memcmp(a->data, b->data, (size_t)a->nnz * sizeof(float));
}

int llr_model_fits(const llr_model *m, const llr_lexicon *x, llr_err *err)
{
	const llr_lexicon *y = m->lex;
	int rc;
	if ((rc = same_strmap(y->vocab, x->vocab, "vocabularies", err)) < 0)
		return rc;
	if ((rc = same_strmap(y->features, x->features, "output features", err)) < 0)
		return rc;
	if (!y->features_in != !x->features_in)
		return llr_err_set(err, LLR_EFORMAT, "input features differ (psi %s in the model, %s here)", y->features_in ? "own" : "same", x->features_in ? "own" : "same");
	if (y->features_in && (rc = same_strmap(y->features_in, x->features_in, "input features", err)) < 0)
		return rc;
	if (!same_csr(y->phi, x->phi))
		return llr_err_set(err, LLR_EFORMAT, "phi differs");
	if (!same_csr(y->psi, x->psi))
		return llr_err_set(err, LLR_EFORMAT, "psi differs");
	size_t V = llr_strmap_size(x->vocab);
	if (memcmp(y->logb, x->logb, V * sizeof(float)))
		return llr_err_set(err, LLR_EFORMAT, "background differs");
	if (y->eos_id != x->eos_id || y->unk_id != x->unk_id)
		return llr_err_set(err, LLR_EFORMAT, "</s> or <unk> ids differ");
	return LLR_OK;
}

/* -------------------------------------------------------------- saving */

/* Keys the writer computes itself, never copied from m->meta. */
static int derived_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "output", "embed", "hidden", "layers", "dropout", "n_params", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int put_f32(llr_tensor_writer *w, const char *name, int ndim, const int64_t *shape, const float *data, llr_err *err)
{
	return llr_tw_put_raw(w, name, LLR_F32, ndim, shape, data, err);
}

static int fmt_double(llr_buf *b, const char *key, double v)
{
	if (isinf(v))
		return llr_buf_printf(b, "%s=%s\n", key, v > 0 ? "inf" : "-inf");
	return llr_buf_printf(b, "%s=%.17g\n", key, v);
}

static int state_info(const llr_train_state *ts, llr_buf *b)
{
	int rc = 0;
	rc |= llr_buf_printf(b, "epoch=%lld\nbatch=%lld\nstep=%lld\n", (long long)ts->epoch, (long long)ts->batch, (long long)ts->step);
	rc |= fmt_double(b, "epoch_nll", ts->epoch_nll);
	rc |= llr_buf_printf(b, "epoch_tok=%lld\n", (long long)ts->epoch_tok);
	rc |= fmt_double(b, "best_valid", ts->best_valid);
	rc |= llr_buf_printf(b, "best_epoch=%lld\n", (long long)ts->best_epoch);
	rc |= fmt_double(b, "last_valid", ts->last_valid);
	rc |= llr_buf_printf(b, "bad_epochs=%lld\nhalving=%d\nconverged=%d\n", (long long)ts->bad_epochs, ts->halving, ts->converged);
	rc |= fmt_double(b, "lr", ts->lr);
	if (ts->optim) {
		const llr_optim_config *c = llr_optim_cfg(ts->optim);
		rc |= llr_buf_printf(b, "optim=%s\n", llr_optim_name(c->kind));
		rc |= fmt_double(b, "optim_lr", c->lr);
		rc |= fmt_double(b, "optim_alpha", c->alpha);
		rc |= fmt_double(b, "optim_beta1", c->beta1);
		rc |= fmt_double(b, "optim_beta2", c->beta2);
		rc |= fmt_double(b, "optim_eps", c->eps);
		rc |= llr_buf_printf(b, "optim_steps=%lld\n", (long long)llr_optim_steps(ts->optim));
	}
	return rc ? LLR_ENOMEM : LLR_OK;
}

static int write_model(llr_tensor_writer *w, const llr_model *m, const llr_train_state *ts, llr_err *err)
{
	int rc = llr_lexicon_write(w, m->lex, err);
	if (rc < 0)
		return rc;
	llr_net *net = m->net;
	size_t n;
	float *cur = llr_net_params(net, &n);
	const float *par = ts && ts->best ? ts->best : cur;
	llr_buf name = {0};
	for (size_t i = 0; i < llr_net_n_tensors(net) && rc >= 0; i++) {
		const char *tn;
		int nd;
		int64_t shape[2];
		size_t off;
		llr_net_tensor_info(net, i, &tn, &nd, shape, &off);
		llr_buf_clear(&name);
		if (llr_buf_printf(&name, "params/%s", tn) < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		else
			rc = put_f32(w, name.data, nd, shape, par + off, err);
	}
	llr_buf_free(&name);
	if (rc < 0 || !ts)
		return rc;

	llr_buf info = {0};
	if (state_info(ts, &info) < 0) {
		llr_buf_free(&info);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	rc = llr_tw_put_text(w, "state/info", info.data, info.len, err);
	llr_buf_free(&info);
	if (rc < 0)
		return rc;
	int64_t rng[8];
	for (int i = 0; i < 4; i++) {
		memcpy(&rng[i], &ts->rng_epoch.s[i], 8);
		memcpy(&rng[4 + i], &ts->rng.s[i], 8);
	}
	int64_t rshape[2] = {2, 4};
	if ((rc = llr_tw_put_raw(w, "state/rng", LLR_I64, 2, rshape, rng, err)) < 0)
		return rc;
	int64_t shape[1] = {(int64_t)n};
	if (ts->optim) {
		if (llr_optim_size(ts->optim) != n)
			return llr_err_set(err, LLR_EINVAL, "optimiser: %zu parameters, the net has %zu", llr_optim_size(ts->optim), n);
		char buf[64];
		for (size_t k = 0; k < llr_optim_n_state(ts->optim); k++) {
			const char *bn;
			float *s = llr_optim_state(ts->optim, k, &bn);
			snprintf(buf, sizeof buf, "state/optim/%s", bn);
			if ((rc = put_f32(w, buf, 1, shape, s, err)) < 0)
				return rc;
		}
	}
	if (ts->best)
		rc = put_f32(w, "state/weights", 1, shape, cur, err);
	return rc;
}

int llr_model_save(const char *path, const llr_model *m, const llr_train_state *ts, llr_err *err)
{
	const llr_net_config *c = llr_net_cfg(m->net);
	llr_meta *meta = llr_meta_new();
	if (!meta)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	size_t n;
	llr_net_params(m->net, &n);
	/* The lexicon's keys, then m->meta's (hyperparameters and summary,
	 * newer than what a loaded lexicon carries), then the configuration,
	 * which only the net knows. */
	int rc = llr_lexicon_to_meta(m->lex, meta);
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!derived_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	if (rc >= 0)
		rc = llr_meta_set(meta, "output", output_name(c->output));
	if (rc >= 0)
		rc = llr_meta_setf(meta, "embed", "%d", (int)c->embed);
	if (rc >= 0)
		rc = llr_meta_setf(meta, "hidden", "%d", (int)c->hidden);
	if (rc >= 0)
		rc = llr_meta_setf(meta, "layers", "%d", (int)c->layers);
	if (rc >= 0)
		rc = llr_meta_setf(meta, "dropout", "%.9g", (double)c->dropout);
	if (rc >= 0)
		rc = llr_meta_setf(meta, "n_params", "%zu", n);
	if (rc >= 0) {
		/* The lexicon's own keys win (not its copy of older keys). */
		llr_lexicon bare = *m->lex;
		bare.meta = NULL;
		rc = llr_lexicon_to_meta(&bare, meta);
	}
	if (rc < 0) {
		llr_meta_free(meta);
		return llr_err_set(err, rc, "%s: cannot build the meta member (%s)", path, llr_strerror(rc));
	}
	llr_tensor_writer *w = llr_tw_open(path, MODEL_KIND, meta, err);
	llr_meta_free(meta);
	if (!w)
		return llr_err_code(err, LLR_EIO);
	rc = write_model(w, m, ts, err);
	if (rc < 0) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, err);
}

/* ------------------------------------------------------------- loading */

typedef struct loader {
	const char *path;
	llr_tensor_reader *r;
	const char *name; /* current member */
	int more;         /* 1 while name is valid */
} loader;

static int next(loader *L, llr_err *err)
{
	int rc = llr_tr_next(L->r, &L->name, err);
	if (rc < 0)
		return rc;
	L->more = rc;
	return LLR_OK;
}

/* Message for a data error in member `what` of the file. */
static int bad(loader *L, int code, const char *what, const char *reason, llr_err *err)
{
	return llr_err_set(err, code, "%s: %s: %s", L->path, what, reason);
}

static int all_finite(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Read the current member as float32 of the given shape into dst. */
static int read_f32(loader *L, int ndim, const int64_t *shape, float *dst, size_t n, llr_err *err)
{
	llr_tensor *t = NULL;
	int rc = llr_tr_tensor_expect(L->r, LLR_F32, ndim, shape, &t, err);
	if (rc < 0)
		return rc;
	LLR_ASSERT(llr_tensor_numel(t) == n);
	memcpy(dst, t->data, n * sizeof(float));
	llr_tensor_free(t);
	return LLR_OK;
}

static int parse_dbl(const llr_meta *m, const char *key, double *out, llr_err *err)
{
	const char *v = llr_meta_get(m, key);
	if (!v)
		return llr_err_set(err, LLR_EFORMAT, "missing key '%s'", key);
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end)
		return llr_err_set(err, LLR_EFORMAT, "%s=%s is not a number", key, v);
	*out = x;
	return LLR_OK;
}

static int parse_int(const llr_meta *m, const char *key, int64_t lo, int64_t *out, llr_err *err)
{
	int rc = llr_meta_get_i64(m, key, out, err);
	if (rc >= 0 && *out < lo)
		rc = llr_err_set(err, LLR_EFORMAT, "%s=%lld is negative", key, (long long)*out);
	return rc;
}

/* state/info into ts (optimiser created here, its buffers read later). */
static int read_state_info(const char *text, size_t len, size_t n, llr_train_state *ts, llr_err *err)
{
	llr_meta *m = llr_meta_new();
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int rc = llr_meta_parse(m, text, len, err);
	int64_t v = 0;
	if (rc >= 0 && (rc = parse_int(m, "epoch", 0, &ts->epoch, err)) >= 0 &&
	    (rc = parse_int(m, "batch", 0, &ts->batch, err)) >= 0 &&
	    (rc = parse_int(m, "step", 0, &ts->step, err)) >= 0 &&
	    (rc = parse_dbl(m, "epoch_nll", &ts->epoch_nll, err)) >= 0 &&
	    (rc = parse_int(m, "epoch_tok", 0, &ts->epoch_tok, err)) >= 0 &&
	    (rc = parse_dbl(m, "best_valid", &ts->best_valid, err)) >= 0 &&
	    (rc = parse_int(m, "best_epoch", 0, &ts->best_epoch, err)) >= 0 &&
	    (rc = parse_dbl(m, "last_valid", &ts->last_valid, err)) >= 0 &&
	    (rc = parse_int(m, "bad_epochs", 0, &ts->bad_epochs, err)) >= 0 &&
	    (rc = parse_int(m, "halving", 0, &v, err)) >= 0 && (ts->halving = v != 0, 1) &&
	    (rc = parse_int(m, "converged", 0, &v, err)) >= 0 && (ts->converged = v != 0, 1) &&
	    (rc = parse_dbl(m, "lr", &ts->lr, err)) >= 0 && llr_meta_get(m, "optim")) {
		llr_optim_config c;
		double lr, a, b1, b2, eps;
		int64_t steps;
		c.kind = llr_optim_parse(llr_meta_get(m, "optim"));
		if (!c.kind)
			rc = llr_err_set(err, LLR_EFORMAT, "unknown optimiser '%s'", llr_meta_get(m, "optim"));
		else if ((rc = parse_dbl(m, "optim_lr", &lr, err)) >= 0 &&
			 (rc = parse_dbl(m, "optim_alpha", &a, err)) >= 0 &&
			 (rc = parse_dbl(m, "optim_beta1", &b1, err)) >= 0 &&
			 (rc = parse_dbl(m, "optim_beta2", &b2, err)) >= 0 &&
			 (rc = parse_dbl(m, "optim_eps", &eps, err)) >= 0 &&
			 (rc = parse_int(m, "optim_steps", 0, &steps, err)) >= 0) {
			c.lr = (float)lr;
			c.alpha = (float)a;
			c.beta1 = (float)b1;
			c.beta2 = (float)b2;
			c.eps = (float)eps;
			ts->optim = llr_optim_new(&c, n, err);
			if (!ts->optim)
				rc = llr_err_code(err, LLR_EFORMAT);
			else
				llr_optim_set_steps(ts->optim, steps);
		}
	}
	llr_meta_free(m);
	return rc;
}

/* The state/ members, from the current one on. */
static int read_state(loader *L, llr_net *net, llr_train_state *ts, llr_err *err)
{
	size_t n;
	float *cur = llr_net_params(net, &n);
	int64_t shape[1] = {(int64_t)n};
	int rc = LLR_OK, have_info = 0, have_rng = 0;
	size_t have_optim = 0;
	for (; L->more; rc = next(L, err)) {
		if (rc < 0)
			return rc;
		const char *nm = L->name;
		if (!strcmp(nm, "state/info")) {
			char *text;
			size_t len;
			if ((rc = llr_tr_text(L->r, &text, &len, err)) < 0)
				return rc;
			llr_err e = {0};
			rc = read_state_info(text, len, n, ts, &e);
			free(text);
			if (rc < 0)
				return bad(L, LLR_EFORMAT, "state/info", e.msg, err);
			have_info = 1;
		} else if (!strcmp(nm, "state/rng")) {
			llr_tensor *t = NULL;
			int64_t rs[2] = {2, 4};
			if ((rc = llr_tr_tensor_expect(L->r, LLR_I64, 2, rs, &t, err)) < 0)
				return rc;
			const int64_t *d = t->data;
			for (int i = 0; i < 4; i++) {
				memcpy(&ts->rng_epoch.s[i], &d[i], 8);
				memcpy(&ts->rng.s[i], &d[4 + i], 8);
			}
			llr_tensor_free(t);
			have_rng = 1;
		} else if (!strncmp(nm, "state/optim/", 12)) {
			if (!ts->optim)
				return bad(L, LLR_EFORMAT, nm, "optimiser buffer before state/info names the optimiser", err);
			size_t k;
			const char *bn = NULL;
			float *buf = NULL;
			for (k = 0; k < llr_optim_n_state(ts->optim); k++) {
				buf = llr_optim_state(ts->optim, k, &bn);
				if (!strcmp(bn, nm + 12))
					break;
			}
			if (k == llr_optim_n_state(ts->optim))
				return bad(L, LLR_EFORMAT, nm, "not a buffer of this optimiser", err);
			if ((rc = read_f32(L, 1, shape, buf, n, err)) < 0)
				return rc;
			if (!all_finite(buf, n))
				return bad(L, LLR_ENAN, nm, "NaN or Inf values", err);
			have_optim++;
		} else if (!strcmp(nm, "state/weights")) {
			float *best = llr_malloc(n * sizeof(float));
			if (!best)
				return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", L->path);
			memcpy(best, cur, n * sizeof(float));
			if ((rc = read_f32(L, 1, shape, cur, n, err)) < 0) {
				free(best);
				return rc;
			}
			free(ts->best);
			ts->best = best;
			if (!all_finite(cur, n))
				return bad(L, LLR_ENAN, nm, "NaN weights", err);
		} else if (strncmp(nm, "state/", 6)) {
			return bad(L, LLR_EFORMAT, nm, "unexpected member after the state", err);
		}
	}
	if (!have_info || !have_rng)
		return bad(L, LLR_EFORMAT, have_info ? "state/rng" : "state/info", "missing member", err);
	if (ts->optim && have_optim != llr_optim_n_state(ts->optim))
		return bad(L, LLR_EFORMAT, "state/optim", "missing optimiser buffers", err);
	return LLR_OK;
}

static int load(loader *L, llr_model *m, llr_train_state **tsp, llr_err *err)
{
	int rc;
	const llr_meta *meta = llr_tr_meta(L->r);
	m->meta = llr_meta_new();
	if (!m->meta)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", L->path);
	for (size_t i = 0; i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if ((rc = llr_meta_set(m->meta, k, v)) < 0)
			return llr_err_set(err, rc, "%s: out of memory", L->path);
	}
	if ((rc = llr_lexicon_read(L->r, &m->lex, err)) < 0) {
		if (err && strncmp(err->msg, L->path, strlen(L->path)))
			llr_err_prefix(err, "%s", L->path);
		return rc;
	}
	llr_net_config c;
	if ((rc = llr_model_config(meta, m->lex, &c, err)) < 0)
		return llr_err_prefix(err, "%s", L->path);
	const llr_lexicon *x = m->lex;
	m->net = llr_net_new(&c, c.output == LLR_OUT_SOFTMAX ? NULL : x->phi, c.output == LLR_OUT_SOFTMAX ? NULL : x->psi, c.output == LLR_OUT_SOFTMAX ? NULL : x->logb, err);
	if (!m->net)
		return llr_err_prefix(err, "%s", L->path), llr_err_code(err, LLR_EFORMAT);
	size_t n;
	float *par = llr_net_params(m->net, &n);
	int64_t np;
	if (llr_meta_get(meta, "n_params") && (llr_meta_get_i64(meta, "n_params", &np, NULL) < 0 || np != (int64_t)n))
		return llr_err_set(err, LLR_EFORMAT, "%s: n_params=%s but the configuration has %zu parameters", L->path, llr_meta_get(meta, "n_params"), n);

	if ((rc = next(L, err)) < 0)
		return rc;
	char want[256];
	for (size_t i = 0; i < llr_net_n_tensors(m->net); i++) {
		const char *tn;
		int nd;
		int64_t shape[2];
		size_t off;
		llr_net_tensor_info(m->net, i, &tn, &nd, shape, &off);
		snprintf(want, sizeof want, "params/%s", tn);
		if (!L->more)
			return llr_err_set(err, LLR_ETRUNC, "%s: truncated: %s missing", L->path, want);
		if (strcmp(L->name, want))
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s where %s was expected", L->path, L->name, want);
		size_t cnt = 1;
		for (int d = 0; d < nd; d++)
			cnt *= (size_t)shape[d];
		if ((rc = read_f32(L, nd, shape, par + off, cnt, err)) < 0)
			return rc;
		if (!all_finite(par + off, cnt))
			return bad(L, LLR_ENAN, want, "NaN weights", err);
		if ((rc = next(L, err)) < 0)
			return rc;
	}
	if (!tsp) {
		/* Read to the end, so a truncated file is an error here too. */
		for (; L->more; rc = next(L, err))
			if (rc < 0)
				return rc;
		return rc;
	}
	if (!L->more)
		return LLR_OK; /* no training state */
	llr_train_state *ts = llr_calloc(1, sizeof *ts);
	if (!ts)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", L->path);
	ts->best_valid = ts->last_valid = INFINITY;
	*tsp = ts;
	return read_state(L, m->net, ts, err);
}

int llr_model_load_state(const char *path, llr_model **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	if (tsp)
		*tsp = NULL;
	loader L = {.path = path ? path : "<stdin>"};
	L.r = llr_tr_open(path, MODEL_KIND, err);
	if (!L.r)
		return llr_err_code(err, LLR_EIO);
	llr_model *m = llr_calloc(1, sizeof *m);
	if (!m) {
		llr_tr_close(L.r);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", L.path);
	}
	int rc = load(&L, m, tsp, err);
	llr_tr_close(L.r);
	if (rc < 0) {
		llr_model_free(m);
		if (tsp) {
			llr_train_state_free(*tsp);
			*tsp = NULL;
		}
		return rc;
	}
	*out = m;
	return LLR_OK;
}

int llr_model_load(const char *path, llr_model **out, llr_err *err)
{
	return llr_model_load_state(path, out, NULL, err);
}
