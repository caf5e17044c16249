/*
 * gen_encdec.c - gen for encoder-decoder models (issue 15): reads one
 * source a line and writes its output: greedy search or beam search with
 * length normalisation and n-best lists (llr_encdec_search, Neubig's
 * tutorial 7.2), over one model or an ensemble of several -m models
 * averaging their log-probabilities (7.4), optionally with the attention
 * matrix of each output.  Also its helpers: which family a command line
 * wants, loading, source ids.  The spec is gen(1), "Encoder-decoder".
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen_encdec.h"
#include "progress.h"

/* ------------------------------------------------------------- shared */

int encdec_wanted(int argc, char **argv, int source_opt)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *path = NULL;
		if (source_opt && (!strcmp(a, "--source") || !strncmp(a, "--source=", 9)))
			return 1;
		if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(a, "-m", 2) && a[2])
			path = a + 2;
		else if (!strncmp(a, "--model=", 8))
			path = a + 8;
		if (cli_model_family_is(path, "encdec"))
			return 1;
	}
	return 0;
}

llr_encdec_model *encdec_load(const char *path)
{
	llr_err e = {0};
	llr_encdec_model *m = NULL;
	if (!cli_model_family_is(path, "encdec")) {
		llr_rnnlm *lm = NULL;
		if (llr_rnnlm_load(path, &lm, &e) < 0)
			cli_die_err(&e);
		llr_rnnlm_free(lm);
		cli_die("%s: a language model, trained without a source: it cannot read sources (train an encoder-decoder on featurize --source data)", path);
	}
	if (llr_encdec_model_load(path, &m, NULL, &e) < 0)
		cli_die_err(&e);
	return m;
}

int encdec_source_ids(const llr_source *s, const char *line, size_t len, int32_t **ids, size_t *cap, int64_t *unk)
{
	size_t pos = 0, tl, n = 0;
	const char *tok;
	for (;;) {
		int more = llr_token_next(line, len, &pos, &tok, &tl);
		if (n + 1 >= *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*ids = ereallocarray(*ids, *cap, sizeof **ids);
		}
		if (!more)
			break;
		int32_t id = llr_source_id(s, tok, tl);
		*unk += id == s->unk_id && (tl != strlen(LLR_UNK) || memcmp(tok, LLR_UNK, tl));
		(*ids)[n++] = id;
	}
	(*ids)[n++] = s->eos_id;
	return (int)n;
}

/* ---------------------------------------------------------------- gen */

static const char usage[] =
    "usage: gen [-q] -m MODEL [-m MODEL ...] [-o FILE] [--greedy | --beam K [--nbest N]]\n"
    "           [--len-norm A] [--max-len N] [--logprob] [--show-attention]\n"
    "           [--threads N] [FILE ...]\n"
    "       (an encoder-decoder model: one source a line in, its output out)\n";

enum { G_BEAM = 256,
       G_NBEST,
       G_GREEDY,
       G_LENNORM,
       G_MAXLEN,
       G_LOGPROB,
       G_ATT,
       G_THREADS };

static const struct option gen_opts[] = {
    {"model", required_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'}, /* no progress line */
    {"beam", required_argument, NULL, G_BEAM},
    {"nbest", required_argument, NULL, G_NBEST},
    {"greedy", no_argument, NULL, G_GREEDY},
    {"len-norm", required_argument, NULL, G_LENNORM},
    {"max-len", required_argument, NULL, G_MAXLEN},
    {"logprob", no_argument, NULL, G_LOGPROB},
    {"show-attention", no_argument, NULL, G_ATT},
    {"threads", required_argument, NULL, G_THREADS},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

typedef struct gen_ctx {
	const char **paths;
	llr_encdec_model **models;
	llr_encdec **nets;
	llr_encdec_state **states;
	int M;
	llr_search_opts so;
	int logprob, nbest_given;
	FILE *out;
	int32_t **sids;
	size_t *scap;
	llr_hyp *hyps;
	int64_t lines, unk;
	llr_buf line;
	int quiet;
	cli_progress prog;
	long long tokens; /* written so far */
} gen_ctx;

static void gen_parse(gen_ctx *g, int argc, char **argv, const char **output, int *threads)
{
	int c, greedy = 0;
	g->so = (llr_search_opts){.beam = 1, .nbest = 1, .max_len = 100, .len_norm = 1.0};
	optind = 0;
	while ((c = cli_getopt(argc, argv, ":hm:o:q", gen_opts, usage)) != -1) {
		switch (c) {
		case 'm':
			g->paths = ereallocarray(g->paths, (size_t)g->M + 1, sizeof *g->paths);
			g->paths[g->M++] = optarg;
			break;
		case 'o': *output = optarg; break;
		case 'q': g->quiet = 1; break;
		case G_BEAM: g->so.beam = (int)cli_parse_int(usage, "--beam", optarg, 1, 1000); break;
		case G_NBEST:
			g->so.nbest = (int)cli_parse_int(usage, "--nbest", optarg, 1, 1000);
			g->nbest_given = 1;
			break;
		case G_GREEDY: greedy = 1; break;
		case G_LENNORM: g->so.len_norm = cli_parse_double(usage, "--len-norm", optarg, 0, 10); break;
		case G_MAXLEN: g->so.max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 100000); break;
		case G_LOGPROB: g->logprob = 1; break;
		case G_ATT: g->so.attention = 1; break;
		case G_THREADS: *threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024); break;
		}
	}
	if (!g->M)
		cli_usage_error(usage, "no model: -m MODEL is required");
	if (greedy && g->so.beam > 1)
		cli_usage_error(usage, "--greedy and --beam exclude each other");
	if (g->so.nbest > g->so.beam)
		cli_usage_error(usage, "--nbest %d is more than --beam %d", g->so.nbest, g->so.beam);
}

