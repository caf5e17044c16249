/*
 * estimate.c - the chain MRF's side of train(1) ("Chain MRF language
 * models"): its options (--mrf chooses it) and `train --mrf`, which reads
 * a featurize stream as the word LMs do (its lexicon, its sentences
 * joined, each ending in </s>, into one corpus of N tokens), counts it
 * (counts.c: all that learning sees of the corpus) and maximises
 *   (S(x) - B(theta)) / N - (l2 / 2) |theta|^2,
 * S(x) = theta . counts and B the lifted TRW bound on log Z (bound.c), so
 * a lower bound on the log-likelihood per token, by L-BFGS (liblbfgs,
 * its backtracking line search).  The objective and the starting point are
 * objective.c's: each evaluation first tightens the bound by the dual
 * steps (--dual-steps, from the dual of the last accepted point), the
 * schedule of the thesis: step 10^3 / 2^t, t the steps that did not
 * decrease it.  Not a gradient-step family of the training
 * driver: no job; the model is written at the end, and --resume goes on
 * from its weights (L-BFGS's memory and the dual start afresh).  With
 * --tags, train --mrf trains the MRF tagger instead (tagfit.c, family
 * mrf-tagger, which also saves on a signal); the
 * checks of the options of the two are here.  This
 * file and tagfit.c are the two that call liblbfgs.
 */
#include "family/mrf/mrf.h"
#include "family/mrf/tagger.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#define SECTION "Chain MRF language models (train --mrf):"
#define TAGGER "MRF taggers (train --mrf --tags):"
#define NEED "--neighbours, --rank, --l2, --dual-steps, --tags and --word-window need --mrf"
static const llr_train_opt opts[] = {
	{"mrf", 0, LLR_TOPT_FLAG, LLR_TOPT_SELECTS, .help = "train a chain MRF language model (lifted bound, L-BFGS) instead",
	 .section = SECTION},
	{"neighbours", 0, LLR_TOPT_INT, 0, 1, MRF_MAX_K, .dflt = "2", .arg = "K",
	 .help = "link every token to its K following tokens (default 2)", .section = SECTION, .msg = NEED},
	{"rank", 0, LLR_TOPT_INT, 0, 1, MRF_MAX_D, .dflt = "30", .arg = "D",
	 .help = "the rank of the pair potentials u.v (default 30)", .section = SECTION, .msg = NEED},
	{"l2", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0.0001", .arg = "x",
	 .help = "L2 penalty per token on the parameters (default 0.0001)", .section = SECTION, .msg = NEED},
	{"dual-steps", 0, LLR_TOPT_INT, 0, 0, 1 << 20, .dflt = "200", .arg = "n",
	 .help = "dual steps tightening the bound at every evaluation (default 200)", .section = SECTION, .msg = NEED},
	{"tags", 0, LLR_TOPT_FLAG, 0, .help = "with --mrf: train the MRF part-of-speech tagger from word/TAG text", .section = TAGGER,
	 .msg = NEED},
	{"word-window", 0, LLR_TOPT_INT, 0, 0, MRFT_MAX_WINDOW, .dflt = "1", .arg = "M",
	 .help = "with --tags: link each tag to the words within M positions (default 1)", .section = TAGGER, .msg = NEED},
	{"resume", 0, LLR_TOPT_PATH, 0, .arg = "model", .help = "continue the fit saved in model (a cut one: stopped=max-time)",
	 .section = SECTION},
	{"epochs", 0, LLR_TOPT_INT, 0, 1, 1 << 30, .dflt = "100", .arg = "n",
	 .help = "with --mrf: at most n L-BFGS iterations (counting a resumed fit's)", .section = SECTION},
	{"max-time", 0, LLR_TOPT_DURATION, 0, .arg = "duration", .section = SECTION},
	{"seed", 's', LLR_TOPT_INT, 0, 0, INT64_MAX, .dflt = "1", .arg = "seed", .section = SECTION},
	{"threads", 0, LLR_TOPT_INT, 0, 0, 1024, .arg = "n",
	 .help = "with --mrf: BLAS threads of the bound's matrix products (default: the cores; the tagger has none)",
	 .section = SECTION},
	{"distributed", 0, LLR_TOPT_REFUSED, .msg = "--distributed: a chain MRF (--mrf) learns from counts in one process"},
	{0},
};

