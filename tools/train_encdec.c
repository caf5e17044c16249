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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
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
	double lr, eps, clip, min_impr; /* eps: 0 = the default */
	int patience;
	train_sched sched;
	int64_t epochs;
	double max_time;
	int64_t max_tokens;
	uint64_t seed;
	int threads, progress, quiet, distributed;
	int set[F_NFIXED];
	int set_lr, set_clip, set_min_impr, set_patience, set_epochs;
} ed_opts;

enum {
	O_OUTPUT = 256,
	O_ATT,
	O_PRIME,
	O_PITERS,
	O_PSMOOTH,
	O_ENCL,
	O_HIDDEN,
	O_EMBED,
	O_AHID,
	O_DROPOUT,
	O_BATCH,
	O_MAXLEN,
	O_OPTIM,
	O_LR,
	O_EPS,
	O_CLIP,
	O_MINIMPR,
	O_VALID,
	O_VSRC,
	O_PATIENCE,
	O_EPOCHS,
	O_MAXTIME,
	O_MAXTOKENS,
	O_THREADS,
	O_LOG,
	O_PROGRESS,
	O_RESUME,
	O_LAYERS,
	O_INIT,
	O_DIST,
};

static const struct option long_opts[] = {
    {"quiet", no_argument, NULL, 'q'},
    {"seed", required_argument, NULL, 's'},
    {"output", required_argument, NULL, O_OUTPUT},
    {"attention", required_argument, NULL, O_ATT},
    {"prime", required_argument, NULL, O_PRIME},
    {"prime-iters", required_argument, NULL, O_PITERS},
    {"prime-smoothing", required_argument, NULL, O_PSMOOTH},
    {"enc-layers", required_argument, NULL, O_ENCL},
    {"hidden", required_argument, NULL, O_HIDDEN},
    {"embed", required_argument, NULL, O_EMBED},
    {"attn-hidden", required_argument, NULL, O_AHID},
    {"dropout", required_argument, NULL, O_DROPOUT},
    {"batch", required_argument, NULL, O_BATCH},
    {"max-len", required_argument, NULL, O_MAXLEN},
    {"optim", required_argument, NULL, O_OPTIM},
    {"lr", required_argument, NULL, O_LR},
    {"eps", required_argument, NULL, O_EPS},
    {"clip", required_argument, NULL, O_CLIP},
    {"min-improvement", required_argument, NULL, O_MINIMPR},
    {"valid", required_argument, NULL, O_VALID},
    {"valid-source", required_argument, NULL, O_VSRC},
    {"patience", required_argument, NULL, O_PATIENCE},
    {"epochs", required_argument, NULL, O_EPOCHS},
    {"max-time", required_argument, NULL, O_MAXTIME},
    {"max-tokens", required_argument, NULL, O_MAXTOKENS},
    {"threads", required_argument, NULL, O_THREADS},
    {"log", required_argument, NULL, O_LOG},
    {"progress", required_argument, NULL, O_PROGRESS},
    {"resume", required_argument, NULL, O_RESUME},
    {"layers", required_argument, NULL, O_LAYERS},
    {"init", required_argument, NULL, O_INIT},
    {"distributed", no_argument, NULL, O_DIST},
    SCHED_OPTIONS,
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

static double parse_duration(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double mul = 1;
	if (end != s && *end && !end[1]) {
		mul = *end == 's' ? 1 : *end == 'm' ? 60
		                    : *end == 'h'   ? 3600
		                    : *end == 'd'   ? 86400
		                                    : 0;
		if (mul > 0)
			end++;
	}
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		cli_usage_error(usage, "--max-time: not a positive duration: '%s'", s);
	return v * mul;
}

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
	o->clip = 5;
	o->min_impr = 0.003;
	o->patience = 3;
	sched_defaults(&o->sched);
	o->epochs = 30;
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
	case O_CLIP:
		o->clip = cli_parse_double(usage, "--clip", optarg, 0, 1e12);
		o->set_clip = 1;
		break;
	case O_MINIMPR:
		o->min_impr = cli_parse_double(usage, "--min-improvement", optarg, 0, 1e6);
		o->set_min_impr = 1;
		break;
	case O_VALID: o->valid = optarg; break;
	case O_VSRC: o->valid_src = optarg; break;
	case O_PATIENCE:
		o->patience = (int)cli_parse_int(usage, "--patience", optarg, 1, 1 << 20);
		o->set_patience = 1;
		break;
	case O_EPOCHS:
		o->epochs = cli_parse_int(usage, "--epochs", optarg, 0, 1 << 30);
		o->set_epochs = 1;
		break;
	case O_MAXTIME: o->max_time = parse_duration(optarg); break;
	case O_MAXTOKENS: o->max_tokens = cli_parse_int(usage, "--max-tokens", optarg, 1, INT64_MAX); break;
	case O_THREADS: o->threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024); break;
	case O_LOG: o->log = optarg; break;
	case O_PROGRESS: o->progress = (int)cli_parse_int(usage, "--progress", optarg, 0, INT32_MAX); break;
	case O_RESUME: o->resume = optarg; break;
	case O_DIST: o->distributed = 1; break;
	case O_LAYERS: cli_usage_error(usage, "--layers: the encoder-decoder has --enc-layers (the decoder has one layer)");
	case O_INIT: cli_usage_error(usage, "--init: not for the encoder-decoder (weights are uniform in [-0.08, 0.08))");
	default: sched_parse_opt(&o->sched, c, optarg, usage);
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
	if (o->sched.decay > 0 && !o->valid)
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

