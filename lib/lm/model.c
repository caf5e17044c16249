/*
 * model.c - model files (kind "model", llrnn-model(5)): saving a trained
 * network with its lexicon and training state, loading it back with every
 * shape and weight checked, and checking that a features stream is the one
 * a model was trained on.  It does no training (tools/train.c) and no
 * arithmetic beyond checks (net.c).
 *
 * Layout: meta; the lexicon members (llr_lexicon_write); with a
 * character-aware input `chars` (int32: the character vocabulary's code
 * points); with a tree or classes output `tree/group` (int32 [V]: the
 * group of every word); params/<name>
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

void llr_rnnlm_free(llr_rnnlm *m)
{
	if (!m)
		return;
	llr_net_free(m->net);
	llr_words_free(m->words);
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

static const char *const out_names[] = {[LLR_OUT_LOGLINEAR] = "loglinear", [LLR_OUT_SOFTMAX] = "softmax", [LLR_OUT_TREE] = "tree", [LLR_OUT_CLASSES] = "classes"};

static const char *output_name(int output)
{
	return out_names[output];
}

static int get_dim(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err);

/* A list "1,2,3" of at most LLR_MAX_CHAR_WIDTHS positive numbers. */
static int parse_list(const char *s, int32_t *out, int *n)
{
	*n = 0;
	while (s && *s) {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (end == s || errno || v < 1 || v > 65536 || *n == LLR_MAX_CHAR_WIDTHS || (*end && *end != ','))
			return -1;
		out[(*n)++] = (int32_t)v;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -1;
}

/* The recurrent cell of the meta: lstm when it has no key cell (files
 * before issue 52); a variable-computation cell's sharpness vc_lambda. */
static int config_cell(const llr_meta *meta, llr_net_config *c, llr_err *err)
{
	const char *cell = llr_meta_get(meta, "cell");
	c->cell = -1;
	for (int i = 0; i < LLR_CELL_COUNT; i++)
		if (!cell ? i == LLR_CELL_LSTM : !strcmp(cell, llr_cell_name(i)))
			c->cell = i;
	if (c->cell < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: cell=%s is not lstm, gru, rnn, vcrnn or vcgru", cell);
	if (!llr_cell_is_vc(c->cell))
		return LLR_OK;
	double lam;
	int rc = llr_meta_get_f64(meta, "vc_lambda", &lam, err);
	if (rc < 0)
		return rc;
	if (!(lam > 0.0 && lam <= 1e6))
		return llr_err_set(err, LLR_EFORMAT, "meta: vc_lambda=%g out of range (0, 1e6]", lam);
	c->vc_lambda = (float)lam;
	return LLR_OK;
}

/* The character-aware input and the tree of the meta. */
static int config_x(const llr_meta *meta, llr_net_config *c, llr_err *err)
{
	const char *in = llr_meta_get(meta, "input"), *comb = llr_meta_get(meta, "combine");
	int rc;
	if (!in || !strcmp(in, "word"))
		c->input = LLR_IN_WORD;
	else if (!strcmp(in, "chars"))
		c->input = LLR_IN_CHARS;
	else if (!strcmp(in, "word+chars") && (!comb || !strcmp(comb, "concat")))
		c->input = LLR_IN_CONCAT;
	else if (!strcmp(in, "word+chars") && !strcmp(comb, "sum"))
		c->input = LLR_IN_SUM;
	else
		return llr_err_set(err, LLR_EFORMAT, "meta: input=%s%s%s is not word, chars or word+chars with combine=concat|sum", in, comb ? ", combine=" : "", comb ? comb : "");
	if (c->input != LLR_IN_WORD) {
		int32_t hw;
		int nf;
		if ((rc = get_dim(meta, "char_vocab", 0, 1 << 21, &c->char_vocab, err)) < 0 ||
		    (rc = get_dim(meta, "char_embed", 1, 4096, &c->char_embed, err)) < 0 ||
		    (rc = get_dim(meta, "highway", 0, 8, &hw, err)) < 0)
			return rc;
		c->highway = hw;
		if (parse_list(llr_meta_get(meta, "char_widths"), c->char_width, &c->char_nw) < 0 ||
		    parse_list(llr_meta_get(meta, "char_filters"), c->char_filters, &nf) < 0 || nf != c->char_nw)
			return llr_err_set(err, LLR_EFORMAT, "meta: char_widths=%s, char_filters=%s: need two lists of as many positive numbers",
			                   llr_meta_get(meta, "char_widths") ? llr_meta_get(meta, "char_widths") : "(missing)",
			                   llr_meta_get(meta, "char_filters") ? llr_meta_get(meta, "char_filters") : "(missing)");
	}
	if (c->output == LLR_OUT_CLASSES)
		return get_dim(meta, "classes", 2, INT32_MAX, &c->tree_arity, err);
	if (c->output == LLR_OUT_TREE) {
		int32_t d;
		if ((rc = get_dim(meta, "tree_depth", 2, 8, &d, err)) < 0 || (rc = get_dim(meta, "tree_arity", 2, INT32_MAX, &c->tree_arity, err)) < 0 ||
		    (rc = get_dim(meta, "tree_cap", 1, INT32_MAX, &c->tree_cap, err)) < 0)
			return rc;
		c->tree_depth = d;
	}
	return LLR_OK;
}

static int config_x_to_meta(const llr_net_config *c, llr_meta *meta)
{
	int rc = LLR_OK;
	if (c->cell != LLR_CELL_LSTM)
		rc = llr_meta_set(meta, "cell", llr_cell_name(c->cell));
	if (rc >= 0 && llr_cell_is_vc(c->cell))
		rc = llr_meta_setf(meta, "vc_lambda", "%.9g", (double)c->vc_lambda);
	if (rc >= 0)
		rc = llr_meta_set(meta, "input", c->input == LLR_IN_WORD ? "word" : c->input == LLR_IN_CHARS ? "chars"
		                                                                                             : "word+chars");
	if (rc >= 0 && (c->input == LLR_IN_CONCAT || c->input == LLR_IN_SUM))
		rc = llr_meta_set(meta, "combine", c->input == LLR_IN_SUM ? "sum" : "concat");
	if (rc >= 0 && c->input != LLR_IN_WORD) {
		llr_buf w = {0}, f = {0};
		for (int k = 0; k < c->char_nw && rc >= 0; k++)
			if ((rc = llr_buf_printf(&w, "%s%d", k ? "," : "", (int)c->char_width[k])) >= 0)
				rc = llr_buf_printf(&f, "%s%d", k ? "," : "", (int)c->char_filters[k]);
		if (rc >= 0)
			rc = llr_meta_setf(meta, "char_vocab", "%d", (int)c->char_vocab);
		if (rc >= 0)
			rc = llr_meta_setf(meta, "char_embed", "%d", (int)c->char_embed);
		if (rc >= 0)
			rc = llr_meta_set(meta, "char_widths", w.data);
		if (rc >= 0)
			rc = llr_meta_set(meta, "char_filters", f.data);
		if (rc >= 0)
			rc = llr_meta_setf(meta, "highway", "%d", c->highway);
		llr_buf_free(&w);
		llr_buf_free(&f);
	}
	if (rc >= 0 && c->output == LLR_OUT_CLASSES)
		rc = llr_meta_setf(meta, "classes", "%d", c->tree_arity);
	if (rc >= 0 && c->output == LLR_OUT_TREE) {
		if ((rc = llr_meta_setf(meta, "tree_depth", "%d", c->tree_depth)) >= 0 && (rc = llr_meta_setf(meta, "tree_arity", "%d", c->tree_arity)) >= 0)
			rc = llr_meta_setf(meta, "tree_cap", "%d", (int)c->tree_cap);
	}
	return rc;
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

/* The sizes a lexicon fixes, for c->output: V, and the columns of phi
 * and psi (softmax: V for both). */
static void lexicon_sizes(const llr_lexicon *x, llr_net_config *c)
{
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	c->vocab = V;
	if (c->output != LLR_OUT_LOGLINEAR || !x->phi) {
		c->feat_out = c->feat_in = V;
	} else {
		c->feat_out = x->phi->cols;
		c->feat_in = x->psi ? x->psi->cols : x->phi->cols;
	}
}

int llr_rnnlm_config(const llr_meta *meta, const llr_lexicon *x, llr_net_config *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	const char *out = llr_meta_get(meta, "output");
	if (!out)
		return llr_err_set(err, LLR_EFORMAT, "meta: missing key 'output'");
	if (!strcmp(out, "loglinear"))
		c->output = LLR_OUT_LOGLINEAR;
	else if (!strcmp(out, "softmax"))
		c->output = LLR_OUT_SOFTMAX;
	else if (!strcmp(out, "tree"))
		c->output = LLR_OUT_TREE;
	else if (!strcmp(out, "classes"))
		c->output = LLR_OUT_CLASSES;
	else
		return llr_err_set(err, LLR_EFORMAT, "meta: output=%s is not loglinear, softmax, tree or classes", out);
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
	if ((rc = config_x(meta, c, err)) < 0 || (rc = config_cell(meta, c, err)) < 0)
		return rc;
	lexicon_sizes(x, c);
	return LLR_OK;
}

/* ------------------------------------------------------------ building */

/* llr_rnnlm_net_new, its parameters allocated or (empty) left for
 * llr_net_params_grow. */
static llr_net *net_new(const llr_lexicon *x, const llr_net_config *c, int empty, llr_err *err)
{
	llr_net_config cf = *c;
	if (cf.output == LLR_OUT_LOGLINEAR && !x->phi)
		return llr_err_set(err, LLR_EINVAL, "network: log-linear output needs the lexicon's phi"), NULL;
	lexicon_sizes(x, &cf);
	if (cf.output != LLR_OUT_LOGLINEAR && x->fsa)
		return llr_err_set(err, LLR_EINVAL, "network: an automaton background needs the log-linear output"), NULL;
	llr_net *(*make)(const llr_net_config *, const llr_csr *, const llr_csr *, const float *, llr_err *) = empty ? llr_net_new_empty : llr_net_new;
	if (cf.output != LLR_OUT_LOGLINEAR)
		return make(&cf, NULL, NULL, NULL, err);
	llr_net *net = make(&cf, x->phi, x->psi, x->logb, err);
	if (net && ((x->bg && llr_net_set_ngram_bg(net, x->bg, err) < 0) || (x->fsa && llr_net_set_fsa_bg(net, x->fsa, x->unk_id, err) < 0))) {
		llr_net_free(net);
		return NULL;
	}
	return net;
}

llr_net *llr_rnnlm_net_new(const llr_lexicon *x, const llr_net_config *c, llr_err *err)
{
	return net_new(x, c, 0, err);
}

llr_rnnlm *llr_rnnlm_new(llr_lexicon *x, const llr_net_config *c, llr_err *err)
{
	llr_rnnlm *m = llr_calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "model: out of memory"), NULL;
	llr_net_config cf = *c;
	if (cf.input != LLR_IN_WORD) {
		if (!(m->words = llr_words_new(x->vocab, NULL, 0, err))) {
			free(m);
			return NULL;
		}
		llr_words_chars(m->words, &cf.char_vocab);
	}
	m->net = llr_rnnlm_net_new(x, &cf, err);
	if (!m->net) {
		llr_words_free(m->words);
		free(m);
		return NULL;
	}
	if (m->words)
		llr_net_set_words(m->net, m->words);
	m->meta = llr_meta_new();
	if (!m->meta) {
		llr_net_free(m->net);
		llr_words_free(m->words);
		free(m);
		return llr_err_set(err, LLR_ENOMEM, "model: out of memory"), NULL;
	}
	m->lex = x;
	return m;
}

/* ------------------------------------------------------------- fitting */

int llr_rnnlm_fits(const llr_rnnlm *m, const llr_lexicon *x, llr_err *err)
{
	return llr_lexicon_same(m->lex, x, "the model", "here", err);
}

/* -------------------------------------------------------------- saving */

/* Keys the writer computes itself, never copied from m->meta. */
static int derived_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "output", "embed", "hidden", "layers", "dropout", "n_params",
	                            "input", "combine", "char_vocab", "char_embed", "char_widths", "char_filters", "highway",
	                            "classes", "tree_depth", "tree_arity", "tree_cap", "cell", "vc_lambda", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int put_f32(llr_tensor_writer *w, const char *name, int ndim, const int64_t *shape, const float *data, llr_err *err)
{
	return llr_tw_put_raw(w, name, LLR_F32, ndim, shape, data, err);
}

static int write_model(llr_tensor_writer *w, const llr_rnnlm *m, const llr_train_state *ts, llr_err *err)
{
	int rc = llr_lexicon_write(w, m->lex, err);
	if (rc < 0)
		return rc;
	llr_net *net = m->net;
	const llr_net_config *c = llr_net_cfg(net);
	if (c->input != LLR_IN_WORD) {
		int32_t ncp;
		const int32_t *cps = m->words ? llr_words_chars(m->words, &ncp) : NULL;
		if (!cps || ncp != c->char_vocab)
			return llr_err_set(err, LLR_EINVAL, "model: a character-aware network without its character vocabulary");
		int64_t sh[1] = {ncp};
		if ((rc = llr_tw_put_raw(w, "chars", LLR_I32, 1, sh, cps, err)) < 0)
			return rc;
	}
	const int32_t *group = llr_net_tree_groups(net);
	if (group) {
		int64_t sh[1] = {c->vocab};
		if ((rc = llr_tw_put_raw(w, "tree/group", LLR_I32, 1, sh, group, err)) < 0)
			return rc;
	}
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

	return llr_state_write(w, ts, cur, n, err);
}

int llr_rnnlm_save(const char *path, const llr_rnnlm *m, const llr_train_state *ts, llr_err *err)
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
		rc = config_x_to_meta(c, meta);
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

/* Read the current member as float32 of the given shape (n values) into
 * the net's parameters at off, made room for once the data has arrived;
 * *par is the parameter array after. */
static int read_f32(loader *L, llr_net *net, size_t off, int ndim, const int64_t *shape, size_t n, float **par, llr_err *err)
{
	llr_tensor *t = NULL;
	int rc = llr_tr_tensor_expect(L->r, LLR_F32, ndim, shape, &t, err);
	if (rc < 0)
		return rc;
	LLR_ASSERT(llr_tensor_numel(t) == n);
	if (!(*par = llr_net_params_grow(net, off + n, err))) {
		llr_tensor_free(t);
		return llr_err_prefix(err, "%s", L->path);
	}
	memcpy(*par + off, t->data, n * sizeof(float));
	llr_tensor_free(t);
	return LLR_OK;
}

/* The current member, which must be `name`: int32 [n] (caller frees). */
static int read_i32(loader *L, const char *name, int64_t n, int32_t **out, llr_err *err)
{
	if (!L->more)
		return llr_err_set(err, LLR_ETRUNC, "%s: truncated: %s missing", L->path, name);
	if (strcmp(L->name, name))
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s where %s was expected", L->path, L->name, name);
	llr_tensor *t = NULL;
	int64_t sh[1] = {n};
	int rc = llr_tr_tensor_expect(L->r, LLR_I32, 1, sh, &t, err);
	if (rc < 0)
		return rc; /* "path: member NAME: reason" already */
	*out = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	if ((rc = next(L, err)) < 0) { /* the next member's header is bad */
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* The character vocabulary and the tree's groups, when the network has them. */
static int load_x(loader *L, llr_rnnlm *m, const llr_net_config *c, llr_err *err)
{
	int32_t *a = NULL;
	int rc = LLR_OK;
	if (c->input != LLR_IN_WORD) {
		if ((rc = read_i32(L, "chars", c->char_vocab, &a, err)) < 0)
			return rc;
		m->words = llr_words_new(m->lex->vocab, a, c->char_vocab, err);
		free(a);
		a = NULL;
		if (!m->words)
			return llr_err_prefix(err, "%s: chars", L->path);
		llr_net_set_words(m->net, m->words);
	}
	if (c->output == LLR_OUT_TREE || c->output == LLR_OUT_CLASSES) {
		if ((rc = read_i32(L, "tree/group", c->vocab, &a, err)) < 0)
			return rc;
		rc = llr_net_tree_set_groups(m->net, a, err);
		free(a);
		if (rc < 0)
			return llr_err_prefix(err, "%s: tree/group", L->path);
	}
	return rc;
}

static int load(loader *L, llr_rnnlm *m, llr_train_state **tsp, llr_err *err)
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
	if ((rc = llr_rnnlm_config(meta, m->lex, &c, err)) < 0)
		return llr_err_prefix(err, "%s", L->path);
	/* the parameters grow tensor by tensor as their data arrives: a meta
	 * that declares a huge network over a short file is not allocated */
	m->net = net_new(m->lex, &c, 1, err);
	if (!m->net)
		return llr_err_prefix(err, "%s", L->path), llr_err_code(err, LLR_EFORMAT);
	size_t n;
	float *par = llr_net_params(m->net, &n);
	int64_t np;
	if (llr_meta_get(meta, "n_params") && (llr_meta_get_i64(meta, "n_params", &np, NULL) < 0 || np != (int64_t)n))
		return llr_err_set(err, LLR_EFORMAT, "%s: n_params=%s but the configuration has %zu parameters", L->path, llr_meta_get(meta, "n_params"), n);

	if ((rc = next(L, err)) < 0 || (rc = load_x(L, m, &c, err)) < 0)
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
		if ((rc = read_f32(L, m->net, off, nd, shape, cnt, &par, err)) < 0)
			return rc;
		if (!all_finite(par + off, cnt))
			return bad(L, LLR_ENAN, want, "NaN weights", err);
		if ((rc = next(L, err)) < 0)
			return rc;
	}
	if (!llr_net_params_grow(m->net, n, err)) /* the gradients, and a net of no tensors */
		return llr_err_prefix(err, "%s", L->path);
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
	size_t n_;
	float *cur = llr_net_params(m->net, &n_);
	return llr_state_read(L->r, L->path, L->name, cur, n_, ts, err);
}

int llr_rnnlm_load_state(const char *path, llr_rnnlm **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	if (tsp)
		*tsp = NULL;
	loader L = {.path = path ? path : "<stdin>"};
	L.r = llr_tr_open(path, MODEL_KIND, err);
	if (!L.r)
		return llr_err_code(err, LLR_EIO);
	llr_rnnlm *m = llr_calloc(1, sizeof *m);
	if (!m) {
		llr_tr_close(L.r);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", L.path);
	}
	int rc = load(&L, m, tsp, err);
	llr_tr_close(L.r);
	if (rc < 0) {
		llr_rnnlm_free(m);
		if (tsp) {
			llr_train_state_free(*tsp);
			*tsp = NULL;
		}
		return rc;
	}
	*out = m;
	return LLR_OK;
}

int llr_rnnlm_load(const char *path, llr_rnnlm **out, llr_err *err)
{
	return llr_rnnlm_load_state(path, out, NULL, err);
}
