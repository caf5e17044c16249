/*
 * train - train an LSTM language model (log-linear or softmax output) from
 * a featurize stream and write a model file.  The man page train(1) is the
 * spec; llrnn-model(5) describes the file.  This file holds the command
 * line of every family, the choice among them, and the language model's
 * streams, options into llr_rnnlm_setup and --resume's checks; building
 * the model and open training are the family's (lib/family/rnnlm/), the
 * training the library's driver (llr_train_run, through run.c).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "train/train.h"
#include "train/dist.h"

static const char usage[] =
    "usage: train [-hqv] [-o model] [-s seed] [--output loglinear|softmax|tree|classes]\n"
    "             [--input word|chars|word+chars] [--combine concat|sum]\n"
    "             [--char-embed n] [--char-filters w:n,...] [--highway n]\n"
    "             [--classes n] [--tree-depth n] [--tree-arity n] [--tree-cap n]\n"
    "             [--tree-update n]\n"
    "             [--layers n] [--hidden n] [--embed n] [--dropout p]\n"
    "             [--batch n] [--max-len n] [--optim rmsprop|adam|sgd]\n"
    "             [--lr x] [--eps x] [--clip x] [--min-improvement x] [--valid file]\n"
    "             [--lr-decay f] [--lr-patience n] [--lr-decays n]\n"
    "             [--patience n] [--epochs n] [--max-time duration] [--max-tokens n]\n"
    "             [--threads n] [--log file] [--progress n] [--resume model]\n"
    "             [--init torch|uniform] [--no-bias-fit] [--closed]\n"
    "             [--distributed]\n"
    "             [stream ...]\n"
    "       train --ngram N [-q] [-o FILE] [--prune N,N,...] [--discount-fallback]\n"
    "             [--memory SIZE] [--format trie|probing] [file ...]\n"
    "       train --convert MODEL [-q] -o FILE [--format trie|probing]\n"
    "       train --task order|next|conj|all --features stream\n"
    "             [--encoder cbow|gru|bigru] [-q] [-o model] [-s seed] [--hidden n]\n"
    "             [--embed n] [--dropout p] [--word-dropout p] [--batch n]\n"
    "             [--task-cap n] [--next-negatives own|batch]\n"
    "             [--optim rmsprop|adam|sgd] [--lr x] [--eps x] [--clip x]\n"
    "             [--valid pairs] [--patience n] [--epochs n] [--max-time duration]\n"
    "             [--max-tokens n] [--threads n] [--log file] [--progress n]\n"
    "             [--distributed] [pairs]\n"
    "       train [--task order|next|conj|all] --resume encoder [the options above] [pairs]\n"
    "       train --version\n";

static const char help[] =
    "Options:\n"
    "  -v, --verbose            notes on stderr\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n"
    "  -o model                 write the model (every epoch end; .gz .bz2 .xz .zst compress)\n"
    "  -s, --seed seed          seed of every random choice (default 1)\n"
    "  --closed                 train a closed vocabulary even with a spelling model\n"
    "  --no-bias-fit            open training: do not fit the output bias first\n"
    "  --init torch|uniform     how the initial weights are drawn\n"
    "  --output loglinear|softmax|tree|classes  the output layer\n"
    "  --input word|chars|word+chars  the LSTM's input (default word)\n"
    "  --combine concat|sum     how word+chars combines them (default concat)\n"
    "  --char-embed n           character embedding size (default 15)\n"
    "  --char-filters w:n,...   the character filters: n of each width w\n"
    "  --highway n              highway layers, 0 to 8 (default 1)\n"
    "  --classes n              with --output classes: the number of classes\n"
    "  --tree-depth n           with --output tree: choices per word (default 3)\n"
    "  --tree-arity n           children of every node\n"
    "  --tree-cap n             words per group at most\n"
    "  --tree-update n          re-learn the tree every n batches of the first epoch\n"
    "  --layers n               LSTM layers (default 2)\n"
    "  --hidden n               LSTM size (default 256)\n"
    "  --embed n                embedding size (default 256)\n"
    "  --dropout p              dropout probability in training (default 0)\n"
    "  --batch n                sentences per minibatch (default 32)\n"
    "  --max-len n              longest piece predicted at once, in tokens (default 256)\n"
    "  --optim rmsprop|adam|sgd  the optimiser (default rmsprop)\n"
    "  --lr x                   learning rate (default 0.001; 1 for sgd)\n"
    "  --eps x                  RMSprop's and Adam's epsilon (default 1e-8)\n"
    "  --clip x                 largest global gradient norm; 0 none (default 5)\n"
    "  --min-improvement x      the schedules' threshold on the validation gain\n"
    "  --lr-decay f             multiply the learning rate by f when validation stalls\n"
    "  --lr-patience n          stalled epochs before a decay (default 1)\n"
    "  --lr-decays n            decays at most (default 5)\n"
    "  --valid file             validation tokens, for early stopping\n"
    "  --patience n             stop after n epochs without a new best (default 3)\n"
    "  --epochs n               stop after n epochs in all (default 30)\n"
    "  --max-time duration      stop after this wall-clock time (s, m, h, d)\n"
    "  --max-tokens n           stop after this run's steps predicted n tokens\n"
    "  --threads n              BLAS threads (default: the cores)\n"
    "  --distributed            one rank of an MPI job (mpirun)\n"
    "  --log file               write the learning curve as TSV\n"
    "  --progress n             off a terminal, a step line every n steps (default 100)\n"
    "  -q, --quiet              no progress or summary lines\n"
    "  --resume model           continue the run saved in model\n"
    "  --ngram N                estimate a Kneser-Ney n-gram model of order N instead\n"
    "  --prune n,n,...          with --ngram: drop order k's n-grams counted at most n_k times\n"
    "  --discount-fallback      with --ngram: fixed discounts when the counts give none\n"
    "  --memory size            with --ngram: the most memory the counts may take (default 1G)\n"
    "  --format trie|probing    with --ngram: the binary form written (default trie)\n"
    "  --convert MODEL          rewrite the n-gram model MODEL (ARPA or trie) as -o says\n"
    "\n"
    "Discourse sentence encoders:\n"
    "  --task order|next|conj|all  train a sentence encoder on these disc-pairs examples\n"
    "  --features stream        the features stream of the vocabulary and input features\n"
    "  --encoder cbow|gru|bigru  the encoder (default bigru)\n"
    "  --word-dropout p         zero each word's embedding with probability p in training\n"
    "  --task-cap n             train at most n examples of every task an epoch\n"
    "  --next-negatives own|batch  NEXT's candidates: the example's own, or the batch's\n"
    "\n"
    "Encoder-decoder (a featurize --source stream):\n"
    "  --attention dot|bilinear|mlp  the attention score (default mlp)\n"
    "  --attn-hidden n          the width of the MLP score (default 128)\n"
    "  --enc-layers n           bidirectional encoder layers (default 1)\n"
    "  --prime none|table       the background: fixed, or source-conditioned priming\n"
    "  --prime-iters n          EM iterations of the priming table (default 0)\n"
    "  --prime-smoothing k      the priming table's smoothing weight (default 1)\n"
    "  --valid-source file      validation sources, aligned with --valid's targets\n";
const char *const train_usage = usage;

/* ------------------------------------------------------------- options */

