/*
 * trainstate.c - the training state of a model file (the state/ members
 * of llrnn-model(5)): counters, schedule and generators in state/info and
 * state/rng, the optimiser's buffers in state/optim/<name>, and the
 * current weights in state/weights when the file's params/ hold the best
 * ones.  Shared by every model family's files (lib/lm/model.c,
 * lib/lm/encdec_model.c, senc_model.c); the weights are a flat array of n
 * floats, in the family's own order.  Also the frames those two
 * families' savers and loaders share (llr_model_file_save, _load), and
 * a fresh state for a new model (llr_train_state_fresh).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
	if (ts->decays || ts->stalls)
		rc |= llr_buf_printf(b, "decays=%lld\nstalls=%lld\n", (long long)ts->decays, (long long)ts->stalls);
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

int llr_state_write(llr_tensor_writer *w, const llr_train_state *ts, const float *cur, size_t n, llr_err *err)
{
	int rc;
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

static int all_finite(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

static int read_f32(llr_tensor_reader *r, size_t n, float *dst, llr_err *err)
{
	llr_tensor *t = NULL;
	int64_t shape[1] = {(int64_t)n};
	int rc = llr_tr_tensor_expect(r, LLR_F32, 1, shape, &t, err);
	if (rc < 0)
		return rc;
	memcpy(dst, t->data, n * sizeof(float));
	llr_tensor_free(t);
	return LLR_OK;
}

static int bad(const char *path, int code, const char *what, const char *reason, llr_err *err)
{
	return llr_err_set(err, code, "%s: %s: %s", path, what, reason);
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
	    (rc = parse_dbl(m, "lr", &ts->lr, err)) >= 0 &&
	    (!llr_meta_get(m, "decays") || (rc = parse_int(m, "decays", 0, &ts->decays, err)) >= 0) &&
	    (!llr_meta_get(m, "stalls") || (rc = parse_int(m, "stalls", 0, &ts->stalls, err)) >= 0) && llr_meta_get(m, "optim")) {
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

int llr_state_read(llr_tensor_reader *r, const char *path, const char *name, float *cur, size_t n, llr_train_state *ts, llr_err *err)
{
	int rc = LLR_OK, have_info = 0, have_rng = 0, more = 1;
	size_t have_optim = 0;
	for (; more; more = rc = llr_tr_next(r, &name, err)) {
		if (rc < 0)
			return rc;
		const char *nm = name;
		if (!strcmp(nm, "state/info")) {
			char *text;
			size_t len;
			if ((rc = llr_tr_text(r, &text, &len, err)) < 0)
				return rc;
			llr_err e = {0};
			rc = read_state_info(text, len, n, ts, &e);
			free(text);
			if (rc < 0)
				return bad(path, LLR_EFORMAT, "state/info", e.msg, err);
			have_info = 1;
		} else if (!strcmp(nm, "state/rng")) {
			llr_tensor *t = NULL;
			int64_t rs[2] = {2, 4};
			if ((rc = llr_tr_tensor_expect(r, LLR_I64, 2, rs, &t, err)) < 0)
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
				return bad(path, LLR_EFORMAT, nm, "optimiser buffer before state/info names the optimiser", err);
			size_t k;
			const char *bn = NULL;
			float *buf = NULL;
			for (k = 0; k < llr_optim_n_state(ts->optim); k++) {
				buf = llr_optim_state(ts->optim, k, &bn);
				if (!strcmp(bn, nm + 12))
					break;
			}
			if (k == llr_optim_n_state(ts->optim))
				return bad(path, LLR_EFORMAT, nm, "not a buffer of this optimiser", err);
			if ((rc = read_f32(r, n, buf, err)) < 0)
				return rc;
			if (!all_finite(buf, n))
				return bad(path, LLR_ENAN, nm, "NaN or Inf values", err);
			have_optim++;
		} else if (!strcmp(nm, "state/weights")) {
			float *best = llr_malloc(n * sizeof(float));
			if (!best)
				return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
			memcpy(best, cur, n * sizeof(float));
			if ((rc = read_f32(r, n, cur, err)) < 0) {
				free(best);
				return rc;
			}
			free(ts->best);
			ts->best = best;
			if (!all_finite(cur, n))
				return bad(path, LLR_ENAN, nm, "NaN weights", err);
		} else if (strncmp(nm, "state/", 6)) {
			return bad(path, LLR_EFORMAT, nm, "unexpected member after the state", err);
		}
	}
	if (!have_info || !have_rng)
		return bad(path, LLR_EFORMAT, have_info ? "state/rng" : "state/info", "missing member", err);
	if (ts->optim && have_optim != llr_optim_n_state(ts->optim))
		return bad(path, LLR_EFORMAT, "state/optim", "missing optimiser buffers", err);
	return LLR_OK;
}

int llr_state_tail(llr_tensor_reader *r, const char *path, const char *name, int more, float *cur, size_t n,
                   llr_train_state **tsp, llr_err *err)
{
	int rc = LLR_OK;
	if (!tsp) {
		while (more && (rc = llr_tr_next(r, &name, err)) > 0)
			;
		return rc < 0 ? rc : LLR_OK;
	}
	if (!more)
		return LLR_OK;
	llr_train_state *ts = llr_calloc(1, sizeof *ts);
	if (!ts)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	ts->best_valid = ts->last_valid = INFINITY;
	*tsp = ts;
	return llr_state_read(r, path, name, cur, n, ts, err);
}

int llr_model_file_load(const char *path, size_t size,
                        int (*load)(llr_tensor_reader *r, const char *path, void *m, llr_train_state **tsp, llr_err *err),
                        void (*free_fn)(void *), void **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	if (tsp)
		*tsp = NULL;
	const char *name = path ? path : "<stdin>";
	llr_tensor_reader *r = llr_tr_open(path, "model", err);
	if (!r)
		return llr_err_code(err, LLR_EIO);
	void *m = llr_calloc(1, size);
	if (!m) {
		llr_tr_close(r);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
	}
	int rc = load(r, name, m, tsp, err);
	llr_tr_close(r);
	if (rc < 0) {
		free_fn(m);
		if (tsp) {
			llr_train_state_free(*tsp);
			*tsp = NULL;
		}
		return rc;
	}
	*out = m;
	return LLR_OK;
}

int llr_model_file_save(const char *path, const void *m, int (*build_meta)(const void *m, llr_meta *meta),
                        int (*write_model)(llr_tensor_writer *w, const void *m, const llr_train_state *ts, llr_err *err),
                        const llr_train_state *ts, llr_err *err)
{
	llr_meta *meta = llr_meta_new();
	if (!meta)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	int rc = build_meta(m, meta);
	if (rc < 0) {
		llr_meta_free(meta);
		return llr_err_set(err, rc, "%s: cannot build the meta member (%s)", path, llr_strerror(rc));
	}
	llr_tensor_writer *w = llr_tw_open(path, "model", meta, err);
	llr_meta_free(meta);
	if (!w)
		return llr_err_code(err, LLR_EIO);
	if ((rc = write_model(w, m, ts, err)) < 0) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, err);
}

llr_train_state *llr_train_state_fresh(uint64_t seed, int optim, double lr, double eps, size_t n, llr_rng *init, llr_err *err)
{
	llr_train_state *ts = llr_calloc(1, sizeof *ts);
	if (!ts) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	llr_rng seeder;
	llr_rng_seed(&seeder, seed);
	llr_rng_seed(init, llr_rng_u64(&seeder));
	llr_rng_seed(&ts->rng_epoch, llr_rng_u64(&seeder));
	llr_rng_seed(&ts->rng, llr_rng_u64(&seeder));
	llr_optim_config oc;
	llr_optim_defaults(&oc, optim);
	if (lr > 0)
		oc.lr = (float)lr;
	if (eps > 0)
		oc.eps = (float)eps;
	if (!(ts->optim = llr_optim_new(&oc, n, err))) {
		free(ts);
		return NULL;
	}
	ts->lr = oc.lr;
	ts->best_valid = ts->last_valid = INFINITY;
	return ts;
}