typedef struct fit {
	mrf_obj o;
	const llr_train_args *a;
	double t0, max_time;
	long long done; /* a resumed fit's iterations before this run */
	int quiet, cut, k;
} fit;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int progress(void *inst, const double *x, double fx, double gnorm, int k, int ls)
{
	(void)x;
	fit *F = inst;
	/* liblbfgs's backtracking line search evaluates last at the point it
	 * accepts, before calling this */
	mrf_obj_accept(&F->o);
	double el = now() - F->t0;
	F->k = k;
	if (!F->quiet)
		llr_train_note(F->a, "iteration %lld objective %.6f bound/token %.6f |g| %.3g %d evaluations %.1fs", F->done + k, -fx,
		               F->o.bound / (double)F->o.c->N, gnorm, ls, el);
	if (F->max_time > 0 && el >= F->max_time)
		return F->cut = 1;
	return 0;
}

/* The stream's lexicon and its sentences joined, into *lex and c. */
static int read_corpus(const llr_train_args *a, const char *path, const char *name, llr_lexicon **lex, llr_lm_corpus *c,
                       llr_err *err)
{
	int rc = llr_lm_stream_read(path, name, "--mrf", 1, NULL, lex, c, err);
	if (rc < 0)
		return rc;
	int K = (int)llr_train_args_int(a, "neighbours");
	if (c->n <= (size_t)K)
		return llr_err_set(err, LLR_EINVAL, "%s: a corpus of %zu tokens, too short for --neighbours %d (more than %d needed)",
		                   name, c->n, K, K);
	return LLR_OK;
}

/* Fit m's weights (a new model's start, a resumed one's own) to c; its
 * summary into m->meta.  A resumed fit starts L-BFGS's memory and the
 * dual again (neither is in the file). */