/* --------------------------------------------------------------- pairs */

/* Source-target pairs: pair k is src[soff[k] .. soff[k+1]) (ending in the
 * source </s>) and tgt[toff[k] .. toff[k+1]) (ending in </s>). */
typedef struct pairs {
	int32_t *src, *tgt;
	size_t *soff, *toff;
	size_t n, ns, nt, cap_s, cap_t, cap_p;
	int64_t tokens;  /* target tokens, </s> included */
	int64_t skipped; /* over --max-len */
} pairs;

static void push_id(int32_t **a, size_t *n, size_t *cap, int32_t x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1 << 14;
		*a = ereallocarray(*a, *cap, sizeof **a);
	}
	(*a)[(*n)++] = x;
}

/* Sentence ends in ids (those equal to eos) as offsets into off (n + 1). */
static size_t split_ids(const int32_t *ids, size_t n, int32_t eos, size_t **off)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ids[i] == eos;
	*off = ecalloc(k + 1, sizeof **off);
	size_t j = 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == eos)
			(*off)[++j] = i + 1;
	return k;
}

/* Read chunks named prefix* while they come; returns the member name
 * that ended them (NULL at the end). */
static const char *read_chunks(llr_tensor_reader *r, const char *sname, const char *first, const char *prefix, int32_t lim, int32_t **ids, size_t *n, size_t *cap)
{
	llr_err e = {0};
	const char *mn = first;
	int rc = 1;
	while (mn && !strncmp(mn, prefix, strlen(prefix))) {
		llr_tensor *t = NULL;
		int64_t shape[1] = {-1};
		if (llr_tr_tensor_expect(r, LLR_I32, 1, shape, &t, &e) < 0)
			cli_die_err(&e);
		const int32_t *d = t->data;
		for (size_t i = 0; i < llr_tensor_numel(t); i++) {
			if (d[i] < 0 || d[i] >= lim)
				cli_die("%s: %s: id %d out of range [0, %d)", sname, mn, (int)d[i], (int)lim);
			push_id(ids, n, cap, d[i]);
		}
		llr_tensor_free(t);
		if ((rc = llr_tr_next(r, &mn, &e)) < 0)
			cli_die_err(&e);
		if (rc == 0)
			mn = NULL;
	}
	return mn;
}

/* The training pairs of the stream, keeping those within max_len. */
static void read_stream(llr_tensor_reader *r, const char *sname, const llr_lexicon *x, const llr_source *s, int max_len, pairs *p)
{
	llr_err e = {0};
	const char *mn = NULL;
	int rc = llr_tr_next(r, &mn, &e);
	if (rc < 0)
		cli_die_err(&e);
	int32_t *tid = NULL, *sid = NULL;
	size_t nt = 0, ns = 0, ct = 0, cs = 0;
	mn = read_chunks(r, sname, rc ? mn : NULL, "ids/", (int32_t)llr_strmap_size(x->vocab), &tid, &nt, &ct);
	mn = read_chunks(r, sname, mn, "source/ids/", (int32_t)llr_strmap_size(s->vocab), &sid, &ns, &cs);
	if (mn)
		cli_die("%s: unexpected member '%s' (ids/ then source/ids/ chunks expected)", sname, mn);
	size_t *toff, *soff;
	size_t kt = split_ids(tid, nt, x->eos_id, &toff), ks = split_ids(sid, ns, s->eos_id, &soff);
	if (!kt)
		cli_die("%s: no ids/ members: empty corpus", sname);
	if (kt != ks)
		cli_die("%s: %zu target sentences but %zu source sentences (not a featurize --source stream?)", sname, kt, ks);
	if (toff[kt] != nt || soff[ks] != ns)
		cli_die("%s: the last sentence has no </s> (truncated stream?)", sname);
	for (size_t k = 0; k < kt; k++) {
		size_t sl = soff[k + 1] - soff[k], tl = toff[k + 1] - toff[k];
		if (sl > (size_t)max_len || tl > (size_t)max_len) {
			p->skipped++;
			continue;
		}
		for (size_t i = 0; i < sl; i++)
			push_id(&p->src, &p->ns, &p->cap_s, sid[soff[k] + i]);
		for (size_t i = 0; i < tl; i++)
			push_id(&p->tgt, &p->nt, &p->cap_t, tid[toff[k] + i]);
		if (p->n + 2 > p->cap_p) {
			p->cap_p = p->cap_p ? 2 * p->cap_p : 1024;
			p->soff = ereallocarray(p->soff, p->cap_p, sizeof *p->soff);
			p->toff = ereallocarray(p->toff, p->cap_p, sizeof *p->toff);
		}
		p->soff[0] = p->toff[0] = 0;
		p->n++;
		p->soff[p->n] = p->ns;
		p->toff[p->n] = p->nt;
		p->tokens += (int64_t)tl;
	}
	free(tid);
	free(sid);
	free(toff);
	free(soff);
	if (!p->n)
		cli_die("%s: no pair within --max-len %d", sname, max_len);
}

