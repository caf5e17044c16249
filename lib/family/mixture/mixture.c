/*
 * mixture.c - the linear interpolation of models behind llr_model
 * (family.h): p(w | h) = sum_i lambda_i p_i(w | h), token by token, over
 * components that share one vocabulary (score(1) -m A -m B --weights, or
 * a mixture file, llrnn-model(5)).  The weights are given or fitted on
 * sentences by EM (llr_model_tune_mixture), as Bengio et al. 2003 mixed
 * their network with a trigram.  With a counts file
 * (llr_model_mixture_by_context) each context class, the frequency of the
 * previous token, has its own weights, as Bengio et al.'s interpolated
 * trigram had per context-frequency bin.  Exact only over one event space, so a
 * mixture refuses components whose vocabularies differ (the words they
 * predict, compared as strings), a token that some components have and
 * others do not, and components that score OOVs other than as <unk>.
 */
#include "family/family.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MIX_MAGIC "llrnn-mixture 1"
#define MIX_MAX 64           /* components at most */
#define WEIGHT_TOL 1e-6      /* how far from 1 the weights may sum */
#define TUNE_BATCH 64        /* sentences scored at once when fitting */
#define CLASS_MIN 1000       /* tuning predictions a context class needs for its own weights */

/* Context classes: 0 for a previous token absent from the counts file,
 * else 1 + floor(log2 count), at most 63 for 64-bit counts. */
#define MIX_CLASSES LLR_MIX_CLASSES

typedef struct mixture {
	size_t n;
	llr_model **comp;
	double *w;          /* n weights, summing to 1 */
	double *lp;         /* n x cap: the components' log p of a batch */
	unsigned char *oov; /* n x cap */
	size_t cap;
	llr_vocab *ctx;     /* the context counts, or NULL: one set of weights */
	int64_t bos_count;  /* the sentence start's: the count of </s> */
	double *cw;         /* MIX_CLASSES x n weights, with ctx */
	int64_t ctok[MIX_CLASSES]; /* the tuning predictions of each class */
	unsigned char *cls; /* cap: each token's context class, with ctx */
} mixture;

static void mixture_close(void *state)
{
	mixture *x = state;
	for (size_t i = 0; i < x->n; i++)
		llr_model_close(x->comp[i]);
	free(x->comp);
	free(x->w);
	free(x->lp);
	free(x->oov);
	llr_vocab_free(x->ctx);
	free(x->cw);
	free(x->cls);
	free(x);
}

static int mixture_sniff(const char *path, llr_err *err)
{
	(void)err;
	if (!path || !strcmp(path, "-"))
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	char head[sizeof MIX_MAGIC];
	size_t got = fread(head, 1, sizeof head - 1, f);
	fclose(f);
	return got == sizeof head - 1 && !memcmp(head, MIX_MAGIC, got);
}

/* The weights: each in [0, 1], summing to 1. */
static int check_weights(const char *what, const double *w, size_t n, llr_err *err)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(w[i] >= 0 && w[i] <= 1))
			return llr_err_set(err, LLR_EINVAL, "%s: weight %zu is %g, not in [0, 1]", what, i + 1, w[i]);
		sum += w[i];
	}
	if (fabs(sum - 1) > WEIGHT_TOL)
		return llr_err_set(err, LLR_EINVAL, "%s: the weights sum to %.9g, not 1", what, sum);
	return LLR_OK;
}

/* The words component c predicts (its vocabulary but <s>) into set;
 * their count. */
static size_t word_set(const llr_model *c, llr_strmap *set, int *oom)
{
	llr_model_info in;
	llr_model_describe(c, &in);
	size_t k = 0;
	for (int64_t w = 0; w < in.vocab; w++) {
		const char *s = c->fam->word(c, w);
		if (strcmp(s, LLR_BOS)) {
			*oom |= set && llr_strmap_add(set, s, strlen(s)) < 0;
			k++;
		}
	}
	return k;
}

/* Every component lists the words of the first, and no other: a mixture
 * sums probabilities of the same events.  A family that does not list
 * its words is checked token by token as it scores. */
