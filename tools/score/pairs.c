/*
 * pairs.c - score's pairs mode (score(1), "Encoder-decoder"): score -m
 * MODEL --source SRC [TARGET] reads sources and targets as aligned line
 * pairs and writes, one line per pair, the forced-decoding
 * log-probability of the target (its </s> included) given the source
 * (llr_model_score_pairs), the predicted tokens and the target OOVs, as
 * score does for a language model; with --fsa, --regex or --grammar,
 * under that constraint as a decode-time mask (llr_model_mask_pairs).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../progress.h"
#include "pairs.h"

static const char usage[] =
    "usage: score [-q] -m MODEL --source SRC [-o FILE] [--base e|2|10] [--per-token]\n"
    "             [--batch N] [--threads N] [--fsa FILE | --regex PATTERN | --grammar FILE]\n"
    "             [TARGET]\n"
    "       (an encoder-decoder model: one source and one target a line)\n";

enum { S_SOURCE = 256,
       S_BASE,
       S_PERTOK,
       S_BATCH,
       S_THREADS,
       S_FSA,
       S_REGEX,
       S_GRAMMAR };

static const struct option score_opts[] = {
    {"model", required_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'}, /* no progress line (there is no summary) */
    {"source", required_argument, NULL, S_SOURCE},
    {"base", required_argument, NULL, S_BASE},
    {"per-token", no_argument, NULL, S_PERTOK},
    {"batch", required_argument, NULL, S_BATCH},
    {"threads", required_argument, NULL, S_THREADS},
    {"fsa", required_argument, NULL, S_FSA},
    {"regex", required_argument, NULL, S_REGEX},
    {"grammar", required_argument, NULL, S_GRAMMAR},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* A line split into NUL-terminated tokens. */
typedef struct pline {
	llr_buf text;
	const char **words;
	size_t n, cap;
} pline;

typedef struct score_ctx {
	const char *model, *output, *source, *target, *fsa, *regex, *grammar;
	double scale; /* 1 / log(base) */
	int per_token, batch, threads, quiet;
	llr_model *m;
	cli_progress prog;
	long long pairs, tokens; /* scored so far */
	FILE *out;
	/* the pending batch: n pairs */
	int n;
	pline *src, *tgt;
	llr_sentence *ssent, *tsent;
	double *lp;
	unsigned char *oov;
	size_t cap;
} score_ctx;

static void score_parse(score_ctx *c, int argc, char **argv)
{
	int o;
	c->scale = 1.0;
	c->batch = 32;
	c->threads = 1;
	optind = 0;
	while ((o = cli_getopt(argc, argv, ":hm:o:q", score_opts, usage)) != -1) {
		switch (o) {
		case 'm':
			if (c->model)
				cli_usage_error(usage, "one -m MODEL: score has no ensembles");
			c->model = optarg;
			break;
		case 'o': c->output = optarg; break;
		case 'q': c->quiet = 1; break;
		case S_SOURCE: c->source = optarg; break;
		case S_BASE:
			if (strcmp(optarg, "e") && strcmp(optarg, "2") && strcmp(optarg, "10"))
				cli_usage_error(usage, "--base: want e, 2 or 10, got '%s'", optarg);
			c->scale = !strcmp(optarg, "e") ? 1.0 : 1.0 / log(atof(optarg));
			break;
		case S_PERTOK: c->per_token = 1; break;
		case S_BATCH: c->batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 4096); break;
		case S_THREADS: c->threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024); break;
		case S_FSA: c->fsa = optarg; break;
		case S_REGEX: c->regex = optarg; break;
		case S_GRAMMAR: c->grammar = optarg; break;
		}
	}
	cli_constraint_one(usage, c->fsa, c->regex, c->grammar);
	if (!c->model)
		cli_usage_error(usage, "no model: -m MODEL is required");
	if (!c->source)
		cli_usage_error(usage, "%s: an encoder-decoder model scores pairs: --source SRC is required", c->model);
	if (argc - optind > 1)
		cli_usage_error(usage, "at most one target file");
	c->target = optind < argc ? argv[optind] : "-";
	if (!strcmp(c->source, "-") && !strcmp(c->target, "-"))
		cli_usage_error(usage, "--source and the targets cannot both be standard input");
}

/* Copy line into p and split it into its tokens. */
static void split_line(pline *p, const char *line, size_t len)
{
	llr_buf_clear(&p->text);
	if (llr_buf_append(&p->text, line, len) || llr_buf_putc(&p->text, '\0'))
		cli_oom();
	char *s = p->text.data;
	size_t pos = 0, tl;
	const char *tok;
	p->n = 0;
	while (llr_token_next(s, len, &pos, &tok, &tl)) {
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 32;
			p->words = ereallocarray(p->words, p->cap, sizeof *p->words);
		}
		p->words[p->n++] = tok;
		s[pos] = '\0'; /* it was a separator, or the end */
		pos += pos < len;
	}
}