enum {
	O_NOBIASFIT = O_TRAIN_OWN,
	O_CLOSED,
	O_NGRAM,
	O_PRUNE,
	O_FALLBACK,
	O_MEMORY,
	O_NGFORMAT,
	O_CONVERT,
	O_TASK,
	O_ENCODER,
	O_FEATURES,
	O_WORD_DROPOUT,
	O_TASK_CAP,
	O_NEXT_NEGATIVES,
};

/* The options of the discourse-encoder family (disc.c). */
static void disc_opt(int c, const char *arg, train_opts *o)
{
	switch (c) {
	case O_TASK:
		if (!strcmp(arg, "order"))
			o->task = LLR_TASK_ORDER;
		else if (!strcmp(arg, "next"))
			o->task = LLR_TASK_NEXT;
		else if (!strcmp(arg, "conj"))
			o->task = LLR_TASK_CONJ;
		else if (!strcmp(arg, "all"))
			o->task = LLR_TASK_ALL;
		else
			cli_usage_error(usage, "--task: unknown task '%s' (order, next, conj, all)", arg);
		o->family = TRAIN_DISC;
		break;
	case O_ENCODER:
		if (!(o->encoder = llr_senc_encoder_parse(arg)))
			cli_usage_error(usage, "--encoder: unknown encoder '%s' (cbow, gru, bigru)", arg);
		o->set_encoder = 1;
		break;
	case O_FEATURES: o->features = arg; break;
	case O_WORD_DROPOUT:
		o->word_dropout = cli_parse_double(usage, "--word-dropout", arg, 0, 0.95);
		o->set_word_dropout = 1;
		break;
	case O_TASK_CAP:
		o->task_cap = cli_parse_int(usage, "--task-cap", arg, 1, 1LL << 40);
		o->set_task_cap = 1;
		break;
	case O_NEXT_NEGATIVES:
		if (strcmp(arg, "own") && strcmp(arg, "batch"))
			cli_usage_error(usage, "--next-negatives: '%s' is neither own nor batch", arg);
		o->next_batch_negatives = !strcmp(arg, "batch");
		o->set_next_negatives = 1;
		break;
	}
}

