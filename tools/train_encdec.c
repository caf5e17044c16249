/*
 * train_encdec.c - train's encoder-decoder family (issue 15): from a
 * stream made by featurize --source, train the encoder-decoder with
 * attention of lib/nn/encdec.c (bidirectional LSTM encoder, input-fed
 * LSTM decoder, dot/bilinear/MLP attention, softmax or log-linear output,
 * fixed or source-conditioned background) and write an encdec model file
 * (llr_encdec_model_save).  Batches are bucketed by length; optimisers,
 * gradient clipping, early stopping on --valid/--valid-source, the SGD
 * schedule, checkpoints every epoch, --resume and determinism are those
 * of the language models (train.c).  The spec is train(1),
 * "Encoder-decoder".
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"
#include "train_dist.h"

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

/* Options fixed by a model: given with --resume, they must match it. */
enum { F_OUTPUT,
       F_ATT,
       F_EMBED,
       F_HIDDEN,
       F_LAYERS,
       F_AHID,
       F_DROPOUT,
       F_BATCH,
       F_MAXLEN,
       F_OPTIM,
       F_PRIME,
       F_SEED,
       F_NFIXED };

typedef struct ed_opts {
	const char *out, *stream, *valid, *valid_src, *log, *resume;
	int output, attention, prime, prime_iters;
	double prime_k;
	int embed, hidden, enc_layers, attn_hidden;
	double dropout;
	int batch, max_len, optim;
	double lr, eps; /* eps: 0 = the default */
	llr_train_limits lim; /* --epochs, --patience, --clip ... (train_limits.c) */
	unsigned lim_given;
	uint64_t seed;
	int threads, progress, quiet, distributed;
	int set[F_NFIXED];
	int set_lr;
} ed_opts;

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
	o->output = 0;
	o->attention = LLR_ATT_MLP;
	o->prime_k = 1.0;
	o->embed = 64;
	o->hidden = 256;
	o->enc_layers = 1;
	o->attn_hidden = 128;
	o->batch = 64;
	o->max_len = 256;
	o->optim = LLR_OPT_ADAM;
	lim_defaults(&o->lim);
	o->seed = 1;
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

static void parse_one(ed_opts *o, int c)
{
	switch (c) {
	case 'o': o->out = optarg; break;
	case 'q': o->quiet = 1; break;
	case 's':
		o->seed = (uint64_t)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
		o->set[F_SEED] = 1;
		break;
	case O_OUTPUT:
		o->output = parse_choice("--output", optarg, "loglinear", "softmax") == 1 ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
		o->set[F_OUTPUT] = 1;
		break;
	case O_ATT:
		if (!(o->attention = llr_attention_parse(optarg)))
			cli_usage_error(usage, "--attention: '%s' is not dot, bilinear or mlp", optarg);
		o->set[F_ATT] = 1;
		break;
	case O_PRIME:
		o->prime = parse_choice("--prime", optarg, "none", "table") == 2;
		o->set[F_PRIME] = 1;
		break;
	case O_PITERS: o->prime_iters = (int)cli_parse_int(usage, "--prime-iters", optarg, 0, 1000); break;
	case O_PSMOOTH: o->prime_k = cli_parse_double(usage, "--prime-smoothing", optarg, 1e-9, 1e9); break;
	case O_ENCL:
		o->enc_layers = (int)cli_parse_int(usage, "--enc-layers", optarg, 1, 16);
		o->set[F_LAYERS] = 1;
		break;
	case O_HIDDEN:
		o->hidden = (int)cli_parse_int(usage, "--hidden", optarg, 2, 1 << 16);
		o->set[F_HIDDEN] = 1;
		break;
	case O_EMBED:
		o->embed = (int)cli_parse_int(usage, "--embed", optarg, 1, 1 << 16);
		o->set[F_EMBED] = 1;
		break;
	case O_AHID:
		o->attn_hidden = (int)cli_parse_int(usage, "--attn-hidden", optarg, 1, 1 << 16);
		o->set[F_AHID] = 1;
		break;
	case O_DROPOUT:
		o->dropout = cli_parse_double(usage, "--dropout", optarg, 0, 0.95);
		o->set[F_DROPOUT] = 1;
		break;
	case O_BATCH:
		o->batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 1 << 16);
		o->set[F_BATCH] = 1;
		break;
	case O_MAXLEN:
		o->max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 1 << 20);
		o->set[F_MAXLEN] = 1;
		break;
	case O_OPTIM:
		if (!(o->optim = llr_optim_parse(optarg)))
			cli_usage_error(usage, "--optim: unknown optimiser '%s' (rmsprop, adam, sgd)", optarg);
		o->set[F_OPTIM] = 1;
		break;
	case O_LR:
		o->lr = cli_parse_double(usage, "--lr", optarg, 1e-12, 1e30);
		o->set_lr = 1;
		break;
	case O_EPS:
		o->eps = cli_parse_double(usage, "--eps", optarg, 1e-30, 1);
		break;
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
	if (o->eps > 0 && o->optim == LLR_OPT_SGD)
		cli_usage_error(usage, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	if (o->hidden % 2)
		cli_usage_error(usage, "--hidden: must be even (the encoder has hidden/2 per direction), got %d", o->hidden);
}

