/*
 * trainer.c - the LSTM language model's side of train(1): its options
 * (the network, the character-aware input and the tree and class outputs
 * of Jernite's thesis, chapters 2 and 3, its variable-computation cells
 * of section 2.4; open-vocabulary training), the
 * checks among them, and the setup of a run: the featurize streams read
 * as one corpus (this rank's share), the new model or the resumed one
 * checked against the options it fixes, open or closed training, the
 * validation text, the meta, and the job for the training driver.  The
 * default family: train trains it when no other is asked for.
 */
#include "family/family.h"
#include "family/rnnlm/lmtrain.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define VC_SECTION "Variable-computation cells (train --cell):"
static const llr_train_opt opts[] = {
	{"closed", 0, LLR_TOPT_FLAG, 0, .help = "train a closed vocabulary even with a spelling model"},
	{"no-bias-fit", 0, LLR_TOPT_FLAG, 0, .help = "open training: do not fit the output bias first"},
	{"init", 0, LLR_TOPT_CHOICE, 0, .choices = "uniform|torch", .dflt = "torch", .arg = "torch|uniform",
	 .help = "how the initial weights are drawn", .bad = "expected uniform or torch, not '%s'"},
	{"output", 0, LLR_TOPT_CHOICE, 0, .choices = "loglinear|softmax|tree|classes|ll", .arg = "loglinear|softmax|tree|classes",
	 .help = "the output layer", .bad = "'%s' is not loglinear, softmax, tree or classes"},
	{"input", 0, LLR_TOPT_CHOICE, 0, .choices = "word|chars|word+chars", .arg = "word|chars|word+chars",
	 .help = "the LSTM's input (default word)", .bad = "'%s' is not word, chars or word+chars"},
	{"combine", 0, LLR_TOPT_CHOICE, 0, .choices = "concat|sum", .arg = "concat|sum",
	 .help = "how word+chars combines them (default concat)", .bad = "'%s' is neither concat nor sum"},
	{"char-embed", 0, LLR_TOPT_INT, 0, 1, 4096, .dflt = "15", .arg = "n", .help = "character embedding size (default 15)"},
	{"char-filters", 0, LLR_TOPT_TEXT, 0, .arg = "w:n,...", .help = "the character filters: n of each width w"},
	{"highway", 0, LLR_TOPT_INT, 0, 0, 8, .dflt = "1", .arg = "n", .help = "highway layers, 0 to 8 (default 1)"},
	{"classes", 0, LLR_TOPT_INT, 0, 2, INT32_MAX, .arg = "n", .help = "with --output classes: the number of classes"},
	{"tree-depth", 0, LLR_TOPT_INT, 0, 2, 8, .arg = "n", .help = "with --output tree: choices per word (default 3)"},
	{"tree-arity", 0, LLR_TOPT_INT, 0, 2, 1 << 20, .arg = "n", .help = "children of every node"},
	{"tree-cap", 0, LLR_TOPT_INT, 0, 1, INT32_MAX, .arg = "n", .help = "words per group at most"},
	{"tree-update", 0, LLR_TOPT_INT, 0, 0, INT32_MAX, .dflt = "100", .arg = "n",
	 .help = "re-learn the tree every n batches of the first epoch"},
	{"cell", 0, LLR_TOPT_CHOICE, 0, .choices = "lstm|gru|rnn|vcrnn|vcgru", .dflt = "lstm", .arg = "lstm|gru|rnn|vcrnn|vcgru",
	 .help = "the recurrent cell (default lstm)", .bad = "'%s' is not lstm, gru, rnn, vcrnn or vcgru", .section = VC_SECTION},
	{"vc-target", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1, .dflt = "0.5", .arg = "m",
	 .help = "vcrnn, vcgru: the target mean of m_t, in (0, 1] (default 0.5)", .section = VC_SECTION},
	{"vc-penalty", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0", .arg = "w",
	 .help = "vcrnn, vcgru: weight of the L1 penalty |m_t - target| (default 0)", .section = VC_SECTION},
	{"layers", 0, LLR_TOPT_INT, 0, 1, 64, .dflt = "2", .arg = "n", .help = "LSTM layers (default 2; 1 with the other cells)"},
	{"hidden", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "256", .arg = "n", .help = "LSTM size (default 256)"},
	{"embed", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "256", .arg = "n", .help = "embedding size (default 256)"},
	{"dropout", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.95, .arg = "p", .help = "dropout probability in training (default 0)"},
	{"max-len", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "256", .arg = "n",
	 .help = "longest piece predicted at once, in tokens (default 256)"},
	{0},
};

