/*
 * gen - sentences from an llrnn model (gen(1)): ancestral sampling with
 * temperature, top-k and top-p, greedy decoding, or beam search with
 * length normalisation; optional prefixes, log-probabilities and the
 * features of every token; or, from a model that reads a source (an
 * encoder-decoder, or an ensemble of them), an output for every source
 * line (gen(1), "Encoder-decoder"): greedy or beam search, n-best lists
 * and the attention.  The model does the generating, whatever its
 * family (llr_gen_*, lib/llrnn.h); this file parses the options, reads
 * the prefixes or the sources and lays out the output.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "tokcheck.h"

static const char usage[] =
    "usage: gen [-hqv] -m MODEL [-o FILE] [-n N] [-s SEED] [-p TOKENS | --prefix-file FILE]\n"
    "           [--max-len N] [--temperature T] [--top-k K] [--top-p P] [--greedy]\n"
    "           [--beam K] [--nbest K] [--no-unk] [--logprob] [--show-features]\n"
    "           [--threads N] [--closed] [--spell-tries N] [--strict]\n"
    "           [--fsa FILE | --regex PATTERN | --grammar FILE]\n"
    "       gen --version\n";

static const char help[] =
    "Encoder-decoder (the operands are sources):\n"
    "  --len-norm A             rank hypotheses by log p / length^A (default 1)\n"
    "  --nbest N                write the N best hypotheses with their rank and score\n"
    "  --logprob                add each hypothesis' log-probability\n"
    "  --show-attention         write the attention weights after each line\n"
    "\n"
    "Options:\n"
    "  -m, --model MODEL        the model (required; repeat for an encoder-decoder ensemble)\n"
    "  -o, --output FILE        write to FILE (atomically; .gz .bz2 .xz .zst compress)\n"
    "  -n, --count N            sampled sentences per prefix (default 1)\n"
    "  -s, --seed SEED          seed of the random generator (default 1)\n"
    "  -p, --prefix TOKENS      continue TOKENS\n"
    "  --prefix-file FILE       continue every line of FILE\n"
    "  --max-len N              at most N generated words a sentence (default 100)\n"
    "  --temperature T          divide log-probabilities by T before drawing (default 1)\n"
    "  --top-k K                draw among the K most probable words (default 0: all)\n"
    "  --top-p P                draw among the fewest words of mass P (default 1: all)\n"
    "  --greedy                 the most probable word at every step\n"
    "  --beam K                 beam search with K beams\n"
    "  --nbest K                print the K best sentences of the beam (default 1)\n"
    "  --no-unk                 never produce <unk> nor an unseen word\n"
    "  --logprob                add each sentence's log-probability\n"
    "  --show-features          one token a line with its features\n"
    "  --threads N              OpenBLAS threads (default 1; 0 one per core)\n"
    "  --closed                 no unseen words from a model with a spelling model\n"
    "  --spell-tries N          draws an unseen word's spelling may take (default 100000)\n"
    "  --strict                 a prefix tokenised otherwise than the training text is an error\n"
    "  --fsa FILE               only sentences of the automaton in FILE (OpenFst text over tokens)\n"
    "  --regex PATTERN          only sentences that match PATTERN (a regular expression over tokens)\n"
    "  --grammar FILE           only sentences of the GBNF grammar in FILE (over the tokens joined by spaces)\n"
    "  -q, --quiet              no progress line\n"
    "  -v, --verbose            notes on stderr\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n";

enum {
	OPT_PREFIX_FILE = 256,
	OPT_MAX_LEN,
	OPT_TEMPERATURE,
	OPT_TOP_K,
	OPT_TOP_P,
	OPT_GREEDY,
	OPT_BEAM,
	OPT_NBEST,
	OPT_NO_UNK,
	OPT_LOGPROB,
	OPT_SHOW_FEATURES,
	OPT_THREADS,
	OPT_CLOSED,
	OPT_SPELL_TRIES,
	OPT_STRICT,
	OPT_FSA,
	OPT_REGEX,
	OPT_GRAMMAR,
};

static const struct option longopts[] = {
    {"model", required_argument, NULL, 'm'},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"output", required_argument, NULL, 'o'},
    {"count", required_argument, NULL, 'n'},
    {"seed", required_argument, NULL, 's'},
    {"prefix", required_argument, NULL, 'p'},
    {"prefix-file", required_argument, NULL, OPT_PREFIX_FILE},
    {"max-len", required_argument, NULL, OPT_MAX_LEN},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"top-k", required_argument, NULL, OPT_TOP_K},
    {"top-p", required_argument, NULL, OPT_TOP_P},
    {"greedy", no_argument, NULL, OPT_GREEDY},
    {"beam", required_argument, NULL, OPT_BEAM},
    {"nbest", required_argument, NULL, OPT_NBEST},
    {"no-unk", no_argument, NULL, OPT_NO_UNK},
    {"logprob", no_argument, NULL, OPT_LOGPROB},
    {"show-features", no_argument, NULL, OPT_SHOW_FEATURES},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"closed", no_argument, NULL, OPT_CLOSED},
    {"spell-tries", required_argument, NULL, OPT_SPELL_TRIES},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"fsa", required_argument, NULL, OPT_FSA},
    {"regex", required_argument, NULL, OPT_REGEX},
    {"grammar", required_argument, NULL, OPT_GRAMMAR},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* The prefix of the sentences: its words as given. */