static void parse_operands(int argc, char **argv, train_opts *o);

/* The long options of every family (parse_opts, disc_opt). */
static const struct option train_options[] = {
    TRAIN_OPTIONS,
    {"verbose", no_argument, NULL, 'v'},
    {"no-bias-fit", no_argument, NULL, O_NOBIASFIT},
    {"closed", no_argument, NULL, O_CLOSED},
    {"ngram", required_argument, NULL, O_NGRAM},
    {"prune", required_argument, NULL, O_PRUNE},
    {"discount-fallback", no_argument, NULL, O_FALLBACK},
    {"memory", required_argument, NULL, O_MEMORY},
    {"format", required_argument, NULL, O_NGFORMAT},
    {"convert", required_argument, NULL, O_CONVERT},
    {"task", required_argument, NULL, O_TASK},
    {"encoder", required_argument, NULL, O_ENCODER},
    {"features", required_argument, NULL, O_FEATURES},
    {"word-dropout", required_argument, NULL, O_WORD_DROPOUT},
    {"task-cap", required_argument, NULL, O_TASK_CAP},
    {"next-negatives", required_argument, NULL, O_NEXT_NEGATIVES},
    LMX_OPTIONS,
    SCHED_OPTIONS,
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* The options' defaults, those that are not 0. */
static void opt_defaults(train_opts *o)
{
	lmx_defaults(&o->x);
	lim_defaults(&o->lim);
	o->layers = 2;
	o->hidden = o->embed = 256;
	o->batch = 32;
	o->max_len = 256;
	o->optim = LLR_OPT_RMSPROP;
	o->seed = 1;
	o->encoder = LLR_SENC_BIGRU;
	o->progress = 100;
	o->init = LLR_INIT_TORCH;
}

/* 1 if option c means something to n-gram estimation (the usage's
 * --ngram line; --distributed has a message of its own, in main). */
static int ngram_takes(int c)
{
	switch (c) {
	case 'o':
	case 'q':
	case O_NGRAM:
	case O_PRUNE:
	case O_FALLBACK:
	case O_MEMORY:
	case O_NGFORMAT:
	case O_CONVERT:
	case O_DISTRIBUTED: return 1;
	default: return 0;
	}
}

/* How the command line spells option c: "-s", "--hidden". */
static const char *option_name(int c)
{
	static char buf[64];
	for (const struct option *op = train_options; op->name; op++)
		if (op->val == c) {
			snprintf(buf, sizeof buf, "--%s", op->name);
			return buf;
		}
	snprintf(buf, sizeof buf, "-%c", c);
	return buf;
}

static void parse_opts(int argc, char **argv, train_opts *o)
{
	memset(o, 0, sizeof *o);
	/* The encoder-decoder parses its own options (encdec.c). */
	if (train_encdec_wanted(argc, argv)) {
		o->family = TRAIN_ENCDEC;
		o->argc = argc;
		o->argv = argv;
		return;
	}
	opt_defaults(o);
	int c;
	while ((c = cli_getopt(argc, argv, ":ho:qs:v", train_options, usage)) != -1) {
		if (!o->not_ngram && !ngram_takes(c))
			o->not_ngram = c;
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose = 1; break;
		case 's':
			o->seed = (uint64_t)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
			o->set_seed = 1;
			break;
		case O_OUTPUT:
			if (!(o->output = lmx_parse_output(optarg)))
				cli_usage_error(usage, "--output: '%s' is not loglinear, softmax, tree or classes", optarg);
			o->set_output = 1;
			break;
		case O_LAYERS:
			o->layers = (int)cli_parse_int(usage, "--layers", optarg, 1, 64);
			o->set_layers = 1;
			break;
		case O_HIDDEN:
			o->hidden = (int)cli_parse_int(usage, "--hidden", optarg, 1, 1 << 16);
			o->set_hidden = 1;
			break;
		case O_EMBED:
			o->embed = (int)cli_parse_int(usage, "--embed", optarg, 1, 1 << 16);
			o->set_embed = 1;
			break;
		case O_DROPOUT:
			o->dropout = cli_parse_double(usage, "--dropout", optarg, 0, 0.95);
			o->set_dropout = 1;
			break;
		case O_BATCH:
			o->batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 1 << 16);
			o->set_batch = 1;
			break;
		case O_MAXLEN:
			o->max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 1 << 20);
			o->set_max_len = 1;
			break;
		case O_OPTIM:
			o->optim = llr_optim_parse(optarg);
			if (!o->optim)
				cli_usage_error(usage, "--optim: unknown optimiser '%s' (rmsprop, adam, sgd)", optarg);
			o->set_optim = 1;
			break;
		case O_LR:
			o->lr = cli_parse_double(usage, "--lr", optarg, 1e-12, 1e30);
			o->set_lr = 1;
			break;
		case O_EPS:
			o->eps = cli_parse_double(usage, "--eps", optarg, 1e-30, 1);
			break;
		case O_VALID: o->valid = optarg; break;
		case O_THREADS: o->threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024); break;
		case O_DISTRIBUTED: o->distributed = 1; break;
		case O_LOG: o->log = optarg; break;
		case O_PROGRESS: o->progress = (int)cli_parse_int(usage, "--progress", optarg, 0, INT32_MAX); break;
		case O_RESUME: o->resume = optarg; break;
		case O_NGRAM: o->ngram = (int)cli_parse_int(usage, "--ngram", optarg, 1, LLR_NGRAM_MAX_ORDER); break;
		case O_PRUNE: o->prune = optarg; break;
		case O_FALLBACK: o->discount_fallback = 1; break;
		case O_MEMORY: o->memory = optarg; break;
		case O_NGFORMAT: o->ngram_format = optarg; break;
		case O_CONVERT: o->convert = optarg; break;
		case O_CLOSED: o->closed = 1; break;
		case O_INIT:
			if (!strcmp(optarg, "uniform"))
				o->init = LLR_INIT_UNIFORM;
			else if (!strcmp(optarg, "torch"))
				o->init = LLR_INIT_TORCH;
			else
				cli_usage_error(usage, "--init: expected uniform or torch, not '%s'", optarg);
			o->set_init = 1;
			break;
		case O_NOBIASFIT: o->no_bias_fit = 1; break;
		default:
			if (!lmx_parse_opt(o, c, optarg, usage) && !lim_parse_opt(&o->lim, &o->lim_given, c, optarg, usage))
				disc_opt(c, optarg, o);
			break;
		}
	}
	parse_operands(argc - optind, argv + optind, o);
}