/* The options as the setup uses them. */
typedef struct lmo {
	llr_net_config net; /* input, char_*, highway, tree_*, and the sizes */
	int output;         /* 0: by the stream */
	int layers, hidden, embed, batch, max_len, optim, init, tree_update;
	double dropout, lr, eps, vc_target, vc_penalty;
	uint64_t seed;
	llr_train_common run;
	int nmore; /* further streams: operands 1 .. */
} lmo;

/* --cell's choices in order. */
static const int cells[] = {LLR_CELL_LSTM, LLR_CELL_GRU, LLR_CELL_RNN, LLR_CELL_VCRNN, LLR_CELL_VCGRU};

static const int outputs[] = {LLR_OUT_LOGLINEAR, LLR_OUT_SOFTMAX, LLR_OUT_TREE, LLR_OUT_CLASSES, LLR_OUT_LOGLINEAR};

static const char *output_name(int output)
{
	switch (output) {
	case LLR_OUT_SOFTMAX: return "softmax";
	case LLR_OUT_TREE: return "tree";
	case LLR_OUT_CLASSES: return "classes";
	default: return "loglinear";
	}
}

static int given_any(const llr_train_args *a, const char *const *names)
{
	for (; *names; names++)
		if (llr_train_args_given(a, *names))
			return 1;
	return 0;
}
static const char *const chars_opts[] = {"combine", "char-embed", "char-filters", "highway", NULL};
static const char *const tree_opts[] = {"tree-depth", "tree-arity", "tree-cap", "tree-update", NULL};

/* "1:25,2:50,...": width:filters pairs. */
static int parse_filters(llr_net_config *x, const char *arg, llr_err *err)
{
	const char *s = arg;
	x->char_nw = 0;
	while (*s) {
		char *end;
		errno = 0;
		long w = strtol(s, &end, 10), f = 0;
		int ok = end != s && *end == ':' && !errno && w >= 1 && w <= 48;
		if (ok) {
			s = end + 1;
			f = strtol(s, &end, 10);
			ok = end != s && !errno && f >= 1 && f <= 65536 && (*end == ',' || !*end);
		}
		if (!ok || x->char_nw == LLR_MAX_CHAR_WIDTHS)
			return llr_train_usage_err(err, "--char-filters: '%s' is not a list of at most %d width:count pairs (widths 1 to 48)", arg,
			                           LLR_MAX_CHAR_WIDTHS);
		x->char_width[x->char_nw] = (int32_t)w;
		x->char_filters[x->char_nw++] = (int32_t)f;
		s = *end ? end + 1 : end;
	}
	if (!x->char_nw)
		return llr_train_usage_err(err, "--char-filters: empty list");
	return LLR_OK;
}

/* The network's input and output fields: Kim et al. 2016's small
 * character model by default (15-dimensional characters, widths 1 to 6
 * with 25 w filters each, one highway layer), then the options given. */
