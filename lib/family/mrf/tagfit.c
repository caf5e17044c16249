/*
 * tagfit.c - train --mrf --tags: the MRF tagger (tagger.h) from word/TAG
 * text (tok --tags: one sentence a line, each token split at its last
 * '/'), fitted by L-BFGS (liblbfgs, its backtracking line search) from
 * zero weights on
 *   f(w) = (1/N) sum_s -log p(y_s | x_s) + (l2 / 2) |w|^2,
 * N the training tokens, the likelihood exact (forward-backward,
 * tagchain.c).  --l2 not given: 1 / N, a total penalty |w|^2 / 2 (a
 * Gaussian prior of variance 1).  Deterministic: no random start, no
 * shuffling, one thread.  On SIGINT or SIGTERM (llr_train_signal, polled
 * after every iteration) the model is saved with the weights reached and
 * stopped=interrupted.  --resume MODEL continues a saved fit on the same
 * text (its tags, features and token count must be the model's) from
 * its weights: liblbfgs starts again there, its curvature pairs lost,
 * the iterations (iterations_done, against --epochs) and train_seconds
 * counted on.  Not here: the lifted bound (bound.c), which the
 * conditional likelihood does not need.
 */
#include "family/mrf/tagger.h"

#include <limits.h>
#include <lbfgs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct corpus {
	llr_strmap *tags, *feats;
	int32_t M;
	size_t ns, cap_s; /* sentences: sstart[0..ns] token offsets */
	size_t *sstart;
	size_t nt, cap_t; /* tokens: their tags, their features' ends in fptr */
	int32_t *tag;
	size_t *fptr, cap_fp; /* nt + 1 */
	int32_t *fid;
	size_t nf, cap_f;
	mrft_feats one;   /* a sentence's, as it is read */
	const char **words;
	size_t *lens, cap_w, cap_l;
} corpus;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return LLR_OK;
	size_t c = need + need / 2 + 64;
	void *q = llr_reallocarray(*p, c, size);
	if (!q)
		return LLR_ENOMEM;
	*p = q;
	*cap = c;
	return LLR_OK;
}