typedef struct prefix {
	llr_buf text;
	const char **words;
	size_t n, cap;
} prefix;

/* Everything one run of gen keeps: options, the model and its
 * generator, the output. */
typedef struct generator {
	struct {
		long long n;
		int n_given;
		int show_features;
		int logprob;
		llr_gen_opts go;
		const char *model, *output, *prefix_text, *prefix_file;
		unsigned long long seed;
		int threads;
		int verbose, quiet;
		int strict; /* --strict: a prefix unlike the model's text fails (tokcheck.c) */
	} opt;
	llr_model *m;
	llr_gen *gen;
	llr_rng master;
	llr_buf outb;
	cli_output out;
	cli_progress prog;
	long long sentences, tokens; /* written so far */
	long long want;              /* sentences in all, -1 when not known */
	tokcheck tc;
} generator;

static void set_prefix(prefix *p, const char *line, size_t len)
{
	llr_buf_clear(&p->text);
	if (llr_buf_append(&p->text, line, len) || llr_buf_putc(&p->text, '\0'))
		cli_oom();
	char *s = p->text.data;
	p->n = 0;
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_next(s, len, &pos, &tok, &tl)) {
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 16;
			p->words = ereallocarray(p->words, p->cap, sizeof *p->words);
		}
		p->words[p->n++] = tok;
		s[pos] = '\0'; /* it was a separator, or the end */
		pos += pos < len;
	}
}

static void put_lp(llr_buf *o, double v)
{
	if (llr_buf_printf(o, isfinite(v) ? "%.4f" : "%.0f", v) < 0)
		cli_oom();
}

static void put(llr_buf *o, const char *s)
{
	if (llr_buf_append(o, s, strlen(s)))
		cli_oom();
}

static void putch(llr_buf *o, int c)
{
	if (llr_buf_putc(o, c))
		cli_oom();
}

/* Result i as a line: the prefix, the words, with --logprob a TAB and
 * log p. */
static void put_line(generator *g, const prefix *p, size_t i, const llr_gen_result *r)
{
	llr_buf *o = &g->outb;
	for (size_t k = 0; k < p->n; k++) {
		if (k)
			putch(o, ' ');
		put(o, p->words[k]);
	}
	for (size_t k = 0; k < r->n; k++) {
		if (p->n || k)
			putch(o, ' ');
		put(o, llr_gen_word(g->gen, i, k));
	}
	if (g->opt.logprob) {
		putch(o, '\t');
		put_lp(o, r->logp_total);
	}
	putch(o, '\n');
}

/* --show-features: one token a line, its log p with --logprob, its
 * features; </s> with --logprob when it ended the sentence. */