static int net_opts(const llr_train_args *a, llr_net_config *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	c->char_nw = 6;
	for (int k = 0; k < 6; k++) {
		c->char_width[k] = k + 1;
		c->char_filters[k] = 25 * (k + 1);
	}
	c->input = (int)llr_train_args_int(a, "input"); /* LLR_IN_WORD, CHARS, CONCAT in order */
	c->cell = cells[llr_train_args_int(a, "cell")];
	c->vc_lambda = 0.1f;
	c->char_embed = (int)llr_train_args_int(a, "char-embed");
	c->highway = (int)llr_train_args_int(a, "highway");
	c->tree_depth = (int)llr_train_args_int(a, "tree-depth");
	c->tree_arity = (int)llr_train_args_int(a, llr_train_args_given(a, "classes") ? "classes" : "tree-arity");
	c->tree_cap = (int)llr_train_args_int(a, "tree-cap");
	const char *f = llr_train_args_str(a, "char-filters");
	return f ? parse_filters(c, f, err) : LLR_OK;
}

static int output_of(const llr_train_args *a)
{
	return llr_train_args_given(a, "output") ? outputs[llr_train_args_int(a, "output")] : 0;
}

/* The cells' options: one layer but for the LSTM (vc.c's layers do not
 * stack yet); a variable-computation cell's target in (0, 1]. */
static int check_vc(const llr_train_args *a, int cell, llr_err *err)
{
	int vc_opts = llr_train_args_given(a, "vc-target") || llr_train_args_given(a, "vc-penalty");
	if (!(llr_train_args_num(a, "vc-target") > 0))
		return llr_train_usage_err(err, "--vc-target: %g: the target mean of m_t must be in (0, 1]", llr_train_args_num(a, "vc-target"));
	if (!llr_cell_is_vc(cell) && vc_opts && !llr_train_args_given(a, "resume"))
		return llr_train_usage_err(err, "--vc-target and --vc-penalty need --cell vcrnn or vcgru");
	if (cell != LLR_CELL_LSTM && llr_train_args_int(a, "layers") > 1 && llr_train_args_given(a, "layers"))
		return llr_train_usage_err(err, "--cell %s: --layers %d: %s has one layer (its layers do not stack yet)", llr_cell_name(cell),
		                           (int)llr_train_args_int(a, "layers"), llr_cell_is_vc(cell) ? "a variable-computation cell" : "the cell");
	return LLR_OK;
}

/* Options that do not go together, and the streams. */
static int check(const llr_train_args *a, llr_err *err)
{
	llr_net_config n;
	int rc = net_opts(a, &n, err), output = output_of(a);
	int sum = llr_train_args_int(a, "combine") == 1;
	int set_chars = given_any(a, chars_opts), set_tree = given_any(a, tree_opts), set_classes = llr_train_args_given(a, "classes");
	if (rc < 0)
		return rc;
	if (llr_train_args_given(a, "resume") && (llr_train_args_given(a, "input") || set_chars || set_tree || set_classes))
		return llr_train_usage_err(
		    err, "--resume: the model's input and output cannot change (no --input, --combine, --char-*, --highway, --classes, --tree-*)");
	if (set_chars && n.input == LLR_IN_WORD)
		return llr_train_usage_err(err, "--combine, --char-embed, --char-filters and --highway need --input chars or word+chars");
	if (sum && n.input != LLR_IN_CONCAT)
		return llr_train_usage_err(err, "--combine sum needs --input word+chars");
	if (set_tree && output != LLR_OUT_TREE)
		return llr_train_usage_err(err, "--tree-depth, --tree-arity, --tree-cap and --tree-update need --output tree");
	if (set_classes && output != LLR_OUT_CLASSES)
		return llr_train_usage_err(err, "--classes needs --output classes");
	int D = 0;
	for (int k = 0; k < n.char_nw; k++)
		D += n.char_filters[k];
	if (sum && D != llr_train_args_int(a, "embed"))
		return llr_train_usage_err(err, "--combine sum: the %d filters of --char-filters must add up to --embed %d", D,
		                           (int)llr_train_args_int(a, "embed"));
	if ((rc = check_vc(a, n.cell, err)) < 0)
		return rc;
	for (int i = 1; i < llr_train_args_noperands(a); i++)
		if (!strcmp(llr_train_args_operand(a, i), "-"))
			return llr_train_usage_err(err, "'-' (stdin) can only be the first stream");
	return LLR_OK;
}