/* One line of word/TAG tokens: a sentence (none without a token). */
static int read_line(void *cv, const char *line, size_t len, llr_err *err)
{
	corpus *c = cv;
	size_t pos = 0, tl, n = 0;
	const char *t;
	while (llr_token_next(line, len, &pos, &t, &tl)) {
		const char *slash = NULL;
		for (size_t k = 0; k < tl; k++)
			if (t[k] == '/')
				slash = t + k;
		if (!slash || slash == t || slash == t + tl - 1)
			return llr_err_set(err, LLR_EFORMAT, "token '%.*s' has no /TAG (train --mrf --tags reads word/TAG text: tok --tags)",
			                   (int)tl, t);
		if (grow((void **)&c->words, &c->cap_w, n + 1, sizeof *c->words) < 0 ||
		    grow((void **)&c->lens, &c->cap_l, n + 1, sizeof *c->lens) < 0 ||
		    grow((void **)&c->tag, &c->cap_t, c->nt + n + 1, sizeof *c->tag) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		int32_t id = llr_strmap_add(c->tags, slash + 1, (size_t)(t + tl - slash - 1));
		if (id < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (id >= MRFT_MAX_TAGS)
			return llr_err_set(err, LLR_ERANGE, "more than %d tags", MRFT_MAX_TAGS);
		c->words[n] = t;
		c->lens[n] = (size_t)(slash - t);
		c->tag[c->nt + n++] = id;
	}
	if (!n)
		return LLR_OK;
	int rc = mrft_features(&c->one, c->feats, 1, c->M, c->words, c->lens, n, err);
	if (rc < 0)
		return rc;
	size_t nf = c->one.ptr[n];
	if (grow((void **)&c->fid, &c->cap_f, c->nf + nf, sizeof *c->fid) < 0 ||
	    grow((void **)&c->fptr, &c->cap_fp, c->nt + n + 1, sizeof *c->fptr) < 0 ||
	    grow((void **)&c->sstart, &c->cap_s, c->ns + 2, sizeof *c->sstart) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	memcpy(c->fid + c->nf, c->one.ids, nf * sizeof *c->fid);
	c->fptr[0] = 0;
	for (size_t i = 0; i < n; i++)
		c->fptr[c->nt + i + 1] = c->nf + c->one.ptr[i + 1];
	c->sstart[0] = 0;
	c->nf += nf;
	c->nt += n;
	c->sstart[++c->ns] = c->nt;
	return LLR_OK;
}

static void corpus_free(corpus *c)
{
	llr_strmap_free(c->tags);
	llr_strmap_free(c->feats);
	free(c->sstart);
	free(c->tag);
	free(c->fptr);
	free(c->fid);
	free(c->words);
	free(c->lens);
	mrft_feats_free(&c->one);
}

typedef struct fit {
	const llr_train_args *a;
	const corpus *c;
	int32_t F, T;
	mrft_ws ws;
	double l2, t0, max_time, nll;
	int quiet, cut, sig, k;
	long long done; /* iterations of the fit before this run */
} fit;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static lbfgsfloatval_t evaluate(void *inst, const lbfgsfloatval_t *x, lbfgsfloatval_t *g, const int n, const lbfgsfloatval_t step)
{
	(void)step;
	fit *F = inst;
	const corpus *c = F->c;
	memset(g, 0, (size_t)n * sizeof *g);
	double nll = 0, reg = 0, N = (double)c->nt;
	for (size_t s = 0; s < c->ns; s++) {
		size_t a = c->sstart[s];
		mrft_feats view = {.ptr = c->fptr + a, .ids = c->fid, .n = c->sstart[s + 1] - a};
		nll += mrft_nll(&F->ws, F->F, F->T, x, &view, c->tag + a, g);
	}
	for (int i = 0; i < n; i++) {
		g[i] = g[i] / N + F->l2 * x[i];
		reg += x[i] * x[i];
	}
	F->nll = nll / N;
	return nll / N + 0.5 * F->l2 * reg;
}

static int progress(void *inst, const lbfgsfloatval_t *x, const lbfgsfloatval_t *g, const lbfgsfloatval_t fx,
                    const lbfgsfloatval_t xnorm, const lbfgsfloatval_t gnorm, const lbfgsfloatval_t step, int n, int k, int ls)
{
	(void)x, (void)g, (void)xnorm, (void)step, (void)n;
	fit *F = inst;
	double el = now() - F->t0;
	F->k = k;
	if (!F->quiet)
		llr_train_note(F->a, "iteration %lld objective %.6f nll/token %.6f |g| %.3g %d evaluations %.1fs", F->done + k, fx, F->nll,
		               gnorm, ls, el);
	if (llr_train_signal(F->a))
		return F->sig = 1;
	if (F->max_time > 0 && el >= F->max_time)
		return F->cut = 1;
	return 0;
}

const char *mrf_lbfgs_stop(int ret, int cut)
{
	if (cut || ret == LBFGSERR_CANCELED)
		return "max-time";
	if (ret >= LBFGSERR_UNKNOWNERROR && ret <= LBFGSERR_INVALID_ORTHANTWISE_END)
		return NULL; /* before the first evaluation: no fit to keep */
	if (ret == LBFGSERR_MAXIMUMITERATION)
		return "epochs";
	if (ret == LBFGS_SUCCESS || ret == LBFGS_STOP || ret == LBFGS_ALREADY_MINIMIZED)
		return "converged";
	return "line-search"; /* liblbfgs keeps the last point that decreased f */
}

int mrf_lbfgs_err(int ret, size_t n, llr_err *err)
{
	if (ret == LBFGSERR_OUTOFMEMORY)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for L-BFGS's work space (%zu parameters)", n);
	return llr_err_set(err, LLR_EINVAL, "liblbfgs refused to run (status %d)", ret);
}

double mrf_meta_num(const llr_meta *meta, const char *key, double dflt)
{
	const char *v = llr_meta_get(meta, key);
	char *end;
	double x = v ? strtod(v, &end) : dflt;
	return v && (end == v || *end || !isfinite(x) || x < 0) ? dflt : x;
}

/* Fit m's weights (zero for a new model, a resumed one's own) to c; its
 * summary into m->meta. */
static int fit_model(const llr_train_args *a, mrft_model *m, const corpus *c, int resumed, llr_err *err)
{
	size_t n = mrft_nparams(m->F, m->T), longest = 0;
	if (n > (size_t)INT_MAX)
		return llr_err_set(err, LLR_ERANGE, "%zu parameters: liblbfgs takes at most %d", n, INT_MAX);
	for (size_t s = 0; s < c->ns; s++)
		longest = c->sstart[s + 1] - c->sstart[s] > longest ? c->sstart[s + 1] - c->sstart[s] : longest;
	fit F = {.a = a, .c = c, .F = m->F, .T = m->T, .t0 = now(), .quiet = (int)llr_train_args_int(a, "quiet")};
	double before = resumed ? mrf_meta_num(m->meta, "train_seconds", 0) : 0;
	F.done = resumed ? (long long)mrf_meta_num(m->meta, "iterations_done", 0) : 0;
	F.l2 = llr_train_args_given(a, "l2") ? llr_train_args_num(a, "l2")
	       : resumed                     ? mrf_meta_num(m->meta, "l2", 1.0 / (double)c->nt)
	                                     : 1.0 / (double)c->nt;
	F.max_time = llr_train_args_given(a, "max-time") ? llr_train_args_num(a, "max-time") : 0;
	long long left = llr_train_args_int(a, "epochs") - F.done;
	lbfgsfloatval_t *x = lbfgs_malloc((int)n);
	int rc = LLR_OK;
	if (!x || mrft_ws_reserve(&F.ws, m->T, longest) < 0) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory for %zu parameters", n);
		goto out;
	}
	memcpy(x, m->w, n * sizeof *x);
	lbfgs_parameter_t p;
	lbfgs_parameter_init(&p);
	p.linesearch = LBFGS_LINESEARCH_BACKTRACKING;
	p.max_iterations = left > 0 ? (int)left : 1;
	lbfgsfloatval_t fx = 0;
	int ret = LBFGSERR_MAXIMUMITERATION;
	llr_train_catch_signals(a);
	if (left > 0) /* else --epochs is reached already: the weights as they were */
		ret = lbfgs((int)n, x, &fx, evaluate, progress, &F, &p);
	else
		fx = mrf_meta_num(m->meta, "train_objective", NAN);
	const char *stop = F.sig ? "interrupted" : mrf_lbfgs_stop(ret, F.cut);
	if (!stop) {
		rc = mrf_lbfgs_err(ret, n, err);
		goto out;
	}
	if (!isfinite(fx)) {
		rc = llr_err_set(err, LLR_ENAN, "the objective is not finite after training (liblbfgs status %d)", ret);
		goto out;
	}
	memcpy(m->w, x, n * sizeof *x);
	double secs = before + (now() - F.t0);
	int e = 0;
	e |= llr_meta_set(m->meta, "stopped", stop);
	e |= llr_meta_setf(m->meta, "train_tokens", "%zu", c->nt);
	e |= llr_meta_setf(m->meta, "train_sentences", "%zu", c->ns);
	e |= llr_meta_setf(m->meta, "train_objective", "%.9g", fx);
	e |= llr_meta_setf(m->meta, "l2", "%.9g", F.l2);
	e |= llr_meta_setf(m->meta, "iterations_done", "%lld", F.done + F.k);
	e |= llr_meta_setf(m->meta, "train_seconds", "%.3f", secs);
	if (e < 0)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	else if (!F.quiet)
		llr_train_note(a, "stopped (%s, liblbfgs status %d): objective %.6f after %lld iterations in %.1fs", stop, ret, fx,
		               F.done + F.k, secs);
out:
	lbfgs_free(x);
	mrft_ws_free(&F.ws);
	return rc;
}

/* --resume path: the model, when the options it fixes are not given
 * otherwise. */
static int open_resumed(const llr_train_args *a, const char *path, mrft_model **m, llr_err *err)
{
	int rc = mrft_model_load(path, m, err);
	char want[64];
	snprintf(want, sizeof want, "%lld", llr_train_args_int(a, "word-window"));
	if (rc >= 0)
		rc = llr_train_fixed(a, "word-window", (*m)->meta, "window", want, err);
	snprintf(want, sizeof want, "%.9g", llr_train_args_num(a, "l2"));
	if (rc >= 0)
		rc = llr_train_fixed(a, "l2", (*m)->meta, "l2", want, err);
	return rc;
}

/* The names of map b are a's, in a's order; else LLR_EINVAL naming what. */
static int same_names(const llr_strmap *a, const llr_strmap *b, const char *what, const char *text, const char *path, llr_err *err)
{
	size_t na = llr_strmap_size(a), nb = llr_strmap_size(b);
	if (na != nb)
		return llr_err_set(err, LLR_EINVAL, "%s: not the text %s was fitted on: %zu %s, the model's %zu", text, path, nb, what, na);
	for (size_t i = 0; i < na; i++)
		if (strcmp(llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i)))
			return llr_err_set(err, LLR_EINVAL, "%s: not the text %s was fitted on: its %s differ from the model's ('%s', '%s')", text,
			                   path, what, llr_strmap_str(b, (int32_t)i), llr_strmap_str(a, (int32_t)i));
	return LLR_OK;
}

/* The text of corpus c is the one the resumed model m was fitted on. */
static int same_text(const mrft_model *m, const corpus *c, const char *text, const char *path, llr_err *err)
{
	int rc = same_names(m->tags, c->tags, "tags", text, path, err);
	if (rc == LLR_OK)
		rc = same_names(m->feats, c->feats, "features", text, path, err);
	if (rc == LLR_OK && (mrf_meta_num(m->meta, "train_tokens", -1) != (double)c->nt ||
	                     mrf_meta_num(m->meta, "train_sentences", -1) != (double)c->ns))
		rc = llr_err_set(err, LLR_EINVAL, "%s: not the text %s was fitted on: %zu tokens in %zu sentences, the model's %s in %s", text, path,
		                 c->nt, c->ns, llr_meta_get(m->meta, "train_tokens") ? llr_meta_get(m->meta, "train_tokens") : "?",
		                 llr_meta_get(m->meta, "train_sentences") ? llr_meta_get(m->meta, "train_sentences") : "?");
	return rc;
}

/* A new model of c's tags and features, zero weights (c's maps moved). */
static int fresh(corpus *c, mrft_model **out, llr_err *err)
{
	mrft_model *m = llr_calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	*out = m;
	m->T = (int32_t)llr_strmap_size(c->tags);
	m->F = (int32_t)llr_strmap_size(c->feats);
	m->M = c->M;
	m->tags = c->tags;
	m->feats = c->feats;
	c->tags = c->feats = NULL;
	if (!(m->meta = llr_meta_new()) || !(m->w = llr_calloc(mrft_nparams(m->F, m->T), sizeof *m->w)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu parameters", mrft_nparams(m->F, m->T));
	return LLR_OK;
}

int mrft_estimate(llr_train_args *a, llr_err *err)
{
	const char *resume = llr_train_args_str(a, "resume"), *out = llr_train_args_str(a, "o");
	if (!out)
		out = resume;
	if (!out || !strcmp(out, "-"))
		return llr_train_usage_err(err, "--tags: -o FILE is required (the model file)");
	mrft_model *m = NULL;
	int rc = resume ? open_resumed(a, resume, &m, err) : LLR_OK;
	corpus c = {.M = m ? m->M : (int32_t)llr_train_args_int(a, "word-window")};
	if (rc == LLR_OK && (!(c.tags = llr_strmap_new()) || !(c.feats = llr_strmap_new())))
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	int nops = llr_train_args_noperands(a);
	const char *text = nops == 1 ? llr_train_args_operand(a, 0) : nops ? "the input" : "<stdin>";
	for (int i = 0; rc == LLR_OK && i < (nops ? nops : 1); i++)
		rc = llr_lines_each(nops ? llr_train_args_operand(a, i) : "-", read_line, &c, err);
	if (rc == LLR_OK && c.nt == 0)
		rc = llr_err_set(err, LLR_EINVAL, "%s: no tagged sentence (an empty corpus)", text);
	if (rc == LLR_OK)
		rc = m ? same_text(m, &c, text, resume, err) : fresh(&c, &m, err);
	if (rc == LLR_OK && !llr_train_args_int(a, "quiet"))
		llr_train_note(a, "MRF tagger: %zu tokens, %zu sentences, %d tags, %d features, word window %d, %zu parameters%s%s", c.nt,
		               c.ns, m->T, m->F, m->M, mrft_nparams(m->F, m->T), resume ? "; resuming " : "", resume ? resume : "");
	if (rc == LLR_OK)
		rc = fit_model(a, m, &c, resume != NULL, err);
	if (rc == LLR_OK)
		rc = mrft_model_save(out, m, err);
	mrft_model_free(m);
	corpus_free(&c);
	return rc;
}