/* The operands after the options, and the checks that need them all:
 * the n-gram family's token files, or the streams (or pairs file). */
static void parse_operands(int argc, char **argv, train_opts *o)
{
	int k = 0; /* the next operand */
	/* --resume of a discourse encoder without --task trains the model's
	 * tasks (resume_model in disc.c narrows "all" to them) */
	if (o->family == TRAIN_LM && o->resume && !o->ngram && cli_model_family_is(o->resume, "sentenc")) {
		o->family = TRAIN_DISC;
		o->task = LLR_TASK_ALL;
	}
	if (o->ngram || o->convert) {
		if (o->not_ngram)
			cli_usage_error(usage, "%s: not for n-gram estimation (--ngram)",
			                option_name(o->not_ngram));
		o->family = TRAIN_NGRAM;
		o->inputs = argv + k;
		o->ninputs = argc - k;
		return;
	}
	if (o->prune || o->memory || o->discount_fallback || o->ngram_format)
		cli_usage_error(usage, "--prune, --memory, --discount-fallback and --format need --ngram");
	lmx_check(o, usage);
	if (o->family == TRAIN_DISC && (o->lim_given & (LLR_LIM_LR_DECAY | LLR_LIM_LR_PATIENCE | LLR_LIM_LR_DECAYS)))
		cli_usage_error(usage, "--lr-decay, --lr-patience and --lr-decays: not for the discourse encoders (--task)");
	if (o->family != TRAIN_DISC && o->set_word_dropout)
		cli_usage_error(usage, "--word-dropout: for the discourse encoders only (--task)");
	if (o->family != TRAIN_DISC && o->set_task_cap)
		cli_usage_error(usage, "--task-cap: for the discourse encoders only (--task)");
	if (o->family != TRAIN_DISC && o->set_next_negatives)
		cli_usage_error(usage, "--next-negatives: for the discourse encoders only (--task)");
	if (o->eps > 0 && o->optim == LLR_OPT_SGD)
		cli_usage_error(usage, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	if (o->lim.lr_decay > 0 && !o->valid)
		cli_usage_error(usage, "--lr-decay needs --valid (it decays when the validation loss stalls)");
	if (k < argc)
		o->stream = argv[k++];
	o->more = argv + k;
	o->nmore = argc - k;
	for (int i = 0; i < o->nmore; i++)
		if (!strcmp(o->more[i], "-"))
			cli_usage_error(usage, "'-' (stdin) can only be the first stream");
	if (o->family == TRAIN_DISC && o->nmore)
		cli_usage_error(usage, "--task: at most one pairs file");
	if (o->stream && !strcmp(o->stream, "-"))
		o->stream = NULL;
	if (!o->out)
		o->out = o->resume;
	if (!o->out)
		cli_usage_error(usage, "-o model is required");
	if (!strcmp(o->out, "-"))
		cli_usage_error(usage, "-o: the model must be a file (it is rewritten every epoch)");
}

/* -------------------------------------------------------------- corpus */

/* The ids/ chunks of the stream (this rank's share, --distributed). */
static void read_ids(llr_tensor_reader *r, const char *name, const llr_lexicon *x, int max_len, train_dist *dist, llr_lm_corpus *c)
{
	llr_err e = {0};
	if (llr_lm_corpus_read(r, name, x, max_len, &dist->comm, c, &e) < 0)
		cli_die_err(&e);
}

/* --------------------------------------------------------------- setup */

void train_fixed_opt(int given, const char *opt, const llr_meta *m, const char *key, const char *want)
{
	const char *have = llr_meta_get(m, key);
	if (given && (!have || strcmp(have, want)))
		cli_usage_error(usage, "%s %s: the resumed model has %s=%s", opt, want, key, have ? have : "(none)");
}

void train_resume_prob(int given, const char *opt, const char *key, double *val, double have)
{
	if (given && fabs(*val - have) > 1e-6)
		cli_usage_error(usage, "%s %g: the resumed model has %s=%g", opt, *val, key, have);
	*val = have;
}

void train_limits_meta(const train_opts *o, llr_meta *m)
{
	if (llr_train_limits_meta(&o->lim, m) < 0 || llr_train_schedule_meta(&o->lim, m) < 0)
		cli_oom();
}

void train_optim_config(llr_optim_config *oc, int kind, double lr, double eps)
{
	llr_optim_defaults(oc, kind);
	if (lr > 0)
		oc->lr = (float)lr;
	if (eps > 0)
		oc->eps = (float)eps;
}

void train_optim_resume(const char *usage_text, llr_train_state *ts, double lr, double eps)
{
	if (lr > 0) {
		ts->lr = lr;
		llr_optim_set_lr(ts->optim, (float)lr);
	}
	if (eps > 0) {
		if (llr_optim_cfg(ts->optim)->kind == LLR_OPT_SGD)
			cli_usage_error(usage_text, "--eps: the resumed model trains with SGD, which has no eps");
		llr_optim_set_eps(ts->optim, (float)eps);
	}
}

void train_optim_meta(llr_meta *m, const llr_optim *opt)
{
	const llr_optim_config *c = llr_optim_cfg(opt);
	if (llr_meta_set(m, "optim", llr_optim_name(c->kind)) < 0 ||
	    (c->kind != LLR_OPT_SGD && llr_meta_setf(m, "eps", "%g", (double)c->eps) < 0))
		cli_oom();
}

void train_resume_limits(train_opts *o, const llr_meta *m, llr_train_state *ts)
{
	lim_resume(&o->lim, o->lim_given, m, o->resume);
	if (!ts->optim)
		cli_die("%s: the training state has no optimiser", o->resume);
	train_optim_resume(usage, ts, o->set_lr ? o->lr : 0, o->eps);
}

/* --resume: the model and its training state come first, and the options
 * they were trained with bind (contradicting one is a usage error). */
static void resume_load(train_opts *o, llr_rnnlm **modelp, llr_train_state **tsp)
{
	llr_err e = {0};
	llr_rnnlm *model;
	llr_train_state *ts;
	char buf[64];
	if (llr_rnnlm_load_state(o->resume, &model, &ts, &e) < 0)
		cli_die_err(&e);
	if (!ts)
		cli_die("%s: no training state to resume from", o->resume);
	if (o->verbose)
		cli_note_checksums(o->resume, model->meta);
	const llr_meta *m = model->meta;
	const llr_net_config *c = llr_net_cfg(model->net);
	train_fixed_opt(o->set_output, "--output", m, "output", lmx_output_name(o->output));
	snprintf(buf, sizeof buf, "%d", o->layers);
	train_fixed_opt(o->set_layers, "--layers", m, "layers", buf);
	snprintf(buf, sizeof buf, "%d", o->hidden);
	train_fixed_opt(o->set_hidden, "--hidden", m, "hidden", buf);
	snprintf(buf, sizeof buf, "%d", o->embed);
	train_fixed_opt(o->set_embed, "--embed", m, "embed", buf);
	snprintf(buf, sizeof buf, "%d", o->batch);
	train_fixed_opt(o->set_batch, "--batch", m, "batch", buf);
	snprintf(buf, sizeof buf, "%d", o->max_len);
	train_fixed_opt(o->set_max_len, "--max-len", m, "max_len", buf);
	train_fixed_opt(o->set_optim, "--optim", m, "optim", llr_optim_name(o->optim));
	train_resume_prob(o->set_dropout, "--dropout", "dropout", &o->dropout, c->dropout);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->seed);
	train_fixed_opt(o->set_seed, "-s", m, "seed", buf);
	o->output = c->output;
	o->layers = c->layers;
	o->hidden = c->hidden;
	o->embed = c->embed;
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->max_len = (int)llr_meta_num(m, "max_len", o->max_len);
	train_resume_limits(o, m, ts);
	if (o->batch < 1 || o->max_len < 1)
		cli_die("%s: bad batch or max_len in meta", o->resume);
	if (o->valid == NULL && isfinite(ts->best_valid) && ts->best_epoch > 0)
		cli_warn("resuming without --valid: the best weights so far are dropped at the next epoch end");
	*modelp = model;
	*tsp = ts;
}