/* The ids of one text line: source tokens (unknown -> <unk>) and </s>,
 * or target tokens likewise. */
static void line_ids(pairs *p, const char *line, size_t len, int src, const llr_lexicon *x, const llr_source *s)
{
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_next(line, len, &pos, &tok, &tl)) {
		int32_t id = src ? llr_source_id(s, tok, tl) : llr_strmap_get(x->vocab, tok, tl);
		if (id < 0)
			id = x->unk_id;
		if (src)
			push_id(&p->src, &p->ns, &p->cap_s, id);
		else
			push_id(&p->tgt, &p->nt, &p->cap_t, id);
	}
	if (src)
		push_id(&p->src, &p->ns, &p->cap_s, s->eos_id);
	else
		push_id(&p->tgt, &p->nt, &p->cap_t, x->eos_id);
}

/* Validation pairs from two aligned text files. */
static void read_valid(const char *spath, const char *tpath, const llr_lexicon *x, const llr_source *s, int max_len, pairs *p)
{
	llr_err e = {0};
	llr_lines *ls = llr_lines_open(spath, 0, &e), *lt = ls ? llr_lines_open(tpath, 0, &e) : NULL;
	if (!ls || !lt)
		cli_die_err(&e);
	for (;;) {
		const char *sl, *tl;
		size_t sn, tn;
		int a = llr_lines_next(ls, &sl, &sn, &e);
		if (a < 0)
			cli_die_err(&e);
		size_t s0 = p->ns;
		if (a)
			line_ids(p, sl, sn, 1, x, s);
		int b = llr_lines_next(lt, &tl, &tn, &e);
		if (b < 0)
			cli_die_err(&e);
		if (a != b)
			cli_die("%s and %s are not aligned: they diverge at line %zu, which only %s has", spath, tpath,
			        (a ? llr_lines_lineno(ls) : llr_lines_lineno(lt)), a ? spath : tpath);
		if (!a)
			break;
		size_t t0 = p->nt;
		line_ids(p, tl, tn, 0, x, s);
		if (p->ns - s0 > (size_t)max_len || p->nt - t0 > (size_t)max_len) {
			p->ns = s0;
			p->nt = t0;
			p->skipped++;
			continue;
		}
		if (p->n + 2 > p->cap_p) {
			p->cap_p = p->cap_p ? 2 * p->cap_p : 1024;
			p->soff = ereallocarray(p->soff, p->cap_p, sizeof *p->soff);
			p->toff = ereallocarray(p->toff, p->cap_p, sizeof *p->toff);
		}
		p->soff[0] = p->toff[0] = 0;
		p->n++;
		p->soff[p->n] = p->ns;
		p->toff[p->n] = p->nt;
		p->tokens += (int64_t)(p->nt - t0);
	}
	llr_lines_close(ls);
	llr_lines_close(lt);
	if (!p->n)
		cli_die("%s: no validation pair", tpath);
}

static void pairs_free(pairs *p)
{
	free(p->src);
	free(p->tgt);
	free(p->soff);
	free(p->toff);
}

/* ------------------------------------------------------------- batches */

typedef struct batcher {
	int32_t *src, *slen, *input, *target;
	int maxB;
	size_t cap_s, cap_t;
} batcher;

typedef struct order {
	int32_t *idx;  /* pairs in batch order */
	size_t *first; /* batch k is idx[first[k] .. first[k+1]) */
	size_t nbatches;
} order;

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Length-bucketed batches: with rng, shuffle the pairs, sort them by
 * source then target length (ties in shuffled order: the sort key ends
 * with the position), cut into batches of B and shuffle the batches;
 * without rng (validation) sorted, ties in file order. */