static void read_opts(const llr_train_args *a, const llr_train_comm *comm, lmo *o)
{
	memset(o, 0, sizeof *o);
	net_opts(a, &o->net, NULL); /* checked */
	if (llr_train_args_int(a, "combine") == 1)
		o->net.input = LLR_IN_SUM;
	o->output = output_of(a);
	o->layers = o->net.cell != LLR_CELL_LSTM && !llr_train_args_given(a, "layers") ? 1 : (int)llr_train_args_int(a, "layers");
	o->hidden = (int)llr_train_args_int(a, "hidden");
	o->vc_target = llr_train_args_num(a, "vc-target");
	o->vc_penalty = llr_train_args_num(a, "vc-penalty");
	o->embed = (int)llr_train_args_int(a, "embed");
	o->batch = (int)llr_train_args_int(a, "batch");
	o->max_len = (int)llr_train_args_int(a, "max-len");
	o->optim = llr_optim_parse(llr_train_args_str(a, "optim"));
	o->init = llr_train_args_int(a, "init") == 0 ? LLR_INIT_UNIFORM : LLR_INIT_TORCH;
	o->tree_update = (int)llr_train_args_int(a, "tree-update");
	o->dropout = llr_train_args_num(a, "dropout");
	o->lr = llr_train_args_num(a, "lr");
	o->eps = llr_train_args_num(a, "eps");
	o->seed = (uint64_t)llr_train_args_int(a, "seed");
	llr_train_args_common(a, comm, &o->run);
	o->nmore = llr_train_args_noperands(a) > 1 ? llr_train_args_noperands(a) - 1 : 0;
}

/* ------------------------------------------------------------ the run */

typedef struct lmrun {
	llr_rnnlm *model;
	llr_train_state *ts;
	llr_lm_corpus tc, vc;
	llr_lm_open *op;
} lmrun;

static void lmrun_free(void *p)
{
	lmrun *R = p;
	if (!R)
		return;
	llr_lm_corpus_free(&R->tc);
	llr_lm_corpus_free(&R->vc);
	llr_train_state_free(R->ts);
	llr_lm_open_free(R->op);
	llr_rnnlm_free(R->model);
	free(R);
}

/* --resume: the cell and a variable-computation cell's penalty bind. */
static int resume_vc(const llr_train_args *a, lmo *o, const llr_net_config *c, const llr_meta *m, llr_err *err)
{
	if (llr_train_args_given(a, "cell") && o->net.cell != c->cell)
		return llr_train_usage_err(err, "--cell %s: the resumed model's cell is %s", llr_cell_name(o->net.cell), llr_cell_name(c->cell));
	o->net.cell = c->cell;
	if (!llr_cell_is_vc(c->cell)) {
		if (llr_train_args_given(a, "vc-target") || llr_train_args_given(a, "vc-penalty"))
			return llr_train_usage_err(err, "--vc-target and --vc-penalty: the resumed model's cell is %s", llr_cell_name(c->cell));
		return LLR_OK;
	}
	int rc = llr_train_fixed_prob(a, "vc-target", "vc_target", &o->vc_target, llr_meta_num(m, "vc_target", o->vc_target), err);
	return rc < 0 ? rc : llr_train_fixed_prob(a, "vc-penalty", "vc_penalty", &o->vc_penalty, llr_meta_num(m, "vc_penalty", o->vc_penalty), err);
}

/* --resume: the options the model was trained with bind (contradicting
 * one is a usage error); then its limits for those not given. */