/* Open a stream and read its lexicon. */
static llr_tensor_reader *open_stream(const char *path, const char *name, int verbose, llr_lexicon **lex)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	if (!r)
		cli_die_err(&e);
	if (verbose)
		cli_note_checksums(name, llr_tr_meta(r));
	if (llr_lexicon_read(r, lex, &e) < 0) {
		if (strncmp(e.msg, name, strlen(name)))
			llr_err_prefix(&e, "%s", name);
		cli_die_err(&e);
	}
	return r;
}

/* The training streams: the first one's lexicon (returned), and the
 * sentences of them all, read as one corpus.  Every further stream must
 * have that lexicon (shards featurized with one --vocab and options). */
static llr_lexicon *read_stream(const train_opts *o, const char *sname, train_dist *dist, llr_lm_corpus *tc)
{
	llr_err e = {0};
	llr_lexicon *lex = NULL;
	llr_tensor_reader *r = open_stream(o->stream, sname, o->verbose, &lex);
	read_ids(r, sname, lex, o->max_len, dist, tc);
	llr_tr_close(r);
	for (int i = 0; i < o->nmore; i++) {
		const char *name = o->more[i];
		llr_lexicon *x = NULL;
		r = open_stream(name, name, o->verbose, &x);
		if (llr_lexicon_same(lex, x, sname, name, &e) < 0)
			cli_die("%s: not a shard of %s's corpus: %s (featurize every shard with the same --vocab and options)",
			        name, sname, e.msg);
		llr_lexicon_free(x);
		read_ids(r, name, lex, o->max_len, dist, tc);
		llr_tr_close(r);
	}
	return lex;
}

