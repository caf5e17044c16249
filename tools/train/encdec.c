/*
 * encdec.c - train's encoder-decoder family (issue 15): from a
 * stream made by featurize --source, train the encoder-decoder with
 * attention of lib/nn/encdec.c (bidirectional LSTM encoder, input-fed
 * LSTM decoder, dot/bilinear/MLP attention, softmax or log-linear output,
 * fixed or source-conditioned background) and write an encdec model file
 * (llr_encdec_model_save).  This file holds its command line; reading
 * the stream, building, priming or resuming the model are the family's
 * (lib/family/encdec/setup.c), the training the library's driver.  The
 * spec is train(1), "Encoder-decoder".
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "train.h"
#include "dist.h"

static const char usage[] =
    "usage: train [-hq] [-o model] [-s seed] [--output loglinear|softmax]\n"
    "             [--attention dot|bilinear|mlp] [--prime none|table]\n"
    "             [--prime-iters n] [--prime-smoothing k]\n"
    "             [--enc-layers n] [--hidden n] [--embed n] [--attn-hidden n]\n"
    "             [--dropout p] [--batch n] [--max-len n] [--optim rmsprop|adam|sgd]\n"
    "             [--lr x] [--eps x] [--clip x] [--min-improvement x]\n"
    "             [--lr-decay f] [--lr-patience n] [--lr-decays n]\n"
    "             [--valid-source file --valid file] [--patience n] [--epochs n]\n"
    "             [--max-time duration] [--max-tokens n] [--threads n] [--log file]\n"
    "             [--progress n] [--resume model] [--distributed] [stream]\n"
    "       (an encoder-decoder: the stream is featurize --source's)\n";

/* ------------------------------------------------------------- options */

typedef struct ed_opts {
	const char *out, *stream, *valid, *valid_src, *log, *resume;
	llr_encdec_setup su; /* the model's choices (the library's) */
	llr_train_limits lim; /* --epochs, --patience, --clip ... (limits.c) */
	unsigned lim_given;
	int threads, progress, quiet, distributed;
	unsigned given; /* LLR_EDS_*: the options a resumed model fixes, given */
} ed_opts;

/* How the command line spells the fields of LLR_EDS_*, by position. */
static const char *const fixed_opt[LLR_EDS_NFIXED] = {"--output",   "--attention", "--embed", "--hidden",
                                                      "--enc-layers", "--attn-hidden", "--dropout", "--batch",
                                                      "--max-len",  "--optim",     "--prime", "-s"};

enum {
	O_ATT = O_TRAIN_OWN,
	O_PRIME,
	O_PITERS,
	O_PSMOOTH,
	O_ENCL,
	O_AHID,
	O_VSRC,
};

static const struct option long_opts[] = {
    TRAIN_OPTIONS,
    {"attention", required_argument, NULL, O_ATT},
    {"prime", required_argument, NULL, O_PRIME},
    {"prime-iters", required_argument, NULL, O_PITERS},
    {"prime-smoothing", required_argument, NULL, O_PSMOOTH},
    {"enc-layers", required_argument, NULL, O_ENCL},
    {"attn-hidden", required_argument, NULL, O_AHID},
    {"valid-source", required_argument, NULL, O_VSRC},
    SCHED_OPTIONS,
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

static void opt_defaults(ed_opts *o)
{
	memset(o, 0, sizeof *o);
	o->su = (llr_encdec_setup){.attention = LLR_ATT_MLP, .prime_k = 1.0, .embed = 64, .hidden = 256, .enc_layers = 1,
	                           .attn_hidden = 128, .batch = 64, .max_len = 256, .optim = LLR_OPT_ADAM, .seed = 1};
	lim_defaults(&o->lim);
	o->progress = 100;
}

static int parse_choice(const char *opt, const char *arg, const char *a, const char *b)
{
	if (!strcmp(arg, a))
		return 1;
	if (!strcmp(arg, b))
		return 2;
	cli_usage_error(usage, "%s: '%s' is neither %s nor %s", opt, arg, a, b);
}

/* An option of the model (llr_encdec_setup); 0 if c is none. */
static int parse_model(llr_encdec_setup *su, unsigned *given, int c)
{
	unsigned f = 0;
	switch (c) {
	case 's':
		su->seed = (uint64_t)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
		f = LLR_EDS_SEED;
		break;
	case O_OUTPUT:
		su->output = parse_choice("--output", optarg, "loglinear", "softmax") == 1 ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
		f = LLR_EDS_OUTPUT;
		break;
	case O_ATT:
		if (!(su->attention = llr_attention_parse(optarg)))
			cli_usage_error(usage, "--attention: '%s' is not dot, bilinear or mlp", optarg);
		f = LLR_EDS_ATTENTION;
		break;
	case O_PRIME:
		su->prime = parse_choice("--prime", optarg, "none", "table") == 2;
		f = LLR_EDS_PRIME;
		break;
	case O_ENCL:
		su->enc_layers = (int)cli_parse_int(usage, "--enc-layers", optarg, 1, 16);
		f = LLR_EDS_ENC_LAYERS;
		break;
	case O_HIDDEN:
		su->hidden = (int)cli_parse_int(usage, "--hidden", optarg, 2, 1 << 16);
		f = LLR_EDS_HIDDEN;
		break;
	case O_EMBED:
		su->embed = (int)cli_parse_int(usage, "--embed", optarg, 1, 1 << 16);
		f = LLR_EDS_EMBED;
		break;
	case O_AHID:
		su->attn_hidden = (int)cli_parse_int(usage, "--attn-hidden", optarg, 1, 1 << 16);
		f = LLR_EDS_ATTN_HIDDEN;
		break;
	case O_DROPOUT:
		su->dropout = cli_parse_double(usage, "--dropout", optarg, 0, 0.95);
		f = LLR_EDS_DROPOUT;
		break;
	case O_BATCH:
		su->batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 1 << 16);
		f = LLR_EDS_BATCH;
		break;
	case O_MAXLEN:
		su->max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 1 << 20);
		f = LLR_EDS_MAX_LEN;
		break;
	case O_OPTIM:
		if (!(su->optim = llr_optim_parse(optarg)))
			cli_usage_error(usage, "--optim: unknown optimiser '%s' (rmsprop, adam, sgd)", optarg);
		f = LLR_EDS_OPTIM;
		break;
	case O_PITERS: su->prime_iters = (int)cli_parse_int(usage, "--prime-iters", optarg, 0, 1000); return 1;
	case O_PSMOOTH: su->prime_k = cli_parse_double(usage, "--prime-smoothing", optarg, 1e-9, 1e9); return 1;
	case O_LR: su->lr = cli_parse_double(usage, "--lr", optarg, 1e-12, 1e30); return 1;
	case O_EPS: su->eps = cli_parse_double(usage, "--eps", optarg, 1e-30, 1); return 1;
	default: return 0;
	}
	*given |= f;
	return 1;
}