static int resume_fixed(const llr_train_args *a, lmo *o, const llr_rnnlm *model, llr_err *err)
{
	const llr_meta *m = model->meta;
	const llr_net_config *c = llr_net_cfg(model->net);
	char b[6][32];
	snprintf(b[0], 32, "%d", o->layers);
	snprintf(b[1], 32, "%d", o->hidden);
	snprintf(b[2], 32, "%d", o->embed);
	snprintf(b[3], 32, "%d", o->batch);
	snprintf(b[4], 32, "%d", o->max_len);
	snprintf(b[5], 32, "%llu", (unsigned long long)o->seed);
	int rc;
	if ((rc = llr_train_fixed(a, "output", m, "output", output_name(o->output), err)) < 0 ||
	    (rc = llr_train_fixed(a, "layers", m, "layers", b[0], err)) < 0 || (rc = llr_train_fixed(a, "hidden", m, "hidden", b[1], err)) < 0 ||
	    (rc = llr_train_fixed(a, "embed", m, "embed", b[2], err)) < 0 || (rc = llr_train_fixed(a, "batch", m, "batch", b[3], err)) < 0 ||
	    (rc = llr_train_fixed(a, "max-len", m, "max_len", b[4], err)) < 0 ||
	    (rc = llr_train_fixed(a, "optim", m, "optim", llr_optim_name(o->optim), err)) < 0 ||
	    (rc = llr_train_fixed_prob(a, "dropout", "dropout", &o->dropout, c->dropout, err)) < 0 ||
	    (rc = llr_train_fixed(a, "seed", m, "seed", b[5], err)) < 0)
		return rc;
	if ((rc = resume_vc(a, o, c, m, err)) < 0)
		return rc;
	o->output = c->output;
	o->layers = c->layers;
	o->hidden = c->hidden;
	o->embed = c->embed;
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->max_len = (int)llr_meta_num(m, "max_len", o->max_len);
	return LLR_OK;
}

/* The model and its training state come first. */
static int resume_load(const llr_train_args *a, lmo *o, lmrun *R, llr_err *err)
{
	int rc = llr_rnnlm_load_state(o->run.resume, &R->model, &R->ts, err);
	if (rc < 0)
		return rc;
	if (!R->ts)
		return llr_err_set(err, LLR_EFORMAT, "%s: no training state to resume from", o->run.resume);
	llr_train_note_checksums(a, o->run.resume, R->model->meta);
	if ((rc = resume_fixed(a, o, R->model, err)) < 0 ||
	    (rc = llr_train_limits_resume(&o->run.lim, o->run.lim_given, R->model->meta, o->run.resume, err)) < 0)
		return rc;
	if (!R->ts->optim)
		return llr_err_set(err, LLR_EFORMAT, "%s: the training state has no optimiser", o->run.resume);
	if ((rc = llr_train_optim_resume(R->ts, llr_train_args_given(a, "lr") ? o->lr : 0, o->eps, err)) < 0)
		return rc;
	if (o->batch < 1 || o->max_len < 1)
		return llr_err_set(err, LLR_EFORMAT, "%s: bad batch or max_len in meta", o->run.resume);
	if (o->run.valid == NULL && isfinite(R->ts->best_valid) && R->ts->best_epoch > 0)
		llr_train_note(a, "resuming without --valid: the best weights so far are dropped at the next epoch end");
	return LLR_OK;
}

/* Open a stream and read its lexicon. */
static llr_tensor_reader *open_stream(const llr_train_args *a, const char *path, const char *name, llr_lexicon **lex, llr_err *err)
{
	llr_tensor_reader *r = llr_tr_open(path, "features", err);
	if (!r)
		return NULL;
	llr_train_note_checksums(a, name, llr_tr_meta(r));
	if (llr_lexicon_read(r, lex, err) < 0) {
		if (strncmp(err->msg, name, strlen(name)))
			llr_err_prefix(err, "%s", name);
		llr_tr_close(r);
		return NULL;
	}
	return r;
}

/* The training streams: the first one's lexicon (*lex), and the
 * sentences of them all, read as one corpus (this rank's share).  Every
 * further stream must have that lexicon (shards featurized with one
 * --vocab and options). */