static int same_words(const mixture *x, const char *what, llr_err *err)
{
	for (size_t i = 0; i < x->n; i++)
		if (!x->comp[i]->fam->word)
			return LLR_OK;
	llr_strmap *set = llr_strmap_new();
	int oom = !set, rc = LLR_OK;
	size_t n0 = oom ? 0 : word_set(x->comp[0], set, &oom);
	for (size_t i = 1; !oom && rc == LLR_OK && i < x->n; i++) {
		const llr_model *c = x->comp[i];
		llr_model_info in;
		llr_model_describe(c, &in);
		for (int64_t w = 0; rc == LLR_OK && w < in.vocab; w++) {
			const char *s = c->fam->word(c, w);
			if (strcmp(s, LLR_BOS) && llr_strmap_get(set, s, strlen(s)) < 0)
				rc = llr_err_set(err, LLR_EINVAL, "%s: '%s' is in the vocabulary of %s but not of %s: a mixture needs one vocabulary",
				                 what, s, c->path, x->comp[0]->path);
		}
		size_t ni = word_set(c, NULL, &oom);
		if (rc == LLR_OK && ni != n0)
			rc = llr_err_set(err, LLR_EINVAL, "%s: %s predicts %zu words and %s %zu: a mixture needs one vocabulary", what,
			                 x->comp[0]->path, n0, c->path, ni);
	}
	llr_strmap_free(set);
	return oom ? llr_err_set(err, LLR_ENOMEM, "%s: out of memory", what) : rc;
}

/* Open the n components into x (the caller's opts), and check that they
 * can be mixed exactly. */
static int open_components(mixture *x, const char *what, size_t n, const char *const *paths, const llr_model_opts *opts,
                           llr_err *err)
{
	if (n < 1 || n > MIX_MAX)
		return llr_err_set(err, LLR_EINVAL, "%s: %zu components (1 to %d)", what, n, MIX_MAX);
	if (!(x->comp = llr_calloc(n, sizeof *x->comp)) || !(x->w = llr_calloc(n, sizeof *x->w)))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", what);
	for (size_t i = 0; i < n; i++) {
		int rc = llr_model_open(paths[i], opts, &x->comp[i], err);
		if (rc < 0)
			return rc;
		x->n = i + 1;
		llr_model_info in;
		llr_model_describe(x->comp[i], &in);
		if (!(in.ops & LLR_MODEL_SCORE) || !strcmp(in.family, "mixture"))
			return llr_err_set(err, LLR_EINVAL, "%s: %s cannot be a component (a %s model: a mixture mixes language models)",
			                   what, paths[i], in.family);
		if (in.oov != LLR_OOV_UNK)
			return llr_err_set(err, LLR_EINVAL,
			                   "%s: %s scores words outside its vocabulary %s, and a mixture needs them as <unk> "
			                   "in every component (score it --closed, or give it <unk>)",
			                   what, paths[i], in.oov == LLR_OOV_ZERO ? "as 0 (it has no <unk>)" : "through its spelling model");
	}
	return same_words(x, what, err);
}

/* A mixture file: MIX_MAGIC, then "WEIGHT PATH" lines (a path relative
 * to the file's folder); blank lines and lines from '#' are skipped. */