static void make_order(order *o, const pairs *p, int B, llr_rng *rng)
{
	size_t n = p->n, nb = (n + (size_t)B - 1) / (size_t)B;
	if (!o->idx) {
		o->idx = ecalloc(n, sizeof *o->idx);
		o->first = ecalloc(nb + 1, sizeof *o->first);
	}
	int32_t *perm = ecalloc(n, sizeof *perm);
	for (size_t i = 0; i < n; i++)
		perm[i] = (int32_t)i;
	if (rng)
		llr_rng_shuffle_i32(rng, perm, n);
	/* sort keys (source length, target length, rank in perm): stable */
	int64_t *key = ecalloc(n, sizeof *key);
	for (size_t i = 0; i < n; i++) {
		int32_t k = perm[i];
		int64_t sl = (int64_t)(p->soff[k + 1] - p->soff[k]), tl = (int64_t)(p->toff[k + 1] - p->toff[k]);
		key[i] = ((MIN(sl, 4095) * 4096 + MIN(tl, 4095)) << 32) | (int64_t)i;
	}
	qsort(key, n, sizeof *key, cmp_i64);
	int32_t *sorted = ecalloc(n, sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = perm[key[i] & 0xffffffff];
	int32_t *bperm = ecalloc(nb, sizeof *bperm);
	for (size_t i = 0; i < nb; i++)
		bperm[i] = (int32_t)i;
	if (rng)
		llr_rng_shuffle_i32(rng, bperm, nb);
	size_t at = 0;
	for (size_t i = 0; i < nb; i++) {
		size_t from = (size_t)bperm[i] * (size_t)B, to = MIN(from + (size_t)B, n);
		o->first[i] = at;
		for (size_t j = from; j < to; j++)
			o->idx[at++] = sorted[j];
	}
	o->first[nb] = at;
	o->nbatches = nb;
	free(sorted);
	free(bperm);
	free(key);
	free(perm);
}

static void order_free(order *o)
{
	free(o->idx);
	free(o->first);
	memset(o, 0, sizeof *o);
}

static void grow(int32_t **a, size_t *cap, size_t want)
{
	if (want > *cap) {
		*cap = want * 2;
		*a = ereallocarray(*a, *cap, sizeof **a);
	}
}

/* The batch of pairs idx[0 .. B): sources S x B (with </s>), decoder
 * inputs <s> then the target, targets with -1 padding. */
static llr_encdec_batch make_batch(batcher *bb, const pairs *p, const int32_t *idx, int B)
{
	int S = 0, T = 0;
	for (int b = 0; b < B; b++) {
		S = MAX(S, (int)(p->soff[idx[b] + 1] - p->soff[idx[b]]));
		T = MAX(T, (int)(p->toff[idx[b] + 1] - p->toff[idx[b]]));
	}
	grow(&bb->src, &bb->cap_s, (size_t)S * B + 1);
	grow(&bb->input, &bb->cap_t, (size_t)T * B + 1);
	bb->target = ereallocarray(bb->target, bb->cap_t, sizeof *bb->target);
	if (B > bb->maxB) {
		bb->slen = ereallocarray(bb->slen, (size_t)B, sizeof *bb->slen);
		bb->maxB = B;
	}
	for (int b = 0; b < B; b++) {
		const int32_t *s = p->src + p->soff[idx[b]], *t = p->tgt + p->toff[idx[b]];
		int sl = (int)(p->soff[idx[b] + 1] - p->soff[idx[b]]), tl = (int)(p->toff[idx[b] + 1] - p->toff[idx[b]]);
		bb->slen[b] = sl;
		for (int j = 0; j < S; j++)
			bb->src[(size_t)j * B + b] = j < sl ? s[j] : 0;
		for (int j = 0; j < T; j++) {
			bb->input[(size_t)j * B + b] = j == 0 ? LLR_BOS_ID : j < tl ? t[j - 1]
			                                                            : t[0];
			bb->target[(size_t)j * B + b] = j < tl ? t[j] : -1;
		}
	}
	return (llr_encdec_batch){.B = B, .S = S, .T = T, .src = bb->src, .src_len = bb->slen, .input = bb->input, .target = bb->target};
}

static void batcher_free(batcher *bb)
{
	free(bb->src);
	free(bb->slen);
	free(bb->input);
	free(bb->target);
}

/* ------------------------------------------------------------ training */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND; /* a second signal kills */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

typedef struct trainer {
	ed_opts *o;
	llr_encdec_model *model;
	llr_train_state *ts;
	size_t n;          /* parameters */
	float *bestbuf;    /* weights of the best epoch (with --valid) */
	int best_current;  /* the net holds them */
	int saved_epoch;   /* last epoch end written to the model file, -1 none */
	const char *stop;  /* why training ended */
	double last_train; /* last epoch's train log-perplexity */
	int64_t train_tokens;
	FILE *log;
	double t0;
	int tty, wrote;
	cli_progress prog; /* the step line on a terminal */
	int64_t run_tok; /* training tokens of this run's steps */
	double run_sec;  /* wall-clock seconds spent in them */
	batcher bb;
	order ord, vord;
	train_dist *dist; /* the ranks of --distributed (one otherwise) */
	int32_t *share;   /* this rank's pairs of a batch (--distributed) */
	int sig;          /* a signal caught by any rank, 0 none */
	int time_up;      /* --max-time passed on some rank (the last step's) */
} trainer;

static void save(trainer *T)
{
	llr_err e = {0};
	T->wrote = 1;
	if (T->dist->rank != 0)
		return; /* rank 0 writes the files */
	llr_meta *m = T->model->meta;
	llr_train_state *ts = T->ts;
	int rc = llr_meta_setf(m, "epochs_done", "%lld", (long long)ts->epoch);
	rc |= llr_meta_setf(m, "steps", "%lld", (long long)ts->step);
	rc |= llr_meta_setf(m, "train_tokens", "%lld", (long long)T->train_tokens);
	if (isfinite(T->last_train))
		rc |= llr_meta_setf(m, "train_logppl", "%.6f", T->last_train);
	if (isfinite(ts->best_valid)) {
		rc |= llr_meta_setf(m, "valid_logppl", "%.6f", ts->best_valid);
		rc |= llr_meta_setf(m, "best_epoch", "%lld", (long long)ts->best_epoch);
	}
	rc |= llr_meta_set(m, "stopped", T->stop ? T->stop : "running");
	if (rc < 0)
		cli_oom();
	ts->best = T->bestbuf && !T->best_current ? T->bestbuf : NULL;
	if (llr_encdec_model_save(T->o->out, T->model, ts, &e) < 0)
		cli_die_err(&e);
	ts->best = NULL;
}

static void progress_clear(trainer *T)
{
	(void)T;
	cli_progress_clear();
}

static void log_row(trainer *T, double train, double valid, double lr)
{
	if (!T->log)
		return;
	fprintf(T->log, "%lld\t%lld\t%.3f\t%.6f\t%.6f\t%.6g\n", (long long)T->ts->epoch, (long long)T->ts->step, cli_now() - T->t0, train, valid, lr);
	if (fflush(T->log) != 0 || ferror(T->log))
		cli_die("%s: write error: %s", T->o->log, strerror(errno));
}

static _Noreturn void diverged(trainer *T, const char *what)
{
	progress_clear(T);
	if (T->saved_epoch >= 0)
		cli_die("epoch %lld step %lld: %s: training diverged; %s keeps the model of epoch %d (try a lower --lr or --clip)",
		        (long long)T->ts->epoch + 1, (long long)T->ts->step + 1, what, T->o->out, T->saved_epoch);
	cli_die("epoch %lld step %lld: %s: training diverged before the first epoch ended; no model written (try a lower --lr or --clip)",
	        (long long)T->ts->epoch + 1, (long long)T->ts->step + 1, what);
}

static _Noreturn void interrupted(trainer *T)
{
	int sig = T->sig;
	progress_clear(T);
	T->stop = "interrupted";
	save(T);
	if (T->dist->rank == 0)
		cli_warn("%s: epoch %lld batch %lld: saved %s; continue with --resume %s", sig == SIGINT ? "interrupted" : "terminated",
		         (long long)T->ts->epoch + 1, (long long)T->ts->batch, T->o->out, T->o->out);
	dist_finish(T->dist);
	exit(128 + sig);
}

/* Validation log-perplexity (nats per target token, </s> included),
 * computed by rank 0 and known to every rank. */
static double evaluate_here(trainer *T, const pairs *vp);
static double evaluate(trainer *T, const pairs *vp)
{
	return dist_bcast_double(T->dist, T->dist->rank == 0 ? evaluate_here(T, vp) : NAN);
}

static double evaluate_here(trainer *T, const pairs *vp)
{
	llr_err e = {0};
	int B = T->o->batch;
	if (!T->vord.idx)
		make_order(&T->vord, vp, B, NULL);
	float *lp = ecalloc((size_t)B * (size_t)T->o->max_len + 1, sizeof *lp);
	double nll = 0;
	int64_t ntok = 0;
	for (size_t k = 0; k < T->vord.nbatches; k++) {
		int nb = (int)(T->vord.first[k + 1] - T->vord.first[k]);
		llr_encdec_batch bt = make_batch(&T->bb, vp, T->vord.idx + T->vord.first[k], nb);
		if (llr_encdec_score(T->model->net, &bt, lp, NULL, &e) < 0)
			cli_die_err(&e);
		for (size_t i = 0; i < (size_t)bt.T * (size_t)nb; i++)
			if (bt.target[i] >= 0) {
				nll -= lp[i];
				ntok++;
			}
	}
	free(lp);
	return ntok ? nll / (double)ntok : NAN;
}

/* The end-of-epoch bookkeeping: best weights, patience, the learning-rate
 * schedule (train_sched.c, as for the language models). */
static void end_epoch_valid(trainer *T, double v)
{
	train_epoch_valid(T->ts, &T->o->sched, T->o->min_impr, v, llr_encdec_params(T->model->net, NULL), T->bestbuf, T->n, &T->best_current);
}

/* The gradient of this rank's share of batch k (all of it when not
 * distributed: rank r takes the batch's pairs r, r + size, ...), added to
 * the zeroed gradients; the loss and token count in s. */
static void share_grads(trainer *T, const pairs *tp, size_t k, dist_step *s)
{
	llr_err e = {0};
	llr_encdec *net = T->model->net;
	memset(llr_encdec_grads(net, NULL), 0, T->n * sizeof(float));
	const int32_t *idx = T->ord.idx + T->ord.first[k];
	int nb = (int)(T->ord.first[k + 1] - T->ord.first[k]), mine = 0;
	if (T->dist->on) {
		for (int j = T->dist->rank; j < nb; j += T->dist->size)
			T->share[mine++] = idx[j];
		idx = T->share;
		nb = mine;
	}
	llr_rng mine_rng, *rng = dist_dropout_rng(T->dist, T->o->dropout > 0, &T->ts->rng, &mine_rng);
	if (nb == 0)
		return; /* fewer pairs in the batch than ranks */
	llr_encdec_batch bt = make_batch(&T->bb, tp, idx, nb);
	int rc = llr_encdec_train_step(net, &bt, rng, &s->nll, &s->ntok, &e);
	if (rc == LLR_ENAN || (rc >= 0 && !isfinite(s->nll)))
		diverged(T, "the loss is not finite");
	if (rc < 0)
		cli_die_err(&e);
}

/* One optimiser step on batch k of the epoch's order: gradients summed
 * over the ranks, averaged over the batch's target tokens; every rank
 * takes the same step.  Signals and --max-time are agreed on here. */
static void step(trainer *T, const pairs *tp, size_t k)
{
	llr_train_state *ts = T->ts;
	llr_encdec *net = T->model->net;
	float *w = llr_encdec_params(net, NULL), *g = llr_encdec_grads(net, NULL);
	double t0 = cli_now();
	dist_step s = {0};
	share_grads(T, tp, k, &s);
	s.signal = (int)got_signal;
	s.time_up = T->o->max_time > 0 && cli_now() - T->t0 >= T->o->max_time;
	dist_reduce_step(T->dist, g, T->n, &s);
	T->sig = s.signal;
	T->time_up = s.time_up;
	double nll = s.nll;
	int64_t ntok = s.ntok;
	if (ntok > 0) {
		float scale = (float)(1.0 / (double)ntok);
		for (size_t i = 0; i < T->n; i++)
			g[i] *= scale;
	}
	if (!isfinite(llr_clip_grad_norm(g, T->n, T->o->clip)))
		diverged(T, "the gradient is not finite");
	llr_optim_step(ts->optim, w, g);
	T->best_current = 0;
	ts->step++;
	ts->batch = (int64_t)k + 1;
	ts->epoch_nll += nll;
	ts->epoch_tok += ntok;
	T->run_tok += ntok;
	T->run_sec += cli_now() - t0;
}

/* Why to stop before (or after) an epoch, NULL to go on. */
static const char *stop_reason(trainer *T, int have_valid)
{
	llr_train_state *ts = T->ts;
	if (ts->epoch >= T->o->epochs)
		return "epochs";
	if (have_valid && ts->bad_epochs >= T->o->patience)
		return "patience";
	if (ts->converged)
		return "converged";
	return NULL;
}

/* The steps of one epoch; 0 when it completed, 1 when a limit cut it. */
static int run_epoch(trainer *T, const pairs *tp, llr_rng *r)
{
	ed_opts *o = T->o;
	llr_train_state *ts = T->ts;
	make_order(&T->ord, tp, o->batch, r);
	double te = cli_now();
	T->prog.last = 0;
	int64_t tok0 = ts->epoch_tok;
	size_t kstart = (size_t)ts->batch, nb = T->ord.nbatches;
	char dur[32], rdur[32];
	for (size_t k = kstart; k < nb; k++) {
		step(T, tp, k);
		double now = cli_now();
		if (!o->quiet && (T->tty ? now - T->prog.last >= 0.25 || k + 1 == nb : o->progress > 0 && ts->step % o->progress == 0)) {
			double el = now - te;
			double per_batch = el / (double)(k + 1 - kstart), eta = per_batch * (double)(nb - k - 1);
			double run = cli_progress_run_eta(eta, per_batch * (double)nb, o->epochs - ts->epoch - 1, o->max_time, now - T->t0);
			cli_progress_step(&T->prog, "epoch %lld step %lld batch %zu/%zu loss %.4f %.0f tok/s ETA %s run ETA %s", (long long)ts->epoch + 1,
			                  (long long)ts->step, k + 1, nb, ts->epoch_nll / (double)(ts->epoch_tok ? ts->epoch_tok : 1),
			                  el > 0 ? (double)(ts->epoch_tok - tok0) / el : 0.0, cli_duration(eta, dur, sizeof dur),
			                  cli_duration(run, rdur, sizeof rdur));
		}
		if (T->sig)
			interrupted(T);
		int lim = T->time_up ? 1 : o->max_tokens > 0 && T->run_tok >= o->max_tokens ? 2
		                                                                            : 0;
		if (lim && k + 1 < nb) {
			progress_clear(T);
			T->stop = lim == 2 ? "max-tokens" : "max-time";
			save(T);
			if (!o->quiet)
				cli_warn("--%s reached in epoch %lld (batch %lld of %zu); saved %s", T->stop, (long long)ts->epoch + 1, (long long)ts->batch, nb, o->out);
			return 1;
		}
	}
	return 0;
}

static void end_epoch(trainer *T, const pairs *vp, llr_rng *r, double te, int64_t ep_tok)
{
	ed_opts *o = T->o;
	llr_train_state *ts = T->ts;
	double train_lp = ts->epoch_nll / (double)(ts->epoch_tok ? ts->epoch_tok : 1), el = cli_now() - te;
	char dur[32];
	ts->epoch++;
	ts->batch = 0;
	ts->rng_epoch = *r;
	ts->epoch_nll = 0;
	ts->epoch_tok = 0;
	T->last_train = train_lp;
	double v = NAN, lr_used = ts->lr;
	if (vp) {
		v = evaluate(T, vp);
		if (!isfinite(v))
			diverged(T, "the validation loss is not finite");
		end_epoch_valid(T, v);
	} else {
		T->best_current = 1;
	}
	progress_clear(T);
	if (!o->quiet) {
		char vb[64] = "";
		if (vp)
			snprintf(vb, sizeof vb, " valid %.4f%s", v, ts->best_epoch == ts->epoch ? " (best)" : "");
		cli_warn("epoch %lld train %.4f%s lr %.3g %.0f tok/s %s", (long long)ts->epoch, train_lp, vb, lr_used,
		         el > 0 ? (double)ep_tok / el : 0.0, cli_duration(el, dur, sizeof dur));
	}
	log_row(T, train_lp, v, lr_used);
	T->stop = stop_reason(T, vp != NULL);
	if (!T->stop && o->max_time > 0 && dist_any(T->dist, cli_now() - T->t0 >= o->max_time))
		T->stop = "max-time";
	else if (!T->stop && o->max_tokens > 0 && T->run_tok >= o->max_tokens)
		T->stop = "max-tokens";
	save(T);
	T->saved_epoch = (int)ts->epoch;
	if ((T->sig = dist_any(T->dist, (int)got_signal)))
		interrupted(T);
}

static void train(trainer *T, const pairs *tp, const pairs *vp)
{
	llr_train_state *ts = T->ts;
	if (vp && ts->epoch == 0 && ts->batch == 0 && !isfinite(ts->best_valid)) {
		double v = evaluate(T, vp);
		if (!isfinite(v))
			cli_die("the initial model gives a non-finite validation loss");
		ts->best_valid = ts->last_valid = v;
		ts->best_epoch = 0;
		memcpy(T->bestbuf, llr_encdec_params(T->model->net, NULL), T->n * sizeof(float));
		T->best_current = 1;
		if (!T->o->quiet)
			cli_warn("epoch 0 valid %.4f (%zu parameters, %lld training tokens)", v, T->n, (long long)T->train_tokens);
		log_row(T, NAN, v, ts->lr);
	}
	catch_signals();
	while (!(T->stop = stop_reason(T, vp != NULL))) {
		llr_rng r = ts->rng_epoch;
		double te = cli_now();
		int64_t tok0 = ts->epoch_tok;
		if (run_epoch(T, tp, &r))
			break;
		end_epoch(T, vp, &r, te, ts->epoch_tok - tok0);
		if (T->stop)
			break;
	}
	progress_clear(T);
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
static void resume(ed_opts *o, trainer *T)
{
	llr_err e = {0};
	if (llr_encdec_model_load(o->resume, &T->model, &T->ts, &e) < 0)
		cli_die_err(&e);
	if (!T->ts || !T->ts->optim)
		cli_die("%s: no training state to resume from", o->resume);
	const llr_meta *m = T->model->meta;
	check_fixed(o, m);
	o->batch = (int)train_meta_num(m, "batch", o->batch);
	o->max_len = (int)train_meta_num(m, "max_len", o->max_len);
	o->dropout = llr_encdec_cfg(T->model->net)->dropout;
	if (!o->set_clip)
		o->clip = train_meta_num(m, "clip", o->clip);
	if (!o->set_min_impr)
		o->min_impr = train_meta_num(m, "min_improvement", o->min_impr);
	if (!o->set_patience)
		o->patience = (int)train_meta_num(m, "patience", o->patience);
	if (!o->set_epochs)
		o->epochs = (int64_t)train_meta_num(m, "max_epochs", (double)o->epochs);
	if (o->batch < 1 || o->max_len < 1 || o->patience < 1 || o->epochs < 0)
		cli_die("%s: bad batch, max_len, patience or max_epochs in meta", o->resume);
	sched_resume(&o->sched, m);
	train_optim_resume(usage, T->ts, o->set_lr ? o->lr : 0, o->eps);
}

/* The priming table from the training pairs (--prime table). */
static void prime(const ed_opts *o, llr_source *s, const llr_lexicon *x, const pairs *tp)
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
static void fresh(ed_opts *o, trainer *T, llr_lexicon *x, llr_source *s, const pairs *tp)
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
	T->model = m;
	T->ts = ts;
}

/* The stream: lexicon, source and pairs. */
static void open_stream(const ed_opts *o, llr_lexicon **x, llr_source **s, pairs *tp)
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
	read_stream(r, sname, *x, *s, o->max_len, tp);
	llr_tr_close(r);
}