static int read_streams(const llr_train_args *a, const lmo *o, const char *sname, const llr_train_comm *comm, llr_lexicon **lex,
                        llr_lm_corpus *tc, llr_err *err)
{
	llr_tensor_reader *r = open_stream(a, o->run.stream, sname, lex, err);
	if (!r)
		return err->code;
	int rc = llr_lm_corpus_read(r, sname, *lex, o->max_len, comm, tc, err);
	llr_tr_close(r);
	for (int i = 0; rc == LLR_OK && i < o->nmore; i++) {
		const char *name = llr_train_args_operand(a, i + 1);
		llr_lexicon *x = NULL;
		llr_err e = {0};
		if (!(r = open_stream(a, name, name, &x, err)))
			return err->code;
		if (llr_lexicon_same(*lex, x, sname, name, &e) < 0)
			rc = llr_err_set(err, LLR_EFORMAT,
			                 "%s: not a shard of %s's corpus: %s (featurize every shard with the same --vocab and options)", name,
			                 sname, e.msg);
		llr_lexicon_free(x);
		if (rc == LLR_OK)
			rc = llr_lm_corpus_read(r, name, *lex, o->max_len, comm, tc, err);
		llr_tr_close(r);
	}
	if (rc == LLR_OK && (*lex)->fsa)
		rc = lm_corpus_check_fsa(tc, *lex, sname, o->max_len, err);
	return rc;
}

/* A new model for lex (llr_rnnlm_fresh), which owns lex from then on. */
static int new_model(const lmo *o, llr_lexicon *lex, lmrun *R, llr_err *err)
{
	llr_rnnlm_setup su = {
	    .net = o->net,
	    .init = o->init,
	    .optim = o->optim,
	    .lr = o->lr,
	    .eps = o->eps,
	    .batch = o->batch,
	    .max_len = o->max_len,
	    .clip = o->run.lim.clip,
	    .min_impr = o->run.lim.min_impr,
	    .seed = o->seed,
	};
	su.net.embed = o->embed;
	su.net.hidden = o->hidden;
	su.net.layers = o->layers;
	su.net.dropout = (float)o->dropout;
	su.net.output = o->output;
	return llr_rnnlm_fresh(lex, &su, &R->model, &R->ts, err);
}

/* Open-vocabulary training (llr_lm_open_new) when the model and stream
 * allow it; else the stream's words outside the vocabulary are trained
 * as <unk>.  A fresh model's output bias is then fitted. */
static int open_or_closed(const llr_train_args *a, const lmo *o, lmrun *R, int fresh, const llr_train_comm *comm, llr_err *err)
{
	int64_t outside;
	int closed = (int)llr_train_args_int(a, "closed");
	int rc = llr_lm_open_new(R->model, &R->tc, closed, &R->op, &outside, err);
	if (rc < 0)
		return rc;
	if (!R->op) {
		if (outside && !o->run.quiet)
			llr_train_note(a, "%lld training tokens outside the vocabulary trained as <unk> (%s)", (long long)outside,
			               closed ? "--closed"
			               : llr_net_cfg(R->model->net)->output != LLR_OUT_LOGLINEAR ? "not a log-linear output"
			                                                                        : "no open vocabulary for this input");
		return LLR_OK;
	}
	if (!o->run.quiet)
		llr_train_note(a, "open vocabulary: %d signatures, lambda %.6g; %lld training tokens outside the vocabulary, each as its signature",
		               llr_lm_open_sigs(R->op), R->model->lex->spell_lambda, (long long)outside);
	if (!fresh || llr_train_args_int(a, "no-bias-fit"))
		return LLR_OK;
	llr_fit_report rep;
	if ((rc = llr_lm_open_fit_bias(R->op, R->tc.ids, R->tc.n, comm, &rep, err)) < 0)
		return rc;
	const char *fit = llr_meta_get(R->model->meta, "open_bias_fit");
	if (!o->run.quiet)
		llr_train_note(a, "open vocabulary: output bias fitted context-free (%d Adam steps): mean log-likelihood %.4f -> %.4f, gradient norm %.2g",
		               rep.iters, rep.before, rep.after, rep.grad_norm);
	if (!o->run.quiet && fit)
		llr_train_note(a, "open vocabulary: fitted bias %s", fit);
	return LLR_OK;
}