static int mixture_open(llr_model *m, const char *path, llr_err *err)
{
	mixture *x = llr_calloc(1, sizeof *x);
	if (!x)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->state = x;
	FILE *f = fopen(path, "r");
	if (!f)
		return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(errno));
	char line[4096], *paths[MIX_MAX];
	double w[MIX_MAX];
	size_t n = 0, ln = 0;
	int rc = LLR_OK;
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	while (rc == LLR_OK && fgets(line, sizeof line, f)) {
		ln++;
		line[strcspn(line, "\r\n")] = '\0';
		if (ln == 1) {
			if (strcmp(line, MIX_MAGIC))
				rc = llr_err_set(err, LLR_EFORMAT, "%s:1: expected '%s'", path, MIX_MAGIC);
			continue;
		}
		char *p = line + strspn(line, " \t"), *end;
		if (!*p || *p == '#')
			continue;
		if (n == MIX_MAX) {
			rc = llr_err_set(err, LLR_EFORMAT, "%s:%zu: more than %d components", path, ln, MIX_MAX);
			break;
		}
		errno = 0;
		w[n] = strtod(p, &end);
		if (end == p || errno || (*end != ' ' && *end != '\t')) {
			rc = llr_err_set(err, LLR_EFORMAT, "%s:%zu: expected a weight, then a model's path", path, ln);
			break;
		}
		p = end + strspn(end, " \t");
		size_t pre = *p == '/' ? 0 : dir, len = strlen(p);
		if (!len) {
			rc = llr_err_set(err, LLR_EFORMAT, "%s:%zu: a weight without a model's path", path, ln);
			break;
		}
		if (!(paths[n] = llr_malloc(pre + len + 1))) {
			rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
			break;
		}
		memcpy(paths[n], path, pre);
		memcpy(paths[n] + pre, p, len + 1);
		n++;
	}
	if (rc == LLR_OK && ferror(f))
		rc = llr_err_set(err, LLR_EIO, "%s: read error", path);
	fclose(f);
	if (rc == LLR_OK && ln == 0)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: empty", path);
	if (rc == LLR_OK && n == 0)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no components", path);
	if (rc == LLR_OK && (rc = check_weights(path, w, n, err)) == LLR_OK &&
	    (rc = open_components(x, path, n, (const char *const *)paths, &m->opts, err)) == LLR_OK)
		memcpy(x->w, w, n * sizeof *w);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	return rc;
}

static void mixture_describe(const llr_model *m, llr_model_info *info)
{
	const mixture *x = m->state;
	llr_model_info in;
	llr_model_describe(x->comp[0], &in);
	info->kind = "mixture";
	info->vocab = in.vocab;
	info->has_unk = 1;
	info->oov = LLR_OOV_UNK;
	for (size_t i = 0; i < x->n; i++) {
		llr_model_describe(x->comp[i], &in);
		if (in.order > info->order)
			info->order = in.order;
	}
}

static const llr_meta *mixture_meta(const llr_model *m)
{
	(void)m;
	return NULL;
}

/* Room for T tokens of every component. */
static int reserve(mixture *x, size_t T, llr_err *err)
{
	if (T <= x->cap)
		return LLR_OK;
	size_t cap = T + T / 2;
	double *lp = llr_reallocarray(x->lp, x->n * cap, sizeof *lp);
	if (lp)
		x->lp = lp;
	unsigned char *oov = llr_reallocarray(x->oov, x->n * cap, 1);
	if (oov)
		x->oov = oov;
	unsigned char *cls = x->ctx ? llr_reallocarray(x->cls, cap, 1) : x->cls;
	if (cls)
		x->cls = cls;
	if (!lp || !oov || (x->ctx && !cls))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu tokens", T);
	x->cap = cap;
	return LLR_OK;
}

/* The context class of a prediction after the token prev (NULL: the
 * sentence's start, counted as </s>). */
static unsigned char context_class(const mixture *x, const char *prev)
{
	int64_t c = x->bos_count;
	if (prev) {
		int32_t id = llr_vocab_id(x->ctx, prev, strlen(prev));
		c = id < 0 ? 0 : llr_vocab_count(x->ctx, id);
	}
	unsigned char k = 0;
	for (; c > 0; c >>= 1)
		k++;
	return k;
}

/* The weights of token t (its class's, or the one set). */
static const double *weights_at(const mixture *x, size_t t)
{
	return x->ctx ? x->cw + (size_t)x->cls[t] * x->n : x->w;
}

/* Component i's largest weight in any context (its weight, without
 * classes): what bounds its share of the mixture's norm error. */
static double top_weight(const mixture *x, size_t i)
{
	double top = x->w[i];
	for (size_t k = 0; x->ctx && k < MIX_CLASSES; k++)
		top = fmax(top, x->cw[k * x->n + i]);
	return top;
}

/* Every component's log p of the batch into x->lp from token off
 * (component i's at i * x->cap + off; x->cap is off + the batch's tokens
 * or more, reserved by the caller), and the OOV flags they agree on into
 * oov; *tokens gets the batch's token count. */