/* Load the models; an ensemble must share the target vocabulary. */
static void gen_load(gen_ctx *g)
{
	g->models = ecalloc((size_t)g->M, sizeof *g->models);
	g->nets = ecalloc((size_t)g->M, sizeof *g->nets);
	g->states = ecalloc((size_t)g->M, sizeof *g->states);
	g->sids = ecalloc((size_t)g->M, sizeof *g->sids);
	g->scap = ecalloc((size_t)g->M, sizeof *g->scap);
	for (int k = 0; k < g->M; k++) {
		const char *path = g->paths[k];
		g->models[k] = encdec_load(path);
		const llr_strmap *v0 = g->models[0]->lex->vocab, *v = g->models[k]->lex->vocab;
		int same = llr_strmap_size(v0) == llr_strmap_size(v);
		for (size_t i = 0; same && i < llr_strmap_size(v); i++)
			same = !strcmp(llr_strmap_str(v0, (int32_t)i), llr_strmap_str(v, (int32_t)i));
		if (!same)
			cli_die("%s: its target vocabulary differs from the first model's: an ensemble needs one target vocabulary", path);
		g->nets[k] = g->models[k]->net;
		if (!(g->states[k] = llr_encdec_state_new(g->nets[k], g->so.beam)))
			cli_oom();
	}
	g->hyps = ecalloc((size_t)g->so.nbest, sizeof *g->hyps);
}

static void put_tokens(gen_ctx *g, const llr_hyp *h)
{
	const llr_lexicon *x = g->models[0]->lex;
	int n = h->finished ? h->len - 1 : h->len;
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(' ', g->out);
		fputs(llr_strmap_str(x->vocab, h->ids[i]), g->out);
	}
}

/* The attention of h: a header with the source tokens, then one row per
 * output token (</s> included), every line starting with '#'. */
static void put_attention(gen_ctx *g, const llr_hyp *h, const char *src, size_t slen, int S)
{
	const llr_lexicon *x = g->models[0]->lex;
	size_t pos = 0, tl;
	const char *tok;
	fputs("#\t", g->out);
	while (llr_token_next(src, slen, &pos, &tok, &tl))
		fprintf(g->out, "%.*s ", (int)tl, tok);
	fputs(LLR_EOS "\n", g->out);
	for (int i = 0; i < h->len; i++) {
		fprintf(g->out, "#\t%s\t", llr_strmap_str(x->vocab, h->ids[i]));
		for (int j = 0; j < S; j++)
			fprintf(g->out, "%s%.4f", j ? " " : "", (double)h->attn[(size_t)i * S + j]);
		fputc('\n', g->out);
	}
}

static void gen_line(gen_ctx *g, const char *line, size_t len)
{
	llr_err e = {0};
	int S = 0;
	for (int k = 0; k < g->M; k++) {
		int n = encdec_source_ids(g->models[k]->src, line, len, &g->sids[k], &g->scap[k], k ? &(int64_t){0} : &g->unk);
		if (llr_encdec_start(g->nets[k], g->states[k], g->sids[k], n, &e) < 0)
			cli_die_err(&e);
		if (!k)
			S = n;
	}
	int nout = 0;
	int32_t eos = g->models[0]->lex->eos_id;
	if (llr_encdec_search(g->nets, g->states, g->M, eos, &g->so, g->hyps, &nout, &e) < 0)
		cli_die_err(&e);
	g->lines++;
	for (int i = 0; i < nout; i++) {
		const llr_hyp *h = &g->hyps[i];
		if (g->nbest_given)
			fprintf(g->out, "%lld\t%d\t%.4f\t", (long long)g->lines, i + 1, h->score);
		put_tokens(g, h);
		if (g->logprob)
			fprintf(g->out, "\t%.4f", h->logp);
		fputc('\n', g->out);
		if (g->so.attention && h->attn)
			put_attention(g, h, line, len, S);
	}
	for (int i = 0; i < nout; i++) {
		g->tokens += g->hyps[i].len;
		llr_hyp_clear(&g->hyps[i]);
	}
	if (cli_progress_due(&g->prog))
		cli_progress_show(&g->prog, g->lines, "sources", g->tokens, "tok", cli_progress_fraction(&g->prog));
}

int gen_encdec_main(int argc, char **argv)
{
	gen_ctx g = {0};
	const char *output = NULL;
	int threads = 1;
	gen_parse(&g, argc, argv, &output, &threads);
	char **files = argv + optind;
	int nfiles = argc - optind;
	static char *stdin_only[] = {"-"};
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	llr_blas_set_threads(threads);
	gen_load(&g);
	cli_output out;
	cli_output_open_lines(&out, output);
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
			gen_line(&g, line, len);
		if (rc < 0)
			cli_die_err(&e);
		llr_lines_close(l);
	}
	cli_progress_clear();
	cli_output_close(&out);
	for (int k = 0; k < g.M; k++) {
		llr_encdec_state_free(g.states[k]);
		llr_encdec_model_free(g.models[k]);
		free(g.sids[k]);
	}
	free(g.models);
	free(g.paths);
	free(g.nets);
	free(g.states);
	free(g.sids);
	free(g.scap);
	free(g.hyps);
	return 0;
}