static void parse_one(ed_opts *o, int c)
{
	if (parse_model(&o->su, &o->given, c))
		return;
	switch (c) {
	case 'o': o->out = optarg; break;
	case 'q': o->quiet = 1; break;
	case O_VALID: o->valid = optarg; break;
	case O_VSRC: o->valid_src = optarg; break;
	case O_THREADS: o->threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024); break;
	case O_LOG: o->log = optarg; break;
	case O_PROGRESS: o->progress = (int)cli_parse_int(usage, "--progress", optarg, 0, INT32_MAX); break;
	case O_RESUME: o->resume = optarg; break;
	case O_DISTRIBUTED: o->distributed = 1; break;
	case O_LAYERS: cli_usage_error(usage, "--layers: the encoder-decoder has --enc-layers (the decoder has one layer)");
	case O_INIT: cli_usage_error(usage, "--init: not for the encoder-decoder (weights are uniform in [-0.08, 0.08))");
	default: lim_parse_opt(&o->lim, &o->lim_given, c, optarg, usage);
	}
}

static void parse_opts(int argc, char **argv, ed_opts *o)
{
	opt_defaults(o);
	int c;
	optind = 0;
	while ((c = cli_getopt(argc, argv, ":ho:qs:", long_opts, usage)) != -1)
		parse_one(o, c);
	if (argc - optind > 1)
		cli_usage_error(usage, "at most one stream operand");
	if (optind < argc && strcmp(argv[optind], "-"))
		o->stream = argv[optind];
	if (!o->out)
		o->out = o->resume;
	if (!o->out)
		cli_usage_error(usage, "-o model is required");
	if (!strcmp(o->out, "-"))
		cli_usage_error(usage, "-o: the model must be a file (it is rewritten every epoch)");
	if (!o->valid != !o->valid_src)
		cli_usage_error(usage, "--valid and --valid-source go together (the validation targets and their sources)");
	if (o->lim.lr_decay > 0 && !o->valid)
		cli_usage_error(usage, "--lr-decay needs --valid (it decays when the validation loss stalls)");
	if (o->su.eps > 0 && o->su.optim == LLR_OPT_SGD)
		cli_usage_error(usage, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	if (o->su.hidden % 2)
		cli_usage_error(usage, "--hidden: must be even (the encoder has hidden/2 per direction), got %d", o->su.hidden);
	if (!o->resume && o->su.prime && o->su.output == LLR_OUT_SOFTMAX)
		cli_usage_error(usage, "--prime table: the background of a softmax output is uniform; use --output loglinear");
}

/* ---------------------------------------------------------- detection */

int train_encdec_wanted(int argc, char **argv)
{
	int c, own = 0;
	const char *resume = NULL;
	int save = opterr;
	/* getopt permutes what it scans: scan a copy, so the family that
	 * parses next sees the command line as given */
	char **av = ecalloc((size_t)argc + 1, sizeof *av);
	memcpy(av, argv, (size_t)argc * sizeof *av);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, av, ":ho:qs:", long_opts, NULL)) != -1) {
		if (c == O_ATT || c == O_PRIME || c == O_PITERS || c == O_PSMOOTH || c == O_ENCL || c == O_AHID || c == O_VSRC)
			own = 1;
		if (c == O_RESUME)
			resume = optarg;
	}
	const char *stream = optind < argc && strcmp(av[optind], "-") ? av[optind] : NULL;
	opterr = save;
	optind = 0;
	int yes = own || cli_model_family_is(resume, "encdec") || (stream && llr_encdec_stream_has_source(stream));
	free(av);
	return yes;
}