static int score_components(llr_model *m, const llr_sentence *s, size_t B, size_t off, unsigned char *oov,
                            llr_norm_stat *norm, size_t *tokens, llr_err *err)
{
	mixture *x = m->state;
	if (norm)
		*norm = (llr_norm_stat){0};
	for (size_t i = 0; i < x->n; i++) {
		llr_norm_stat ns = {0};
		int rc = llr_model_score(x->comp[i], s, B, x->lp + i * x->cap + off, x->oov + i * x->cap + off, &ns, err);
		if (rc < 0)
			return rc;
		if (norm) { /* |sum_w p(w) - 1| <= sum_i lambda_i |sum_w p_i(w) - 1| */
			double wi = top_weight(x, i);
			norm->err += wi * fabs(ns.err);
			norm->se += wi * ns.se;
			norm->lo += wi * ns.lo;
			norm->hi += wi * ns.hi;
		}
	}
	size_t t = off;
	for (size_t b = 0; b < B; b++)
		for (size_t k = 0; k <= s[b].n; k++, t++) {
			if (x->ctx)
				x->cls[t] = context_class(x, k ? s[b].words[k - 1] : NULL);
			unsigned char o = x->oov[t];
			for (size_t i = 1; i < x->n; i++)
				if (x->oov[i * x->cap + t] != o) {
					const llr_model *in = x->comp[o ? i : 0], *out = x->comp[o ? 0 : i];
					return llr_err_set(err, LLR_EINVAL,
					                   "'%s' is in the vocabulary of %s but not of %s: a mixture needs one vocabulary",
					                   k < s[b].n ? s[b].words[k] : LLR_EOS, in->path, out->path);
				}
			if (oov)
				oov[t - off] = o;
		}
	*tokens = t - off;
	return LLR_OK;
}

/* The tokens of B sentences (each n + 1 predictions). */
static size_t count_tokens(const llr_sentence *s, size_t B)
{
	size_t T = 0;
	for (size_t b = 0; b < B; b++)
		T += s[b].n + 1;
	return T;
}

/* log sum_i w_i e^{lp_i} of token t. */
static double mix_at(const mixture *x, const double *w, size_t t)
{
	double top = -INFINITY, sum = 0;
	for (size_t i = 0; i < x->n; i++)
		if (w[i] > 0 && x->lp[i * x->cap + t] > top)
			top = x->lp[i * x->cap + t];
	if (top == -INFINITY)
		return -INFINITY;
	for (size_t i = 0; i < x->n; i++)
		if (w[i] > 0)
			sum += w[i] * exp(x->lp[i * x->cap + t] - top);
	return top + log(sum);
}

static int mixture_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov,
                         llr_norm_stat *norm, llr_err *err)
{
	mixture *x = m->state;
	size_t T;
	int rc = reserve(x, count_tokens(s, B), err);
	if (rc < 0 || (rc = score_components(m, s, B, 0, oov, m->opts.check_norm ? norm : NULL, &T, err)) < 0)
		return rc;
	for (size_t t = 0; t < T; t++)
		logp[t] = mix_at(x, weights_at(x, t), t);
	return LLR_OK;
}

static int mixture_set_threads(llr_model *m, int n, llr_err *err)
{
	mixture *x = m->state;
	for (size_t i = 0; i < x->n; i++) {
		int rc = llr_model_set_threads(x->comp[i], n, err);
		if (rc < 0)
			return rc;
	}
	return LLR_OK;
}

const llr_family llr_family_mixture = {
	.name = "mixture",
	.what = "mixtures",
	.sniff = mixture_sniff,
	.open = mixture_open,
	.close = mixture_close,
	.describe = mixture_describe,
	.meta = mixture_meta,
	.score = mixture_score,
	.set_threads = mixture_set_threads,
};