/* Validation tokens (llr_lm_corpus_read_text): one sentence a line. */
static int read_valid(const llr_train_args *a, const lmo *o, lmrun *R, llr_err *err)
{
	int64_t skipped;
	int rc = llr_lm_corpus_read_text(o->run.valid, R->model, R->op, o->max_len, &R->vc, &skipped, err);
	if (rc >= 0 && R->model->lex->fsa)
		rc = lm_corpus_check_fsa(&R->vc, R->model->lex, strcmp(o->run.valid, "-") ? o->run.valid : "<stdin>", o->max_len, err);
	if (skipped)
		llr_train_note(a, "%s: %lld sentences with unknown words skipped (the vocabulary has no <unk>)",
		               strcmp(o->run.valid, "-") ? o->run.valid : "<stdin>", (long long)skipped);
	return rc;
}

/* The opening lines: the corpus, the model, the ranks. */
static void say_start(const llr_train_args *a, const lmo *o, const char *sname, const llr_train_comm *comm, const lmrun *R)
{
	size_t n;
	llr_net_params(R->model->net, &n);
	char at[64] = "";
	if (o->run.resume)
		snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)R->ts->epoch + 1);
	char more[48] = "";
	if (o->nmore)
		snprintf(more, sizeof more, " and %d more stream%s", o->nmore, o->nmore > 1 ? "s" : "");
	const llr_net_config *c = llr_net_cfg(R->model->net);
	char cell[32] = "";
	if (c->cell != LLR_CELL_LSTM)
		snprintf(cell, sizeof cell, ", %s cell", llr_cell_name(c->cell));
	llr_train_note(a, "%s%s: %lld sentences, %lld tokens, V %zu, %s output%s, %zu parameters%s", sname, more, (long long)R->tc.sentences,
	               (long long)R->tc.tokens, llr_strmap_size(R->model->lex->vocab), output_name(c->output), cell, n, at);
	if (comm && comm->on)
		llr_train_note(a, "distributed: %d ranks (rank 0 holds %lld of the %lld sentences), %zu bytes summed across them per step",
		               comm->size, (long long)R->tc.held, (long long)R->tc.sentences, llr_train_step_bytes(n));
}

/* The model (resumed, or new over the first stream's lexicon), open or
 * closed training, a new tree's groups, the validation text. */
static int setup(llr_train_args *a, lmo *o, const char *sname, const llr_train_comm *comm, lmrun *R, llr_err *err)
{
	int rc;
	if (o->run.resume && (rc = resume_load(a, o, R, err)) < 0)
		return rc;
	llr_lexicon *lex = NULL;
	if ((rc = read_streams(a, o, sname, comm, &lex, &R->tc, err)) < 0) {
		llr_lexicon_free(lex);
		return rc;
	}
	int fresh = !R->model;
	if (!fresh) {
		llr_err e = {0};
		rc = llr_rnnlm_fits(R->model, lex, &e) < 0 ? llr_err_set(err, LLR_EFORMAT, "%s: does not fit %s: %s", o->run.resume, sname, e.msg)
		                                           : LLR_OK;
		llr_lexicon_free(lex);
	} else if ((rc = new_model(o, lex, R, err)) < 0) {
		llr_lexicon_free(lex);
	}
	/* open or closed first: the ids llr_rnnlm_tree_init counts are then < V */
	if (rc < 0 || (rc = open_or_closed(a, o, R, fresh, comm, err)) < 0)
		return rc;
	if (fresh && (rc = llr_rnnlm_tree_init(R->model, R->tc.ids, R->tc.n, comm, err)) < 0)
		return rc;
	return o->run.valid ? read_valid(a, o, R, err) : LLR_OK;
}