/* Pair b's line, its predictions from o. */
static void put_line(score_ctx *c, int b, size_t o)
{
	const pline *t = &c->tgt[b];
	size_t T = t->n + 1;
	double lp = 0;
	int noov = 0;
	for (size_t k = o; k < o + T; k++) {
		lp += c->lp[k];
		noov += c->oov[k];
	}
	fprintf(c->out, "%.4f\t%zu\t%d", lp * c->scale, T, noov);
	for (size_t k = 0; c->per_token && k < T; k++)
		fprintf(c->out, "\t%s=%.4f", k == t->n ? LLR_EOS : c->oov[o + k] ? LLR_UNK : t->words[k], c->lp[o + k] * c->scale);
	fputc('\n', c->out);
}

/* Score the pending pairs and write their lines. */
static void flush(score_ctx *c)
{
	if (!c->n)
		return;
	size_t n = 0;
	for (int b = 0; b < c->n; b++) {
		c->ssent[b] = (llr_sentence){c->src[b].words, c->src[b].n};
		c->tsent[b] = (llr_sentence){c->tgt[b].words, c->tgt[b].n};
		n += c->tgt[b].n + 1;
	}
	if (n > c->cap) {
		c->cap = 2 * n;
		c->lp = ereallocarray(c->lp, c->cap, sizeof *c->lp);
		c->oov = ereallocarray(c->oov, c->cap, 1);
	}
	llr_err e = {0};
	if (llr_model_score_pairs(c->m, c->ssent, c->tsent, (size_t)c->n, c->lp, c->oov, &e) < 0)
		cli_die_err(&e);
	for (size_t b = 0, o = 0; b < (size_t)c->n; o += c->tgt[b].n + 1, b++) {
		put_line(c, (int)b, o);
		c->tokens += (long long)c->tgt[b].n + 1;
	}
	c->pairs += c->n;
	c->n = 0;
	if (cli_progress_due(&c->prog))
		cli_progress_show(&c->prog, c->pairs, "pairs", c->tokens, "tok", cli_progress_fraction(&c->prog));
}

static void score_pairs(score_ctx *c)
{
	llr_err e = {0};
	llr_lines *ls = llr_lines_open(c->source, 0, &e), *lt = ls ? llr_lines_open(c->target, 0, &e) : NULL;
	if (!ls || !lt)
		cli_die_err(&e);
	cli_progress_inputs(&c->prog, (char *const *)&c->target, 1);
	cli_progress_lines(&c->prog, c->target, lt);
	for (;;) {
		const char *sl, *tl;
		size_t sn, tn;
		int a = llr_lines_next(ls, &sl, &sn, &e);
		if (a < 0)
			cli_die_err(&e);
		int b = a ? llr_lines_next(lt, &tl, &tn, &e) : 0;
		if (b < 0)
			cli_die_err(&e);
		if (!a && (b = llr_lines_next(lt, &tl, &tn, &e)) < 0)
			cli_die_err(&e);
		if (a != b) /* the pending batch is not written */
			cli_die("%s and %s are not aligned: they diverge at line %zu, which only %s has", llr_lines_name(ls), llr_lines_name(lt),
			        a ? llr_lines_lineno(ls) : llr_lines_lineno(lt), a ? llr_lines_name(ls) : llr_lines_name(lt));
		if (!a)
			break;
		split_line(&c->src[c->n], sl, sn);
		split_line(&c->tgt[c->n], tl, tn);
		if (++c->n == c->batch)
			flush(c);
	}
	flush(c);
	llr_lines_close(ls);
	llr_lines_close(lt);
}

int score_pairs_wanted(int argc, char **argv)
{
	return cli_models_can(argc, argv, "--source", LLR_MODEL_SCORE_PAIRS, LLR_MODEL_SCORE);
}

static void pline_free(pline *p)
{
	llr_buf_free(&p->text);
	free(p->words);
}

int score_pairs_main(int argc, char **argv)
{
	score_ctx c = {0};
	score_parse(&c, argc, argv);
	llr_blas_set_threads(c.threads);
	llr_model_opts mo = llr_model_opts_default();
	mo.open = LLR_OPEN_OFF; /* the targets' OOVs are <unk> */
	llr_err e = {0};
	if (llr_model_open(c.model, &mo, &c.m, &e) < 0 || llr_model_score_pairs(c.m, NULL, NULL, 0, NULL, NULL, &e) < 0 ||
	    ((c.fsa || c.regex || c.grammar) && llr_model_mask_pairs(c.m, c.fsa, c.regex, c.grammar, &e) < 0))
		cli_die_err(&e);
	c.src = ecalloc((size_t)c.batch, sizeof *c.src);
	c.tgt = ecalloc((size_t)c.batch, sizeof *c.tgt);
	c.ssent = ecalloc((size_t)c.batch, sizeof *c.ssent);
	c.tsent = ecalloc((size_t)c.batch, sizeof *c.tsent);
	cli_output out;
	cli_output_open_lines(&out, c.output);
	c.out = out.fp;
	cli_progress_init(&c.prog, c.quiet, out.fp == stdout);
	score_pairs(&c);
	cli_progress_clear();
	cli_output_close(&out);
	for (int b = 0; b < c.batch; b++) {
		pline_free(&c.src[b]);
		pline_free(&c.tgt[b]);
	}
	free(c.src);
	free(c.tgt);
	free(c.ssent);
	free(c.tsent);
	free(c.lp);
	free(c.oov);
	llr_model_close(c.m);
	return 0;
}