static int fit_model(const llr_train_args *a, mrf_model *m, const mrf_counts *c, int resumed, llr_err *err)
{
	size_t n = mrf_nparams(&m->d);
	if (n > (size_t)INT_MAX) /* liblbfgs counts its variables in an int */
		return llr_err_set(err, LLR_ERANGE, "%zu parameters: liblbfgs takes at most %d", n, INT_MAX);
	fit F = {.a = a, .t0 = now(), .quiet = (int)llr_train_args_int(a, "quiet")};
	F.max_time = llr_train_args_given(a, "max-time") ? llr_train_args_num(a, "max-time") : 0;
	F.done = resumed ? (long long)mrf_meta_num(m->meta, "iterations_done", 0) : 0;
	double before = resumed ? mrf_meta_num(m->meta, "train_seconds", 0) : 0;
	/* a resumed fit's own (open_resumed refused other values given) */
	double l2 = resumed ? mrf_meta_num(m->meta, "l2", 0) : llr_train_args_num(a, "l2");
	int dual = resumed ? (int)mrf_meta_num(m->meta, "dual_steps", 200) : (int)llr_train_args_int(a, "dual-steps");
	long long left = llr_train_args_int(a, "epochs") - F.done;
	if (left <= 0)
		return llr_err_set(err, LLR_EINVAL, "--epochs %lld: the resumed fit has done %lld iterations already",
		                   llr_train_args_int(a, "epochs"), F.done);
	if (mrf_obj_init(&F.o, &m->d, c, l2, dual) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu parameters (V = %d)", n, m->d.V);
	/* the final point is evaluated again (mrf_minimise), the dual
	 * tightened once more from its own: F.o.bound and F.o.score are its;
	 * mrf_obj_eval's inst is F.o, at F's start */
	mrf_min run = {.eval = mrf_obj_eval, .iter = progress, .ctx = &F, .max_iter = left > INT_MAX ? INT_MAX : (int)left};
	int rc;
	if ((rc = mrf_minimise(&run, (int)n, m->par, err)) < 0) {
		llr_err_prefix(err, "no model written");
		goto out;
	}
	const char *stop = mrf_lbfgs_stop(run.status, F.cut);
	if (!stop) {
		rc = mrf_lbfgs_err(run.status, n, err);
		goto out;
	}
	double B = F.o.bound, S = F.o.score;
	int ret = run.status;
	if (run.nonfinite > 0 && !F.quiet)
		llr_train_note(a, "%ld trial points of the line search had a non-finite objective or gradient (backed off)",
		               run.nonfinite);
	int e = 0;
	e |= llr_meta_set(m->meta, "stopped", stop);
	e |= llr_meta_setf(m->meta, "train_tokens", "%lld", (long long)c->N);
	e |= llr_meta_setf(m->meta, "train_bound", "%.9g", B);
	e |= llr_meta_setf(m->meta, "train_loglik_lower", "%.9g", (S - B) / (double)c->N);
	e |= llr_meta_setf(m->meta, "l2", "%.17g", l2);
	e |= llr_meta_setf(m->meta, "dual_steps", "%d", dual);
	if (!resumed)
		e |= llr_meta_setf(m->meta, "seed", "%lld", llr_train_args_int(a, "seed"));
	e |= llr_meta_setf(m->meta, "iterations_done", "%lld", F.done + F.k);
	e |= llr_meta_setf(m->meta, "train_seconds", "%.3f", before + now() - F.t0);
	if (e < 0)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	else if (!F.quiet)
		llr_train_note(a, "stopped (%s, liblbfgs status %d): log-likelihood per token >= %.6f (bound %.6f per token) after %lld iterations in %.1fs",
		               stop, ret, (S - B) / (double)c->N, B / (double)c->N, F.done + F.k, before + now() - F.t0);
out:
	mrf_obj_free(&F.o);
	return rc;
}

/* A new model over lex from mrf_obj_start: b the centred log unigram
 * frequencies, u and v small normal draws (u = v = 0 is a saddle of the
 * bilinear potentials). */
static int fresh(const llr_train_args *a, llr_lexicon *lex, const mrf_counts *c, mrf_model **out, llr_err *err)
{
	mrf_model *m = llr_calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	m->d = (mrf_dims){(int32_t)llr_strmap_size(lex->vocab), (int)llr_train_args_int(a, "neighbours"),
	                  (int)llr_train_args_int(a, "rank")};
	size_t n = mrf_nparams(&m->d);
	if (!(m->meta = llr_meta_new()) || !(m->par = llr_malloc(n * sizeof *m->par))) {
		mrf_model_free(m);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu parameters", n);
	}
	mrf_obj_start(&m->d, c, (uint64_t)llr_train_args_int(a, "seed"), m->par);
	m->lex = lex;
	*out = m;
	return LLR_OK;
}

/* --resume path: the model in path, whose shape and objective the
 * options may not change. */
static int open_resumed(const llr_train_args *a, const char *path, mrf_model **out, llr_err *err)
{
	mrf_model *m = NULL;
	int rc = mrf_model_load(path, &m, err);
	char want[64];
	static const char *const fixed[][2] = {{"neighbours", "neighbours"}, {"rank", "rank"}, {"dual-steps", "dual_steps"}};
	for (size_t i = 0; rc >= 0 && i < sizeof fixed / sizeof *fixed; i++) {
		snprintf(want, sizeof want, "%lld", llr_train_args_int(a, fixed[i][0]));
		rc = llr_train_fixed(a, fixed[i][0], m->meta, fixed[i][1], want, err);
	}
	if (rc >= 0 && llr_train_args_given(a, "l2") && mrf_meta_num(m->meta, "l2", -1) != llr_train_args_num(a, "l2"))
		rc = llr_train_usage_err(err, "--l2 %g: the resumed model has l2=%s", llr_train_args_num(a, "l2"),
		                         llr_meta_get(m->meta, "l2") ? llr_meta_get(m->meta, "l2") : "(none)");
	if (rc < 0) {
		mrf_model_free(m);
		return rc;
	}
	*out = m;
	return LLR_OK;
}

/* The stream read into lex and c is the one the resumed model m (from
 * path) was fitted on. */
static int same_stream(const mrf_model *m, const char *path, const llr_lexicon *lex, const mrf_counts *c, llr_err *err)
{
	int rc = llr_lexicon_same(m->lex, lex, path, "the stream", err);
	if (rc < 0)
		return llr_err_prefix(err, "not the stream %s was fitted on", path);
	if (mrf_meta_num(m->meta, "train_tokens", -1) != (double)c->N)
		return llr_err_set(err, LLR_EINVAL, "not the stream %s was fitted on: %lld tokens, the model's %s", path, (long long)c->N,
		                   llr_meta_get(m->meta, "train_tokens") ? llr_meta_get(m->meta, "train_tokens") : "(none)");
	return LLR_OK;
}

/* The option combinations of the language model and the tagger. */
static int check(const llr_train_args *a, llr_err *err)
{
	int tags = (int)llr_train_args_int(a, "tags");
	if (!tags && llr_train_args_given(a, "word-window"))
		return llr_train_usage_err(err, "--word-window: with --tags only (the tagger's tag-word links)");
	if (tags && llr_train_args_given(a, "rank"))
		return llr_train_usage_err(err, "--rank: not for the tagger (--tags), whose potentials are not low-rank");
	if (tags && llr_train_args_given(a, "dual-steps"))
		return llr_train_usage_err(err, "--dual-steps: not for the tagger (--tags), trained on its exact likelihood");
	if (tags && llr_train_args_int(a, "neighbours") != 1 && llr_train_args_given(a, "neighbours"))
		return llr_train_usage_err(err, "--neighbours: the tagger (--tags) links each tag to the next one only (K = 1)");
	return LLR_OK;
}

static int estimate(llr_train_args *a, llr_err *err)
{
	if (llr_train_args_int(a, "tags"))
		return mrft_estimate(a, err);
	if (llr_train_args_noperands(a) > 1)
		return llr_train_usage_err(err, "--mrf: at most one stream operand");
	const char *path = llr_train_args_noperands(a) ? llr_train_args_operand(a, 0) : NULL;
	const char *name = path && strcmp(path, "-") ? path : "<stdin>", *out = llr_train_args_str(a, "o");
	const char *resume = llr_train_args_str(a, "resume");
	if (!out)
		out = resume;
	if (!out || !strcmp(out, "-"))
		return llr_train_usage_err(err, "--mrf: -o FILE is required (a model file)");
	llr_lexicon *lex = NULL;
	llr_lm_corpus corpus = {0};
	mrf_counts c = {0};
	mrf_model *m = NULL;
	int rc = resume ? open_resumed(a, resume, &m, err) : LLR_OK;
	if (rc == LLR_OK)
		rc = read_corpus(a, path, name, &lex, &corpus, err);
	if (rc == LLR_OK)
		rc = mrf_counts_make(corpus.ids, corpus.n, (int32_t)llr_strmap_size(lex->vocab), (int)llr_train_args_int(a, "neighbours"),
		                     &c, err);
	llr_lm_corpus_free(&corpus);
	if (rc == LLR_OK && resume)
		rc = same_stream(m, resume, lex, &c, err);
	else if (rc == LLR_OK && (rc = fresh(a, lex, &c, &m, err)) == LLR_OK)
		lex = NULL;
	if (rc == LLR_OK && !llr_train_args_int(a, "quiet"))
		llr_train_note(a, "%s: %lld tokens, V %d, K %d, rank %d, %zu parameters%s%s", name, (long long)c.N, m->d.V, m->d.K, m->d.D,
		               mrf_nparams(&m->d), resume ? "; resuming " : "", resume ? resume : "");
	if (rc == LLR_OK)
		rc = fit_model(a, m, &c, resume != NULL, err);
	if (rc == LLR_OK)
		rc = mrf_model_save(out, m, err);
	mrf_counts_free(&c);
	mrf_model_free(m);
	llr_lexicon_free(lex);
	return rc;
}

const llr_trainer llr_mrf_trainer = {
	.opts = opts,
	.synopsis = "train --mrf -o model [-q] [-s seed] [--neighbours K] [--rank D] [--l2 x]\n"
	            "             [--dual-steps n] [--epochs n] [--max-time duration] [--threads n] [stream]\n"
	            "train --mrf --resume model [-o model] [-q] [--epochs n] [--max-time duration] [--threads n] [stream]\n"
	            "train --mrf --tags -o model [-q] [--word-window M] [--l2 x] [--epochs n]\n"
	            "             [--max-time duration] [file ...]\n"
	            "train --mrf --tags --resume model [-o model] [-q] [--epochs n] [--max-time duration]\n"
	            "             [file ...]\n",
	.usage = "usage: train --mrf -o model [-q] [-s seed] [--neighbours K] [--rank D] [--l2 x]\n"
	         "             [--dual-steps n] [--epochs n] [--max-time duration] [--threads n] [stream]\n"
	         "       train --mrf --resume model [-o model] [-q] [--epochs n] [--max-time duration]\n"
	         "             [--threads n] [stream]\n"
	         "       train --mrf --tags -o model [-q] [--word-window M] [--l2 x] [--epochs n]\n"
	         "             [--max-time duration] [file ...]\n"
	         "       train --mrf --tags --resume model [-o model] [-q] [--epochs n]\n"
	         "             [--max-time duration] [file ...]\n",
	.check = check,
	.foreign = "not for the chain MRF (--mrf)",
	.estimate = estimate,
};