/* A new model for lex (the library's llr_rnnlm_fresh): the options as
 * llr_rnnlm_setup.  The model owns lex. */
static void new_model(const train_opts *o, llr_lexicon *lex, llr_rnnlm **modelp, llr_train_state **tsp)
{
	llr_err e = {0};
	llr_rnnlm_setup su = {
	    .net = o->x.net,
	    .init = o->init,
	    .optim = o->optim,
	    .lr = o->set_lr ? o->lr : 0,
	    .eps = o->eps,
	    .batch = o->batch,
	    .max_len = o->max_len,
	    .clip = o->lim.clip,
	    .min_impr = o->lim.min_impr,
	    .seed = o->seed,
	};
	su.net.embed = o->embed;
	su.net.hidden = o->hidden;
	su.net.layers = o->layers;
	su.net.dropout = (float)o->dropout;
	su.net.output = o->output;
	if (llr_rnnlm_fresh(lex, &su, modelp, tsp, &e) < 0)
		cli_die_err(&e);
}

/* Open-vocabulary training (llr_lm_open_new) when the model and stream
 * allow it; else the stream's words outside the vocabulary are trained
 * as <unk>.  A fresh model's output bias is then fitted. */
static llr_lm_open *open_or_closed(const train_opts *o, llr_rnnlm *model, llr_lm_corpus *tc, int fresh, const train_dist *dist)
{
	llr_err e = {0};
	llr_lm_open *op;
	int64_t outside;
	if (llr_lm_open_new(model, tc, o->closed, &op, &outside, &e) < 0)
		cli_die_err(&e);
	if (!op) {
		if (outside && !o->quiet)
			cli_warn("%lld training tokens outside the vocabulary trained as <unk> (%s)", (long long)outside,
			         o->closed ? "--closed" : llr_net_cfg(model->net)->output != LLR_OUT_LOGLINEAR ? "not a log-linear output"
			                                                                                     : "no open vocabulary for this input");
		return NULL;
	}
	if (!o->quiet)
		cli_warn("open vocabulary: %d signatures, lambda %.6g; %lld training tokens outside the vocabulary, each as its signature",
		         llr_lm_open_sigs(op), model->lex->spell_lambda, (long long)outside);
	if (!fresh || o->no_bias_fit)
		return op;
	llr_fit_report rep;
	if (llr_lm_open_fit_bias(op, tc->ids, tc->n, &dist->comm, &rep, &e) < 0)
		cli_die_err(&e);
	const char *fit = llr_meta_get(model->meta, "open_bias_fit");
	if (!o->quiet)
		cli_warn("open vocabulary: output bias fitted context-free (%d Adam steps): mean log-likelihood %.4f -> %.4f, gradient norm %.2g",
		         rep.iters, rep.before, rep.after, rep.grad_norm);
	if (!o->quiet && fit)
		cli_warn("open vocabulary: fitted bias %s", fit);
	return op;
}

