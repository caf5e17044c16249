/*
 * score_encdec.c - score for encoder-decoder models (issue 15): score -m
 * MODEL --source SRC [TARGET] reads sources and targets as aligned line
 * pairs and writes, one line per pair, the forced-decoding
 * log-probability of the target (its </s> included) given the source
 * (llr_encdec_score), the predicted tokens and the target OOVs, as score
 * does for a language model.  The spec is score(1), "Encoder-decoder".
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen_encdec.h"
#include "progress.h"

static const char usage[] =
    "usage: score [-q] -m MODEL --source SRC [-o FILE] [--base e|2|10] [--per-token]\n"
    "             [--batch N] [--threads N] [TARGET]\n"
    "       (an encoder-decoder model: one source and one target a line)\n";

enum { S_SOURCE = 256,
       S_BASE,
       S_PERTOK,
       S_BATCH,
       S_THREADS };

static const struct option score_opts[] = {
    {"model", required_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'}, /* no progress line (there is no summary) */
    {"source", required_argument, NULL, S_SOURCE},
    {"base", required_argument, NULL, S_BASE},
    {"per-token", no_argument, NULL, S_PERTOK},
    {"batch", required_argument, NULL, S_BATCH},
    {"threads", required_argument, NULL, S_THREADS},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

typedef struct score_ctx {
	const char *model, *output, *source, *target;
	double scale; /* 1 / log(base) */
	int per_token, batch, threads, quiet;
	llr_encdec_model *m;
	cli_progress prog;
	long long pairs, tokens; /* scored so far */
	FILE *out;
	/* the pending batch */
	int n;
	int32_t *src, *tgt, *slen, *tlen, *oov;
	size_t cap_s, cap_t;
	int32_t *bsrc, *bin, *btgt;
	float *lp;
	int64_t unk;
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
		}
	}
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

static void put_line(score_ctx *c, int b, int T, const int32_t *tgt)
{
	const llr_lexicon *x = c->m->lex;
	double lp = 0;
	for (int t = 0; t < c->tlen[b]; t++)
		lp += c->lp[(size_t)t * c->n + b];
	fprintf(c->out, "%.4f\t%d\t%d", lp * c->scale, c->tlen[b], c->oov[b]);
	for (int t = 0; c->per_token && t < c->tlen[b]; t++)
		fprintf(c->out, "\t%s=%.4f", llr_strmap_str(x->vocab, tgt[t]), c->lp[(size_t)t * c->n + b] * c->scale);
	fputc('\n', c->out);
}

/* Score the pending pairs and write their lines. */
static void flush(score_ctx *c)
{
	if (!c->n)
		return;
	int B = c->n, S = 0, T = 0;
	for (int b = 0; b < B; b++) {
		S = MAX(S, c->slen[b]);
		T = MAX(T, c->tlen[b]);
	}
	c->bsrc = ereallocarray(c->bsrc, (size_t)S * B, sizeof *c->bsrc);
	c->bin = ereallocarray(c->bin, (size_t)T * B, sizeof *c->bin);
	c->btgt = ereallocarray(c->btgt, (size_t)T * B, sizeof *c->btgt);
	c->lp = ereallocarray(c->lp, (size_t)T * B, sizeof *c->lp);
	size_t so = 0, to = 0;
	size_t *toff = ecalloc((size_t)B + 1, sizeof *toff);
	for (int b = 0; b < B; b++) {
		for (int j = 0; j < S; j++)
			c->bsrc[(size_t)j * B + b] = j < c->slen[b] ? c->src[so + j] : 0;
		for (int t = 0; t < T; t++) {
			int in = t < c->tlen[b];
			c->bin[(size_t)t * B + b] = t == 0 ? LLR_BOS_ID : in ? c->tgt[to + t - 1]
			                                                     : c->m->lex->eos_id;
			c->btgt[(size_t)t * B + b] = in ? c->tgt[to + t] : -1;
		}
		toff[b] = to;
		so += (size_t)c->slen[b];
		to += (size_t)c->tlen[b];
	}
	llr_encdec_batch bt = {.B = B, .S = S, .T = T, .src = c->bsrc, .src_len = c->slen, .input = c->bin, .target = c->btgt};
	llr_err e = {0};
	if (llr_encdec_score(c->m->net, &bt, c->lp, NULL, &e) < 0)
		cli_die_err(&e);
	for (int b = 0; b < B; b++) {
		put_line(c, b, T, c->tgt + toff[b]);
		c->tokens += c->tlen[b];
	}
	c->pairs += B;
	free(toff);
	c->n = 0;
	if (cli_progress_due(&c->prog))
		cli_progress_show(&c->prog, c->pairs, "pairs", c->tokens, "tok", cli_progress_fraction(&c->prog));
}

/* Queue one pair. */
static void add_pair(score_ctx *c, const char *sl, size_t sn, const char *tl, size_t tn)
{
	const llr_lexicon *x = c->m->lex;
	size_t so = 0, to = 0;
	for (int b = 0; b < c->n; b++) {
		so += (size_t)c->slen[b];
		to += (size_t)c->tlen[b];
	}
	int32_t *ids = NULL;
	size_t cap = 0;
	int ns = encdec_source_ids(c->m->src, sl, sn, &ids, &cap, &c->unk);
	if (so + (size_t)ns > c->cap_s) {
		c->cap_s = 2 * (so + (size_t)ns);
		c->src = ereallocarray(c->src, c->cap_s, sizeof *c->src);
	}
	memcpy(c->src + so, ids, (size_t)ns * sizeof *ids);
	free(ids);
	size_t nt = llr_tokens_count(tl, tn) + 1, pos = 0, kl;
	if (to + nt > c->cap_t) {
		c->cap_t = 2 * (to + nt);
		c->tgt = ereallocarray(c->tgt, c->cap_t, sizeof *c->tgt);
	}
	const char *tok;
	int oov = 0;
	size_t k = to;
	while (llr_token_next(tl, tn, &pos, &tok, &kl)) {
		int32_t id = llr_strmap_get(x->vocab, tok, kl);
		if (id < 0) {
			id = x->unk_id;
			oov++;
		}
		c->tgt[k++] = id;
	}
	c->tgt[k++] = x->eos_id;
	c->slen[c->n] = ns;
	c->tlen[c->n] = (int32_t)nt;
	c->oov[c->n] = oov;
	if (++c->n == c->batch)
		flush(c);
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
		add_pair(c, sl, sn, tl, tn);
	}
	flush(c);
	llr_lines_close(ls);
	llr_lines_close(lt);
}

int score_encdec_main(int argc, char **argv)
{
	score_ctx c = {0};
	score_parse(&c, argc, argv);
	llr_blas_set_threads(c.threads);
	c.m = encdec_load(c.model);
	c.slen = ecalloc((size_t)c.batch, sizeof *c.slen);
	c.tlen = ecalloc((size_t)c.batch, sizeof *c.tlen);
	c.oov = ecalloc((size_t)c.batch, sizeof *c.oov);
	cli_output out;
	cli_output_open_lines(&out, c.output);
	c.out = out.fp;
	cli_progress_init(&c.prog, c.quiet, out.fp == stdout);
	score_pairs(&c);
	cli_progress_clear();
	cli_output_close(&out);
	free(c.src);
	free(c.tgt);
	free(c.slen);
	free(c.tlen);
	free(c.oov);
	free(c.bsrc);
	free(c.bin);
	free(c.btgt);
	free(c.lp);
	llr_encdec_model_free(c.m);
	return 0;
}