/* --------------------------------------------------------------- setup */

/* Continue the run in o->resume: its options bind. */
static void resume(ed_opts *o, llr_encdec_model **model, llr_train_state **ts)
{
	llr_err e = {0};
	int bad;
	if (llr_encdec_resume(o->resume, &o->su, o->given, model, ts, &bad, &e) < 0) {
		if (bad >= 0)
			cli_usage_error(usage, "%s: the resumed model %s has %s", fixed_opt[bad], o->resume, e.msg);
		cli_die_err(&e);
	}
	lim_resume(&o->lim, o->lim_given, (*model)->meta, o->resume);
	train_optim_resume(usage, *ts, o->su.lr, o->su.eps);
}

/* The opening lines: the pairs, the model, the ranks. */
static void say_start(const ed_opts *o, const train_dist *dist, const llr_encdec_model *m, const llr_encdec_pairs *tp)
{
	size_t n;
	llr_encdec_params(m->net, &n);
	const llr_encdec_config *c = llr_encdec_cfg(m->net);
	cli_warn("%s: %zu pairs (%lld over --max-len skipped), %lld target tokens, Vs %zu, V %zu, %s output, %s attention%s, %zu parameters",
	         o->stream ? o->stream : "<stdin>", tp->n, (long long)tp->skipped, (long long)tp->tokens, llr_strmap_size(m->src->vocab),
	         llr_strmap_size(m->lex->vocab), c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear", llr_attention_name(c->attention),
	         c->primed ? ", primed background" : "", n);
	if (dist->on)
		cli_warn("distributed: %d ranks, rank r trains on the pairs r, r + %d, ... of each batch; %zu bytes summed across them per step",
		         dist->size, dist->size, dist_step_bytes(n));
}

/* The model to train: o->resume's, or a new one over the stream's sides. */
static void setup(ed_opts *o, llr_encdec_model **model, llr_train_state **ts, llr_encdec_pairs *tp)
{
	llr_err e = {0};
	const char *sname = o->stream ? o->stream : "<stdin>";
	if (o->resume)
		resume(o, model, ts);
	llr_lexicon *x;
	llr_source *s;
	if (llr_encdec_stream_read(o->stream, sname, o->su.max_len, &x, &s, tp, &e) < 0)
		cli_die_err(&e);
	if (*model ? llr_encdec_resume_sides(*model, o->resume, x, s, sname, tp, &e) < 0
	           : llr_encdec_fresh(&o->su, x, s, tp, model, ts, &e) < 0)
		cli_die_err(&e);
}

int train_encdec(const train_opts *to)
{
	ed_opts o;
	parse_opts(to->argc, to->argv, &o);
	llr_blas_set_threads(o.threads);
	llr_err e = {0};
	train_dist dist;
	dist_init(&dist, o.distributed);
	if (dist.rank != 0)
		o.quiet = 1; /* rank 0 speaks for the job */
	llr_encdec_model *model = NULL;
	llr_train_state *ts = NULL;
	llr_encdec_pairs tp = {0}, vp = {0};
	setup(&o, &model, &ts, &tp);
	if (llr_train_limits_meta(&o.lim, model->meta) < 0)
		cli_oom();
	train_optim_meta(model->meta, ts->optim);
	if (llr_train_schedule_meta(&o.lim, model->meta) < 0)
		cli_oom();
	if (o.valid && llr_encdec_pairs_read_text(o.valid_src, o.valid, model->lex, model->src, o.su.max_len, &vp, &e) < 0)
		cli_die_err(&e);
	if (!o.quiet)
		say_start(&o, &dist, model, &tp);
	llr_train_job *job;
	llr_encdec_train_cfg cfg = {.batch = o.su.batch, .max_len = o.su.max_len, .dropout = o.su.dropout > 0};
	if (llr_encdec_train_job(model, &tp, &vp, &cfg, &dist.comm, &job, &e) < 0)
		cli_die_err(&e);
	llr_train_opts ro = {.out = o.out, .log = o.log, .resumed = o.resume != NULL, .has_valid = vp.n > 0, .lim = o.lim};
	train_run_opts rr = {.quiet = o.quiet, .progress = o.progress, .train_tokens = tp.tokens};
	train_run(job, ts, &ro, &rr, &dist);
	llr_train_job_free(job);
	llr_encdec_pairs_free(&tp);
	llr_encdec_pairs_free(&vp);
	llr_train_state_free(ts);
	llr_encdec_model_free(model);
	dist_finish(&dist);
	return 0;
}