/* Validation tokens (llr_lm_corpus_read_text): one sentence a line. */
static void read_valid(const train_opts *o, const llr_rnnlm *m, llr_lm_open *op, llr_lm_corpus *vc)
{
	llr_err e = {0};
	int64_t skipped;
	int rc = llr_lm_corpus_read_text(o->valid, m, op, o->max_len, vc, &skipped, &e);
	if (skipped)
		cli_warn("%s: %lld sentences with unknown words skipped (the vocabulary has no <unk>)",
		         strcmp(o->valid, "-") ? o->valid : "<stdin>", (long long)skipped);
	if (rc < 0)
		cli_die_err(&e);
}

/* The opening lines: the corpus, the model, the ranks. */
static void say_start(const train_opts *o, const char *sname, const train_dist *dist, const llr_rnnlm *model, const llr_train_state *ts,
                      const llr_lm_corpus *tc)
{
	size_t n;
	llr_net_params(model->net, &n);
	char at[64] = "";
	if (o->resume)
		snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)ts->epoch + 1);
	char more[48] = "";
	if (o->nmore)
		snprintf(more, sizeof more, " and %d more stream%s", o->nmore, o->nmore > 1 ? "s" : "");
	cli_warn("%s%s: %lld sentences, %lld tokens, V %zu, %s output, %zu parameters%s", sname, more, (long long)tc->sentences,
	         (long long)tc->tokens, llr_strmap_size(model->lex->vocab), lmx_output_name(llr_net_cfg(model->net)->output), n, at);
	if (dist->on)
		cli_warn("distributed: %d ranks (rank 0 holds %lld of the %lld sentences), %zu bytes summed across them per step", dist->size,
		         (long long)tc->held, (long long)tc->sentences, dist_step_bytes(n));
}