int llr_model_open_mixture(size_t n, const char *const *paths, const double *weights, const llr_model_opts *opts,
                           llr_model **out, llr_err *err)
{
	*out = NULL;
	double uniform[MIX_MAX];
	if (!weights && n >= 1 && n <= MIX_MAX) {
		for (size_t i = 0; i < n; i++)
			uniform[i] = 1.0 / (double)n;
		weights = uniform;
	}
	int rc = n >= 1 && n <= MIX_MAX ? check_weights("mixture", weights, n, err)
	                                : llr_err_set(err, LLR_EINVAL, "mixture: %zu components (1 to %d)", n, MIX_MAX);
	if (rc < 0)
		return rc;
	llr_model *m = llr_calloc(1, sizeof *m);
	mixture *x = llr_calloc(1, sizeof *x);
	if (m)
		m->path = llr_strndup("mixture", 7);
	if (!m || !x || !m->path) {
		free(x);
		llr_model_close(m);
		return llr_err_set(err, LLR_ENOMEM, "mixture: out of memory");
	}
	m->fam = &llr_family_mixture;
	m->opts = opts ? *opts : llr_model_opts_default();
	m->state = x;
	if ((rc = open_components(x, "mixture", n, paths, &m->opts, err)) < 0) {
		llr_model_close(m);
		return rc;
	}
	memcpy(x->w, weights, n * sizeof *weights);
	*out = m;
	return LLR_OK;
}

int llr_model_mixture_weights(const llr_model *m, double *weights, size_t n)
{
	if (m->fam != &llr_family_mixture)
		return 0;
	const mixture *x = m->state;
	for (size_t i = 0; i < n && i < x->n; i++)
		weights[i] = x->w[i];
	return (int)x->n;
}

/* One EM pass over T tokens: token t has the weights w + k n of its
 * class k (cls[t], or 0 for every token when cls is NULL); nw[k n + i]
 * gets the sum over class k's tokens of component i's posterior.  The
 * mean log-likelihood per token under w returned. */
static double em_pass(const mixture *x, size_t T, const double *w, const unsigned char *cls, double *nw, size_t nclasses)
{
	double ll = 0;
	memset(nw, 0, nclasses * x->n * sizeof *nw);
	for (size_t t = 0; t < T; t++) {
		size_t k = cls ? cls[t] : 0;
		const double *wk = w + k * x->n;
		double lt = mix_at(x, wk, t);
		ll += lt;
		for (size_t i = 0; i < x->n; i++)
			if (wk[i] > 0)
				nw[k * x->n + i] += wk[i] * exp(x->lp[i * x->cap + t] - lt);
	}
	return ll / (double)T;
}

int llr_model_mixture_by_context(llr_model *m, const char *counts, llr_err *err)
{
	if (m->fam != &llr_family_mixture)
		return llr_err_set(err, LLR_EINVAL, "%s: not a mixture (llr_model_open_mixture)", m->path);
	mixture *x = m->state;
	llr_vocab *v = llr_vocab_new();
	if (!v)
		return llr_err_set(err, LLR_ENOMEM, "mixture: out of memory");
	llr_lines *l = llr_lines_open(counts, 0, err);
	int rc = l ? llr_vocab_read(v, l, err) : LLR_EIO;
	if (l)
		llr_lines_close(l);
	if (rc >= 0 && llr_vocab_size(v) == 0)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no token<TAB>count line: the context counts are a vocab(1) file", counts);
	double *cw = rc >= 0 ? llr_calloc(MIX_CLASSES * x->n, sizeof *cw) : NULL;
	unsigned char *cls = cw ? llr_calloc(x->cap ? x->cap : 1, 1) : NULL;
	if (rc >= 0 && !cls)
		rc = llr_err_set(err, LLR_ENOMEM, "mixture: out of memory");
	if (rc < 0) {
		llr_vocab_free(v);
		free(cw);
		return rc;
	}
	llr_vocab_free(x->ctx);
	free(x->cw);
	free(x->cls);
	x->ctx = v;
	x->cw = cw;
	x->cls = cls;
	int32_t eos = llr_vocab_id(v, LLR_EOS, strlen(LLR_EOS));
	x->bos_count = eos < 0 ? 0 : llr_vocab_count(v, eos);
	for (size_t k = 0; k < MIX_CLASSES; k++)
		memcpy(x->cw + k * x->n, x->w, x->n * sizeof *x->w);
	memset(x->ctok, 0, sizeof x->ctok);
	return LLR_OK;
}