static void put_tokens(generator *g, const prefix *p, size_t i, const llr_gen_result *r)
{
	llr_buf *o = &g->outb;
	const float *plp = llr_gen_prefix_logp(g->gen, NULL);
	size_t total = p->n + r->n + (g->opt.logprob && r->ended);
	for (size_t k = 0; k < total; k++) {
		int eos = k >= p->n + r->n;
		put(o, k < p->n ? p->words[k] : eos ? LLR_EOS : llr_gen_word(g->gen, i, k - p->n));
		putch(o, '\t');
		if (g->opt.logprob) {
			put_lp(o, k < p->n ? plp[k] : eos ? r->eos_logp : r->logp[k - p->n]);
			putch(o, '\t');
		}
		llr_err err = {0};
		if (!eos && llr_gen_features(g->gen, i, k, o, &err) < 0)
			cli_die_err(&err);
		putch(o, '\n');
	}
	putch(o, '\n');
}

static void emit(generator *g, const prefix *p, size_t i)
{
	llr_gen_result r;
	llr_gen_result_get(g->gen, i, &r);
	llr_buf_clear(&g->outb);
	if (g->opt.show_features)
		put_tokens(g, p, i, &r);
	else
		put_line(g, p, i, &r);
	fwrite(g->outb.data, 1, g->outb.len, g->out.fp);
	g->sentences++;
	g->tokens += (long long)r.n + r.ended;
	if (cli_progress_due(&g->prog))
		cli_progress_show(&g->prog, g->sentences, "sentences", g->tokens, "tok",
		                  g->want > 0 ? (double)g->sentences / (double)g->want : cli_progress_fraction(&g->prog));
}

/* The sentences after prefix p: the beam's best, or sampled ones,
 * LLR_GEN_BATCH at a time. */
static void generate(generator *g, prefix *p)
{
	llr_err err = {0};
	llr_sentence s = {p->words, p->n};
	if (llr_gen_start(g->gen, &s, &err) < 0)
		cli_die_err(&err);
	if (g->opt.go.beam > 0) {
		int n = llr_gen_beam(g->gen, &err);
		if (n < 0)
			cli_die_err(&err);
		for (int i = 0; i < n; i++)
			emit(g, p, (size_t)i);
		return;
	}
	for (long long count = g->opt.go.sample.greedy ? 1 : g->opt.n; count > 0;) {
		size_t G = (size_t)MIN(count, LLR_GEN_BATCH);
		count -= (long long)G;
		if (llr_gen_sample(g->gen, &g->master, G, &err) < 0)
			cli_die_err(&err);
		for (size_t i = 0; i < G; i++)
			emit(g, p, i);
	}
}

/* Options that exclude or need each other. */
static void check_args(const generator *g, int nbest_given)
{
	if (!g->opt.model)
		cli_usage_error(usage, "no model: -m MODEL is required");
	if (g->opt.prefix_text && g->opt.prefix_file)
		cli_usage_error(usage, "-p and --prefix-file exclude each other");
	if (g->opt.go.sample.greedy && g->opt.go.beam)
		cli_usage_error(usage, "--greedy and --beam exclude each other");
	if ((g->opt.go.sample.greedy || g->opt.go.beam) && g->opt.n_given)
		cli_usage_error(usage, "-n applies to sampling; --greedy and --beam give one sentence (--nbest for more)");
	if (g->opt.go.fsa && g->opt.go.regex)
		cli_usage_error(usage, "--fsa and --regex exclude each other");
	if (g->opt.go.grammar && (g->opt.go.fsa || g->opt.go.regex))
		cli_usage_error(usage, "--grammar excludes --fsa and --regex");
	if (nbest_given && !g->opt.go.beam)
		cli_usage_error(usage, "--nbest needs --beam");
	if (g->opt.go.beam && g->opt.go.nbest > g->opt.go.beam)
		cli_usage_error(usage, "--nbest %d is more than --beam %d", g->opt.go.nbest, g->opt.go.beam);
	llr_err err = {0};
	if (llr_sample_opts_check(&g->opt.go.sample, &err) != LLR_OK)
		cli_usage_error(usage, "%s", err.msg);
}