/* The LSTM language model family: read the corpus, build or resume the
 * net, and train it with the library's driver. */
static int train_lm(train_opts *o)
{
	const char *sname = o->stream ? o->stream : "<stdin>";
	llr_err e = {0};
	llr_rnnlm *model = NULL;
	llr_train_state *ts = NULL;
	train_dist dist;
	dist_init(&dist, o->distributed);
	if (dist.rank != 0)
		o->quiet = 1; /* rank 0 speaks for the job */
	if (o->resume)
		resume_load(o, &model, &ts);
	llr_lm_corpus tc = {0}, vc = {0};
	llr_lexicon *lex = read_stream(o, sname, &dist, &tc);
	int fresh = !model;
	if (model) {
		if (llr_rnnlm_fits(model, lex, &e) < 0)
			cli_die("%s: does not fit %s: %s", o->resume, sname, e.msg);
		llr_lexicon_free(lex);
	} else {
		new_model(o, lex, &model, &ts);
	}
	/* open or closed first: the ids llr_rnnlm_tree_init counts are then < V */
	llr_lm_open *op = open_or_closed(o, model, &tc, fresh, &dist);
	if (fresh && llr_rnnlm_tree_init(model, tc.ids, tc.n, &dist.comm, &e) < 0)
		cli_die_err(&e);
	if (o->valid)
		read_valid(o, model, op, &vc);
	train_limits_meta(o, model->meta);
	train_optim_meta(model->meta, ts->optim);
	if (!o->quiet)
		say_start(o, sname, &dist, model, ts, &tc);
	llr_train_job *job;
	llr_lm_train_cfg cfg = {.batch = o->batch, .max_len = o->max_len, .dropout = o->dropout > 0, .tree_update = o->x.tree_update};
	if (llr_rnnlm_train_job(model, &tc, &vc, &cfg, &dist.comm, &job, &e) < 0)
		cli_die_err(&e);
	llr_train_opts ro = {.out = o->out, .log = o->log, .resumed = o->resume != NULL, .has_valid = vc.sentences > 0, .lim = o->lim};
	train_run_opts rr = {.quiet = o->quiet, .progress = o->progress, .train_tokens = tc.tokens};
	train_run(job, ts, &ro, &rr, &dist);
	llr_train_job_free(job);
	llr_lm_corpus_free(&tc);
	llr_lm_corpus_free(&vc);
	llr_train_state_free(ts);
	llr_lm_open_free(op);
	llr_rnnlm_free(model);
	dist_finish(&dist);
	return 0;
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "train");
	cli_set_help(help);
	train_opts o;
	parse_opts(argc, argv, &o);
	llr_blas_set_threads(o.threads);
	llr_err e = {0};
	if (llr_blas_reserve(&e) < 0)
		cli_die_err(&e);
	/* The family dispatch: parse_opts chose the family from the options;
	 * each family reads its own input, builds or resumes its model,
	 * trains and saves it.  New families add a case here (train.h). */
	if (o.distributed && o.family == TRAIN_NGRAM)
		cli_usage_error(usage, "--distributed: n-gram estimation (--ngram) counts, it does not train by gradient steps; it runs in one process");
	switch (o.family) {
	case TRAIN_NGRAM:
		return train_ngram(&o);
	case TRAIN_DISC:
		return train_disc(&o);
	case TRAIN_ENCDEC:
		return train_encdec(&o);
	case TRAIN_LM:
	default:
		return train_lm(&o);
	}
}