static void finish(trainer *T, const pairs *vp)
{
	ed_opts *o = T->o;
	llr_train_state *ts = T->ts;
	if (!T->wrote)
		save(T); /* --epochs 0, or a resumed run that had already ended */
	if (o->max_tokens > 0 && !o->quiet)
		cli_warn("max-tokens: %lld training tokens in %.3f s: %.0f tokens/s", (long long)T->run_tok, T->run_sec,
		         T->run_sec > 0 ? (double)T->run_tok / T->run_sec : 0.0);
	if (T->log && fclose(T->log) != 0)
		cli_die("%s: write error: %s", o->log, strerror(errno));
	if (o->quiet)
		return;
	if (isfinite(ts->best_valid) && vp)
		cli_warn("stopped (%s) after epoch %lld; best valid %.4f at epoch %lld; wrote %s", T->stop ? T->stop : "?",
		         (long long)ts->epoch, ts->best_valid, (long long)ts->best_epoch, o->out);
	else
		cli_warn("stopped (%s) after epoch %lld; wrote %s", T->stop ? T->stop : "?", (long long)ts->epoch, o->out);
}

static void open_log(trainer *T)
{
	const ed_opts *o = T->o;
	if (!o->log || T->dist->rank != 0)
		return;
	int append = o->resume && access(o->log, F_OK) == 0;
	if (!(T->log = fopen(o->log, append ? "a" : "w")))
		cli_die("%s: %s", o->log, strerror(errno));
	if (!append)
		fputs("epoch\tstep\tseconds\ttrain\tvalid\tlr\n", T->log);
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
	trainer T = {.o = &o, .saved_epoch = -1, .last_train = NAN, .dist = &dist};
	if (o.resume)
		resume(&o, &T);
	llr_lexicon *x = NULL;
	llr_source *s = NULL;
	pairs tp = {0}, vp = {0};
	open_stream(&o, &x, &s, &tp);
	if (T.model) {
		if (T.model->src->table) { /* the same table from the same pairs */
			s->prime_iters = T.model->src->prime_iters;
			s->prime_k = T.model->src->prime_k;
			o.prime_iters = s->prime_iters;
			o.prime_k = s->prime_k;
			prime(&o, s, x, &tp);
		}
		if (llr_encdec_model_fits(T.model, x, s, &e) < 0)
			cli_die("%s: does not fit %s: %s", o.resume, o.stream ? o.stream : "<stdin>", e.msg);
		llr_lexicon_free(x);
		llr_source_free(s);
		x = T.model->lex;
		s = T.model->src;
	} else {
		fresh(&o, &T, x, s, &tp);
	}
	llr_meta *m = T.model->meta;
	int rc = llr_meta_setf(m, "patience", "%d", o.patience) | llr_meta_setf(m, "max_epochs", "%lld", (long long)o.epochs) |
	         llr_meta_setf(m, "clip", "%.9g", o.clip) | llr_meta_setf(m, "min_improvement", "%.9g", o.min_impr);
	if (rc < 0)
		cli_oom();
	train_optim_meta(m, T.ts->optim);
	sched_meta(&o.sched, m);
	if (o.valid)
		read_valid(o.valid_src, o.valid, x, s, o.max_len, &vp);
	float *w = llr_encdec_params(T.model->net, &T.n);
	T.train_tokens = tp.tokens;
	if (vp.n) {
		T.bestbuf = emalloc(T.n * sizeof(float));
		memcpy(T.bestbuf, T.ts->best ? T.ts->best : w, T.n * sizeof(float));
		T.best_current = !T.ts->best;
	}
	free(T.ts->best);
	T.ts->best = NULL;
	if (o.resume)
		T.saved_epoch = (int)T.ts->epoch;
	T.tty = isatty(2);
	cli_progress_init(&T.prog, o.quiet, 0);
	T.t0 = cli_now();
	open_log(&T);
	if (!o.quiet)
		cli_warn("%s: %zu pairs (%lld over --max-len skipped), %lld target tokens, Vs %zu, V %zu, %s output, %s attention%s, %zu parameters",
		         o.stream ? o.stream : "<stdin>", tp.n, (long long)tp.skipped, (long long)tp.tokens, llr_strmap_size(s->vocab),
		         llr_strmap_size(x->vocab), llr_encdec_cfg(T.model->net)->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear",
		         llr_attention_name(llr_encdec_cfg(T.model->net)->attention), llr_encdec_cfg(T.model->net)->primed ? ", primed background" : "", T.n);
	if (dist.on) {
		T.share = ecalloc((size_t)o.batch, sizeof *T.share);
		if (!o.quiet)
			cli_warn("distributed: %d ranks, rank r trains on the pairs r, r + %d, ... of each batch; %zu bytes summed across them per step", dist.size,
			         dist.size, dist_step_bytes(T.n));
	}
	train(&T, &tp, vp.n ? &vp : NULL);
	finish(&T, vp.n ? &vp : NULL);
	free(T.bestbuf);
	pairs_free(&tp);
	pairs_free(&vp);
	order_free(&T.ord);
	order_free(&T.vord);
	batcher_free(&T.bb);
	free(T.share);
	llr_train_state_free(T.ts);
	llr_encdec_model_free(T.model);
	dist_finish(&dist);
	return 0;
}