static void parse_args(generator *g, int argc, char **argv)
{
	int nbest_given = 0;
	g->opt.seed = 1;
	g->opt.threads = 1;
	g->opt.n = 1;
	g->opt.go.max_len = 100;
	g->opt.go.nbest = 1;
	g->opt.go.spell_tries = 100000;
	llr_sample_opts_init(&g->opt.go.sample);
	int c;
	while ((c = cli_getopt(argc, argv, ":hm:o:n:qs:p:v", longopts, usage)) != -1) {
		switch (c) {
		case 'm':
			g->opt.model = optarg;
			break;
		case 'v':
			g->opt.verbose = 1;
			break;
		case 'q':
			g->opt.quiet = 1;
			break;
		case 'o':
			g->opt.output = optarg;
			break;
		case 'n':
			g->opt.n = cli_parse_int(usage, "-n", optarg, 1, 1000000000LL);
			g->opt.n_given = 1;
			break;
		case 's':
			g->opt.seed = (unsigned long long)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
			break;
		case 'p':
			g->opt.prefix_text = optarg;
			break;
		case OPT_PREFIX_FILE:
			g->opt.prefix_file = optarg;
			break;
		case OPT_MAX_LEN:
			g->opt.go.max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 100000);
			break;
		case OPT_TEMPERATURE:
			g->opt.go.sample.temperature = cli_parse_double(usage, "--temperature", optarg, 1e-6, 1e6);
			break;
		case OPT_TOP_K:
			g->opt.go.sample.top_k = (int32_t)cli_parse_int(usage, "--top-k", optarg, 0, INT32_MAX);
			break;
		case OPT_TOP_P:
			g->opt.go.sample.top_p = cli_parse_double(usage, "--top-p", optarg, 1e-9, 1);
			break;
		case OPT_GREEDY:
			g->opt.go.sample.greedy = 1;
			break;
		case OPT_BEAM:
			g->opt.go.beam = (int)cli_parse_int(usage, "--beam", optarg, 1, 1000);
			break;
		case OPT_NBEST:
			g->opt.go.nbest = (int)cli_parse_int(usage, "--nbest", optarg, 1, 1000);
			nbest_given = 1;
			break;
		case OPT_NO_UNK:
			g->opt.go.no_unk = 1;
			break;
		case OPT_LOGPROB:
			g->opt.logprob = 1;
			break;
		case OPT_SHOW_FEATURES:
			g->opt.show_features = 1;
			break;
		case OPT_THREADS:
			g->opt.threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024);
			break;
		case OPT_CLOSED:
			g->opt.go.closed = 1;
			break;
		case OPT_SPELL_TRIES:
			g->opt.go.spell_tries = cli_parse_int(usage, "--spell-tries", optarg, 1, INT64_MAX);
			break;
		case OPT_STRICT:
			g->opt.strict = 1;
			break;
		case OPT_FSA:
			g->opt.go.fsa = optarg;
			break;
		case OPT_REGEX:
			g->opt.go.regex = optarg;
			break;
		case OPT_GRAMMAR:
			g->opt.go.grammar = optarg;
			break;
		}
	}
	if (optind < argc)
		cli_usage_error(usage, "unexpected operand '%s' (prefixes come with -p or --prefix-file)", argv[optind]);
	check_args(g, nbest_given);
}

/* The model and its generator.  A family that cannot generate fails
 * with the library's message (exit 1), one without beam search or
 * features with a usage error. */