/* ---------------------------------------------------------- detection */

/* Whether the featurize stream at path has a source side. */
static int stream_has_source(const char *path)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	if (!r)
		return 0;
	int yes = llr_meta_get(llr_tr_meta(r), "source_vocab_size") != NULL;
	llr_tr_close(r);
	return yes;
}

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
	int yes = own || cli_model_family_is(resume, "encdec") || (stream && stream_has_source(stream));
	free(av);
	return yes;
}

/* --------------------------------------------------------------- setup */

/* A fixed option given with --resume must match the model's meta. */
static void check_fixed(const ed_opts *o, const llr_meta *m)
{
	static const char *const key[F_NFIXED] = {"output", "attention", "embed", "hidden", "enc_layers", "attn_hidden", "dropout", "batch", "max_len", "optim", "primed", "seed"};
	static const char *const opt[F_NFIXED] = {"--output", "--attention", "--embed", "--hidden", "--enc-layers", "--attn-hidden", "--dropout", "--batch", "--max-len", "--optim", "--prime", "-s"};
	char want[64];
	for (int f = 0; f < F_NFIXED; f++) {
		if (!o->set[f])
			continue;
		switch (f) {
		case F_OUTPUT: snprintf(want, sizeof want, "%s", o->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear"); break;
		case F_ATT: snprintf(want, sizeof want, "%s", llr_attention_name(o->attention)); break;
		case F_EMBED: snprintf(want, sizeof want, "%d", o->embed); break;
		case F_HIDDEN: snprintf(want, sizeof want, "%d", o->hidden); break;
		case F_LAYERS: snprintf(want, sizeof want, "%d", o->enc_layers); break;
		case F_AHID: snprintf(want, sizeof want, "%d", o->attn_hidden); break;
		case F_DROPOUT: snprintf(want, sizeof want, "%.9g", (double)(float)o->dropout); break;
		case F_BATCH: snprintf(want, sizeof want, "%d", o->batch); break;
		case F_MAXLEN: snprintf(want, sizeof want, "%d", o->max_len); break;
		case F_OPTIM: snprintf(want, sizeof want, "%s", llr_optim_name(o->optim)); break;
		case F_PRIME: snprintf(want, sizeof want, "%d", o->prime); break;
		case F_SEED: snprintf(want, sizeof want, "%llu", (unsigned long long)o->seed); break;
		}
		const char *have = llr_meta_get(m, key[f]);
		if (!have || strcmp(have, want))
			cli_usage_error(usage, "%s: the resumed model %s has %s=%s", opt[f], o->resume, key[f], have ? have : "(none)");
	}
}


/* Continue the run in o->resume: its options bind. */
static void resume(ed_opts *o, llr_encdec_model **model, llr_train_state **ts)
{
	llr_err e = {0};
	if (llr_encdec_model_load(o->resume, model, ts, &e) < 0)
		cli_die_err(&e);
	if (!*ts || !(*ts)->optim)
		cli_die("%s: no training state to resume from", o->resume);
	const llr_meta *m = (*model)->meta;
	check_fixed(o, m);
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->max_len = (int)llr_meta_num(m, "max_len", o->max_len);
	o->dropout = llr_encdec_cfg((*model)->net)->dropout;
	if (o->batch < 1 || o->max_len < 1)
		cli_die("%s: bad batch or max_len in meta", o->resume);
	lim_resume(&o->lim, o->lim_given, m, o->resume);
	train_optim_resume(usage, *ts, o->set_lr ? o->lr : 0, o->eps);
}

/* The priming table from the training pairs (--prime table). */
static void prime(const ed_opts *o, llr_source *s, const llr_lexicon *x, const llr_encdec_pairs *tp)
{
	llr_err e = {0};
	int32_t Vs = (int32_t)llr_strmap_size(s->vocab), V = (int32_t)llr_strmap_size(x->vocab);
	free(s->table);
	s->table = ecalloc((size_t)Vs * (size_t)V, sizeof *s->table);
	if (llr_prime_table(Vs, V, tp->n, tp->src, tp->soff, tp->tgt, tp->toff, o->prime_iters, o->prime_k, s->table, &e) < 0)
		cli_die_err(&e);
	s->prime_iters = o->prime_iters;
	s->prime_k = o->prime_k;
}

/* A fresh model over the stream's lexicon and source. */
static void fresh(ed_opts *o, llr_lexicon *x, llr_source *s, const llr_encdec_pairs *tp, llr_encdec_model **model, llr_train_state **tsp)
{
	llr_err e = {0};
	if (o->prime)
		prime(o, s, x, tp);
	if (!o->output)
		o->output = LLR_OUT_LOGLINEAR;
	int sm = o->output == LLR_OUT_SOFTMAX;
	if (sm && o->prime)
		cli_usage_error(usage, "--prime table: the background of a softmax output is uniform; use --output loglinear");
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	llr_encdec_config c = {
	    .src_vocab = s->psi->rows,
	    .src_feat = s->psi->cols,
	    .vocab = V,
	    .feat_out = sm ? V : x->phi->cols,
	    .feat_in = sm ? V : x->psi ? x->psi->cols
	                               : x->phi->cols,
	    .embed = o->embed,
	    .hidden = o->hidden,
	    .enc_layers = o->enc_layers,
	    .attn_hidden = o->attn_hidden,
	    .attention = o->attention,
	    .output = o->output,
	    .primed = o->prime,
	    .dropout = (float)o->dropout,
	};
	llr_encdec_model *m = ecalloc(1, sizeof *m);
	m->lex = x;
	m->src = s;
	if (!(m->net = llr_encdec_model_net(&c, x, s, &e)))
		cli_die_err(&e);
	if (!(m->meta = llr_meta_new()))
		cli_oom();
	llr_train_state *ts = ecalloc(1, sizeof *ts);
	llr_rng seeder, init;
	llr_rng_seed(&seeder, o->seed);
	llr_rng_seed(&init, llr_rng_u64(&seeder));
	llr_rng_seed(&ts->rng_epoch, llr_rng_u64(&seeder));
	llr_rng_seed(&ts->rng, llr_rng_u64(&seeder));
	llr_encdec_init(m->net, &init);
	llr_optim_config oc;
	train_optim_config(&oc, o->optim, o->set_lr ? o->lr : 0, o->eps);
	size_t np;
	llr_encdec_params(m->net, &np);
	if (!(ts->optim = llr_optim_new(&oc, np, &e)))
		cli_die_err(&e);
	ts->lr = oc.lr;
	ts->best_valid = ts->last_valid = INFINITY;
	int rc = llr_meta_set(m->meta, "optim", llr_optim_name(o->optim));
	rc |= llr_meta_setf(m->meta, "lr", "%g", (double)oc.lr);
	rc |= llr_meta_setf(m->meta, "batch", "%d", o->batch);
	rc |= llr_meta_setf(m->meta, "max_len", "%d", o->max_len);
	rc |= llr_meta_setf(m->meta, "seed", "%llu", (unsigned long long)o->seed);
	if (rc < 0)
		cli_oom();
	*model = m;
	*tsp = ts;
}

/* The stream: lexicon, source and pairs. */
static void open_stream(const ed_opts *o, llr_lexicon **x, llr_source **s, llr_encdec_pairs *tp)
{
	llr_err e = {0};
	const char *sname = o->stream ? o->stream : "<stdin>";
	llr_tensor_reader *r = llr_tr_open(o->stream, "features", &e);
	if (!r)
		cli_die_err(&e);
	if (!llr_meta_get(llr_tr_meta(r), "source_vocab_size"))
		cli_die("%s: no source side: not made by featurize --source (an encoder-decoder needs parallel data)", sname);
	if (llr_lexicon_read(r, x, &e) < 0 || llr_source_read(r, (int32_t)llr_strmap_size((*x)->vocab), s, &e) < 0) {
		if (strncmp(e.msg, sname, strlen(sname)))
			llr_err_prefix(&e, "%s", sname);
		cli_die_err(&e);
	}
	if (llr_encdec_pairs_read(r, sname, *x, *s, o->max_len, tp, &e) < 0)
		cli_die_err(&e);
	llr_tr_close(r);
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

/* A resumed model's source and lexicon for the stream's (checked to be
 * the same); a primed one's table estimated again from the same pairs. */
static void resume_sides(ed_opts *o, llr_encdec_model *m, llr_lexicon *x, llr_source *s, const llr_encdec_pairs *tp)
{
	llr_err e = {0};
	if (m->src->table) { /* the same table from the same pairs */
		s->prime_iters = m->src->prime_iters;
		s->prime_k = m->src->prime_k;
		o->prime_iters = s->prime_iters;
		o->prime_k = s->prime_k;
		prime(o, s, x, tp);
	}
	if (llr_encdec_model_fits(m, x, s, &e) < 0)
		cli_die("%s: does not fit %s: %s", o->resume, o->stream ? o->stream : "<stdin>", e.msg);
	llr_lexicon_free(x);
	llr_source_free(s);
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
	if (o.resume)
		resume(&o, &model, &ts);
	llr_lexicon *x = NULL;
	llr_source *s = NULL;
	llr_encdec_pairs tp = {0}, vp = {0};
	open_stream(&o, &x, &s, &tp);
	if (model)
		resume_sides(&o, model, x, s, &tp);
	else
		fresh(&o, x, s, &tp, &model, &ts);
	if (llr_train_limits_meta(&o.lim, model->meta) < 0)
		cli_oom();
	train_optim_meta(model->meta, ts->optim);
	if (llr_train_schedule_meta(&o.lim, model->meta) < 0)
		cli_oom();
	if (o.valid && llr_encdec_pairs_read_text(o.valid_src, o.valid, model->lex, model->src, o.max_len, &vp, &e) < 0)
		cli_die_err(&e);
	if (!o.quiet)
		say_start(&o, &dist, model, &tp);
	llr_train_job *job;
	llr_encdec_train_cfg cfg = {.batch = o.batch, .max_len = o.max_len, .dropout = o.dropout > 0};
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