int llr_model_mixture_class_weights(const llr_model *m, int k, double *weights, size_t n, int64_t *tokens)
{
	if (m->fam != &llr_family_mixture || k < 0 || k >= MIX_CLASSES)
		return LLR_EINVAL;
	const mixture *x = m->state;
	if (!x->ctx)
		return LLR_EINVAL;
	for (size_t i = 0; i < n && i < x->n; i++)
		weights[i] = x->cw[(size_t)k * x->n + i];
	*tokens = x->ctok[k];
	return x->ctok[k] >= CLASS_MIN;
}

/* Each context class with CLASS_MIN tuning predictions or more gets its
 * own weights, by EM from the pooled ones, the classes stepping together
 * until an iteration gains less than fit->tol nats per token overall or
 * after fit->max_iters; the others keep the pooled weights. */
static void fit_classes(mixture *x, size_t T, llr_mixture_fit *fit)
{
	size_t n = x->n;
	double nw[MIX_CLASSES * MIX_MAX], before = -INFINITY;
	memset(x->ctok, 0, sizeof x->ctok);
	for (size_t t = 0; t < T; t++)
		x->ctok[x->cls[t]]++;
	fit->classes = 0;
	for (size_t k = 0; k < MIX_CLASSES; k++) {
		memcpy(x->cw + k * n, x->w, n * sizeof *x->w);
		fit->classes += x->ctok[k] >= CLASS_MIN;
	}
	fit->class_iters = 0;
	while (fit->class_iters < fit->max_iters) {
		double ll = em_pass(x, T, x->cw, x->cls, nw, MIX_CLASSES);
		if (ll - before < fit->tol)
			break;
		for (size_t k = 0; k < MIX_CLASSES; k++)
			for (size_t i = 0; x->ctok[k] >= CLASS_MIN && i < n; i++)
				x->cw[k * n + i] = nw[k * n + i] / (double)x->ctok[k];
		fit->class_iters++;
		before = ll;
	}
}

int llr_model_tune_mixture(llr_model *m, const llr_sentence *s, size_t B, llr_mixture_fit *fit, llr_err *err)
{
	if (m->fam != &llr_family_mixture)
		return llr_err_set(err, LLR_EINVAL, "%s: not a mixture (llr_model_open_mixture)", m->path);
	if (B == 0)
		return llr_err_set(err, LLR_EINVAL, "mixture: no sentences to fit the weights on");
	mixture *x = m->state;
	size_t T = count_tokens(s, B), off = 0;
	int rc = reserve(x, T, err);
	for (size_t b = 0; rc == LLR_OK && b < B; b += TUNE_BATCH) {
		size_t got;
		rc = score_components(m, s + b, LLR_MIN(TUNE_BATCH, B - b), off, NULL, NULL, &got, err);
		off += got;
	}
	if (rc < 0)
		return rc;
	double nw[MIX_CLASSES * MIX_MAX], before = -INFINITY;
	for (size_t i = 0; i < x->n; i++)
		x->w[i] = 1.0 / (double)x->n;
	fit->iters = 0;
	while (fit->iters < fit->max_iters) {
		double ll = em_pass(x, T, x->w, NULL, nw, 1);
		if (!isfinite(ll))
			return llr_err_set(err, LLR_EINVAL, "mixture: a token has probability 0 in every component");
		if (ll - before < fit->tol)
			break;
		for (size_t i = 0; i < x->n; i++)
			x->w[i] = nw[i] / (double)T;
		fit->iters++;
		before = ll;
	}
	fit->classes = 0;
	fit->class_iters = 0;
	fit->pooled_logp = em_pass(x, T, x->w, NULL, nw, 1) * (double)T;
	fit->logp = fit->pooled_logp;
	if (x->ctx) {
		fit_classes(x, T, fit);
		fit->logp = em_pass(x, T, x->cw, x->cls, nw, MIX_CLASSES) * (double)T;
	}
	fit->tokens = (int64_t)T;
	return LLR_OK;
}