static void generator_init(generator *g)
{
	llr_err err = {0};
	llr_model_opts mo = llr_model_opts_default();
	mo.open = g->opt.go.closed || g->opt.go.fsa || g->opt.go.regex || g->opt.go.grammar ? LLR_OPEN_OFF : LLR_OPEN_AUTO;
	if (llr_model_open(g->opt.model, &mo, &g->m, &err) != LLR_OK)
		cli_die_err(&err);
	llr_model_on_notice(g->m, cli_notice, NULL);
	llr_model_info info;
	llr_model_describe(g->m, &info);
	if ((info.ops & LLR_MODEL_GEN) && ((g->opt.go.beam && !(info.ops & LLR_MODEL_BEAM)) ||
	                                   (g->opt.show_features && !(info.ops & LLR_MODEL_GEN_FEATURES))))
		cli_usage_error(usage, "--beam and --show-features need a neural model, not an n-gram model");
	const llr_meta *meta = llr_model_meta(g->m);
	if (g->opt.verbose && meta)
		cli_note_checksums(g->opt.model, meta);
	llr_blas_set_threads(g->opt.threads);
	if (llr_blas_reserve(&err) < 0)
		cli_die_err(&err);
	llr_rng_seed(&g->master, g->opt.seed);
	if (llr_gen_new(g->m, &g->opt.go, &g->gen, &err) != LLR_OK)
		cli_die_err(&err);
	tokcheck_init(&g->tc, g->opt.model, meta, g->opt.strict, 0);
}

static void generator_free(generator *g)
{
	if (g->opt.verbose) {
		llr_buf_clear(&g->outb);
		if (llr_gen_note(g->gen, &g->outb) < 0)
			cli_oom();
		if (g->outb.len)
			fprintf(stderr, "%s: %.*s\n", cli_prog, (int)g->outb.len, g->outb.data);
	}
	llr_buf_free(&g->outb);
	llr_gen_free(g->gen);
	llr_model_close(g->m);
	tokcheck_free(&g->tc);
}

/* Generate after every line of the prefix file, or after -p (default:
 * nothing). */
static void run(generator *g)
{
	prefix p = {0};
	if (g->opt.prefix_file) {
		llr_err err = {0};
		llr_lines *l = llr_lines_open(g->opt.prefix_file, 0, &err);
		if (!l)
			cli_die_err(&err);
		cli_progress_inputs(&g->prog, (char *const *)&g->opt.prefix_file, 1);
		cli_progress_lines(&g->prog, g->opt.prefix_file, l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &err)) > 0) {
			if (tokcheck_line(&g->tc, line, len))
				tokcheck_fail(&g->tc, llr_lines_name(l), llr_lines_lineno(l));
			set_prefix(&p, line, len);
			generate(g, &p);
		}
		if (rc < 0)
			cli_die_err(&err);
		llr_lines_close(l);
	} else {
		const char *t = g->opt.prefix_text ? g->opt.prefix_text : "";
		if (tokcheck_line(&g->tc, t, strlen(t)))
			tokcheck_fail(&g->tc, "-p", 0);
		set_prefix(&p, t, strlen(t));
		generate(g, &p);
	}
	llr_buf_free(&p.text);
	free(p.words);
}

/* ------------------------------------------------------------ sources */

static const char src_usage[] =
    "usage: gen [-q] -m MODEL [-m MODEL ...] [-o FILE] [--greedy | --beam K [--nbest N]]\n"
    "           [--len-norm A] [--max-len N] [--logprob] [--show-attention]\n"
    "           [--threads N] [--fsa FILE | --regex PATTERN | --grammar FILE] [FILE ...]\n"
    "       (an encoder-decoder model: one source a line in, its output out)\n";

enum { S_BEAM = 256, S_NBEST, S_GREEDY, S_LENNORM, S_MAXLEN, S_LOGPROB, S_ATT, S_THREADS, S_FSA, S_REGEX, S_GRAMMAR };