/* A variable-computation cell's penalty, for --resume. */
static int vc_meta(const lmo *o, llr_rnnlm *m)
{
	if (!llr_cell_is_vc(o->net.cell))
		return LLR_OK;
	int rc = llr_meta_setf(m->meta, "vc_target", "%.9g", o->vc_target);
	return rc < 0 ? rc : llr_meta_setf(m->meta, "vc_penalty", "%.9g", o->vc_penalty);
}

/* After each epoch's line, a variable-computation cell's: its sharpness
 * and the multiply-adds of its forward passes per position so far,
 * against the dense cell's, and those its merged stairs did past the
 * mask. */
static int vc_note(void *fam, const llr_train_event *ev, llr_buf *line)
{
	const llr_net *net = ((lmrun *)fam)->model->net;
	uint64_t macs, pad, pos;
	double dense;
	llr_net_vc_macs(net, &macs, &pad, &pos, &dense);
	if (!pos)
		return LLR_OK;
	double per = (double)macs / (double)pos;
	const llr_net_config *c = llr_net_cfg(net);
	int rc = llr_buf_printf(line,
	                        "%s: lambda %.1f, %.0f multiply-adds per position in the recurrent layer, the dense cell's %.0f (%.1f%%);"
	                        " %.0f more done past the mask",
	                        llr_cell_name(c->cell), (double)c->vc_lambda, per, dense, 100.0 * per / dense, (double)pad / (double)pos);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

static int build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	lmo o;
	read_opts(a, comm, &o);
	const char *sname = o.run.stream ? o.run.stream : "<stdin>";
	lmrun *R = llr_train_setup_own(s, sizeof *R, lmrun_free);
	if (!R)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int rc = setup(a, &o, sname, comm, R, err);
	if (rc < 0)
		return rc;
	if (llr_train_run_meta(&o.run.lim, R->model->meta, R->ts->optim) < 0 || vc_meta(&o, R->model) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (!o.run.quiet)
		say_start(a, &o, sname, comm, R);
	llr_lm_train_cfg cfg = {.batch = o.batch,
	                        .max_len = o.max_len,
	                        .dropout = o.dropout > 0,
	                        .tree_update = o.tree_update,
	                        .vc_target = (float)o.vc_target,
	                        .vc_penalty = (float)o.vc_penalty};
	if ((rc = llr_rnnlm_train_job(R->model, &R->tc, &R->vc, &cfg, comm, &s->job, err)) < 0)
		return rc;
	s->ts = R->ts;
	s->lim = o.run.lim;
	s->train_tokens = R->tc.tokens;
	s->has_valid = R->vc.sentences > 0;
	if (llr_cell_is_vc(o.net.cell))
		s->epoch_note = vc_note;
	return LLR_OK;
}

const llr_trainer llr_rnnlm_trainer = {
	.opts = opts,
	.synopsis = "train [-hqv] [-o model] [-s seed] [--output loglinear|softmax|tree|classes]\n"
	            "             [--input word|chars|word+chars] [--combine concat|sum]\n"
	            "             [--char-embed n] [--char-filters w:n,...] [--highway n]\n"
	            "             [--classes n] [--tree-depth n] [--tree-arity n] [--tree-cap n]\n"
	            "             [--tree-update n]\n"
	            "             [--cell lstm|gru|rnn|vcrnn|vcgru] [--vc-target m] [--vc-penalty w]\n"
	            "             [--layers n] [--hidden n] [--embed n] [--dropout p]\n"
	            "             [--batch n] [--max-len n] [--optim rmsprop|adam|sgd]\n"
	            "             [--lr x] [--eps x] [--clip x] [--min-improvement x] [--valid file]\n"
	            "             [--lr-decay f] [--lr-patience n] [--lr-decays n]\n"
	            "             [--patience n] [--epochs n] [--max-time duration] [--max-tokens n]\n"
	            "             [--threads n] [--log file] [--progress n] [--resume model]\n"
	            "             [--init torch|uniform] [--no-bias-fit] [--closed]\n"
	            "             [--distributed]\n"
	            "             [stream ...]\n",
	.by_default = 1,
	.check = check,
	.build = build,
};