static const struct option src_opts[] = {
    {"model", required_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'}, /* no progress line */
    {"beam", required_argument, NULL, S_BEAM},
    {"nbest", required_argument, NULL, S_NBEST},
    {"greedy", no_argument, NULL, S_GREEDY},
    {"len-norm", required_argument, NULL, S_LENNORM},
    {"max-len", required_argument, NULL, S_MAXLEN},
    {"logprob", no_argument, NULL, S_LOGPROB},
    {"show-attention", no_argument, NULL, S_ATT},
    {"threads", required_argument, NULL, S_THREADS},
    {"fsa", required_argument, NULL, S_FSA}, /* the mask-only mode */
    {"regex", required_argument, NULL, S_REGEX},
    {"grammar", required_argument, NULL, S_GRAMMAR},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* gen over sources: the models (the first one's generator, the others
 * in its ensemble), the options, the output. */
typedef struct srcgen {
	const char **paths;
	llr_model **models;
	int M;
	llr_gen *gen;
	llr_gen_opts go;
	int logprob, nbest_given, quiet, threads;
	const char *output;
	FILE *out;
	prefix src;
	int64_t lines;
	cli_progress prog;
	long long tokens; /* written so far */
} srcgen;

static void src_parse(srcgen *g, int argc, char **argv)
{
	int c, greedy = 0;
	llr_gen_opts_init(&g->go);
	g->go.beam = 1;
	g->threads = 1;
	optind = 0;
	while ((c = cli_getopt(argc, argv, ":hm:o:q", src_opts, src_usage)) != -1) {
		switch (c) {
		case 'm':
			g->paths = ereallocarray(g->paths, (size_t)g->M + 1, sizeof *g->paths);
			g->paths[g->M++] = optarg;
			break;
		case 'o': g->output = optarg; break;
		case 'q': g->quiet = 1; break;
		case S_BEAM: g->go.beam = (int)cli_parse_int(src_usage, "--beam", optarg, 1, 1000); break;
		case S_NBEST:
			g->go.nbest = (int)cli_parse_int(src_usage, "--nbest", optarg, 1, 1000);
			g->nbest_given = 1;
			break;
		case S_GREEDY: greedy = 1; break;
		case S_LENNORM: g->go.len_norm = cli_parse_double(src_usage, "--len-norm", optarg, 0, 10); break;
		case S_MAXLEN: g->go.max_len = (int)cli_parse_int(src_usage, "--max-len", optarg, 1, 100000); break;
		case S_LOGPROB: g->logprob = 1; break;
		case S_ATT: g->go.attention = 1; break;
		case S_THREADS: g->threads = (int)cli_parse_int(src_usage, "--threads", optarg, 0, 1024); break;
		case S_FSA: g->go.fsa = optarg; break;
		case S_REGEX: g->go.regex = optarg; break;
		case S_GRAMMAR: g->go.grammar = optarg; break;
		}
	}
	cli_constraint_one(src_usage, g->go.fsa, g->go.regex, g->go.grammar);
	if (!g->M)
		cli_usage_error(src_usage, "no model: -m MODEL is required");
	if (greedy && g->go.beam > 1)
		cli_usage_error(src_usage, "--greedy and --beam exclude each other");
	if (g->go.nbest > g->go.beam)
		cli_usage_error(src_usage, "--nbest %d is more than --beam %d", g->go.nbest, g->go.beam);
}

/* Open the models; the first one's generator, the others its ensemble
 * (one target vocabulary). */
static void src_load(srcgen *g)
{
	llr_err e = {0};
	g->models = ecalloc((size_t)g->M, sizeof *g->models);
	for (int k = 0; k < g->M; k++) {
		const char *path = g->paths[k];
		llr_model_info info;
		if (llr_model_open(path, NULL, &g->models[k], &e) != LLR_OK)
			cli_die_err(&e);
		llr_model_describe(g->models[k], &info);
		if ((info.ops & LLR_MODEL_GEN) && !(info.ops & LLR_MODEL_GEN_SOURCE))
			cli_die("%s: a language model, trained without a source: it cannot read sources (train an encoder-decoder on featurize --source data)", path);
		if ((k ? llr_gen_ensemble(g->gen, g->models[k], &e) : llr_gen_new(g->models[k], &g->go, &g->gen, &e)) != LLR_OK)
			cli_die_err(&e);
	}
}

/* The attention of result i: a header with the source tokens, then one
 * row per output token (</s> included), every line starting with '#'. */
static void put_attention(srcgen *g, size_t i)
{
	size_t rows, cols;
	const float *a = llr_gen_attention(g->gen, i, &rows, &cols);
	if (!a)
		return;
	fputs("#\t", g->out);
	for (size_t k = 0; k < g->src.n; k++)
		fprintf(g->out, "%s ", g->src.words[k]);
	fputs(LLR_EOS "\n", g->out);
	llr_gen_result r;
	llr_gen_result_get(g->gen, i, &r);
	for (size_t t = 0; t < rows; t++) {
		fprintf(g->out, "#\t%s\t", t < r.n ? llr_gen_word(g->gen, i, t) : LLR_EOS);
		for (size_t j = 0; j < cols; j++)
			fprintf(g->out, "%s%.4f", j ? " " : "", (double)a[t * cols + j]);
		fputc('\n', g->out);
	}
}

static void src_line(srcgen *g, const char *line, size_t len)
{
	llr_err e = {0};
	set_prefix(&g->src, line, len);
	llr_sentence s = {g->src.words, g->src.n};
	int nout;
	if (llr_gen_start(g->gen, &s, &e) < 0 || (nout = llr_gen_beam(g->gen, &e)) < 0)
		cli_die_err(&e);
	g->lines++;
	for (int i = 0; i < nout; i++) {
		llr_gen_result r;
		llr_gen_result_get(g->gen, (size_t)i, &r);
		if (g->nbest_given)
			fprintf(g->out, "%lld\t%d\t%.4f\t", (long long)g->lines, i + 1, r.score);
		for (size_t k = 0; k < r.n; k++) {
			if (k)
				fputc(' ', g->out);
			fputs(llr_gen_word(g->gen, (size_t)i, k), g->out);
		}
		if (g->logprob)
			fprintf(g->out, "\t%.4f", r.logp_total);
		fputc('\n', g->out);
		if (g->go.attention)
			put_attention(g, (size_t)i);
		g->tokens += (long long)(r.n + (size_t)r.ended);
	}
	if (cli_progress_due(&g->prog))
		cli_progress_show(&g->prog, g->lines, "sources", g->tokens, "tok", cli_progress_fraction(&g->prog));
}

/* gen over the source lines of the operands (none: stdin). */
static int gen_sources(int argc, char **argv)
{
	srcgen g = {0};
	src_parse(&g, argc, argv);
	char **files = argv + optind;
	int nfiles = argc - optind;
	static char *stdin_only[] = {"-"};
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	llr_blas_set_threads(g.threads);
	src_load(&g);
	cli_output out;
	cli_output_open_lines(&out, g.output);
	g.out = out.fp;
	cli_progress_init(&g.prog, g.quiet, out.fp == stdout);
	cli_progress_inputs(&g.prog, files, nfiles);
	llr_err e = {0};
	for (int f = 0; f < nfiles; f++) {
		llr_lines *l = llr_lines_open(files[f], 0, &e);
		if (!l)
			cli_die_err(&e);
		cli_progress_lines(&g.prog, files[f], l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
			src_line(&g, line, len);
		if (rc < 0)
			cli_die_err(&e);
		llr_lines_close(l);
	}
	cli_progress_clear();
	cli_output_close(&out);
	llr_gen_free(g.gen);
	for (int k = 0; k < g.M; k++)
		llr_model_close(g.models[k]);
	free(g.models);
	free(g.paths);
	llr_buf_free(&g.src.text);
	free(g.src.words);
	return 0;
}

/* --------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	cli_init(argv[0], "gen");
	cli_set_help(help);
	if (cli_models_can(argc, argv, NULL, LLR_MODEL_GEN_SOURCE, 0)) /* an encoder-decoder, say */
		return gen_sources(argc, argv);
	generator g = {0};
	parse_args(&g, argc, argv);
	generator_init(&g);
	cli_output_open_lines(&g.out, g.opt.output);
	cli_progress_init(&g.prog, g.opt.quiet, g.out.fp == stdout);
	g.want = g.opt.prefix_file ? -1 : g.opt.go.beam ? g.opt.go.nbest : g.opt.go.sample.greedy ? 1 : g.opt.n;
	run(&g);
	cli_progress_clear();
	if (g.opt.strict) /* a mismatch fails before the output is in place */
		tokcheck_end(&g.tc);
	cli_output_close(&g.out);
	if (!g.opt.strict)
		tokcheck_end(&g.tc);
	generator_free(&g);
	return 0;
}
