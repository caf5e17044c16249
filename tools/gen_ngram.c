/*
 * gen_ngram.c - gen(1) with a backoff n-gram model: ancestral sampling
 * (temperature, top-k, top-p through llr_sample) or greedy decoding, one
 * sentence at a time from the last order-1 words.  Every sentence draws
 * from its own generator seeded from the master one, as gen does for
 * neural models; the output lines are gen's (words, then with --logprob
 * a TAB and the natural log-probability, </s> included).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "gen_ngram.h"

/* The model and what gen asks of it at every word. */
typedef struct gmodel {
	const llr_ngram *m;
	int order;
	int32_t V, bos, eos, unk;
} gmodel;

typedef struct gctx {
	gmodel *s;
	const gen_ngram_opts *o;
	llr_sampler *sampler;
	llr_rng master;
	float *row;   /* V: log p of every word */
	int32_t *ids; /* <s>, the prefix, the generated words */
	size_t n, cap;
	llr_buf out;
	FILE *fp;
	cli_progress prog;
	long long sentences, tokens; /* written so far */
	long long want;              /* sentences in all, -1 when not known */
} gctx;

static void push(gctx *g, int32_t id)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->ids = ereallocarray(g->ids, g->cap, sizeof *g->ids);
	}
	g->ids[g->n++] = id;
}

/* log p (natural) of every word after the last order-1 ids of g. */
static void fill_row(gctx *g)
{
	const gmodel *s = g->s;
	int nctx = (int)(g->n < (size_t)(s->order - 1) ? g->n : (size_t)(s->order - 1));
	const int32_t *ctx = g->ids + g->n - (size_t)nctx;
	for (int32_t w = 0; w < s->V; w++)
		g->row[w] = (float)(llr_ngram_log10p(s->m, ctx, nctx, w, NULL) * M_LN10);
	if (s->bos >= 0)
		g->row[s->bos] = -INFINITY;
	if (g->o->no_unk && s->unk >= 0)
		g->row[s->unk] = -INFINITY;
}

static void put_word(gctx *g, const char *w, size_t len)
{
	if ((g->out.len && llr_buf_putc(&g->out, ' ')) || llr_buf_append(&g->out, w, len))
		cli_oom();
}

/* The sentences after one prefix line. */
static void generate(gctx *g, const char *line, size_t len)
{
	const gmodel *s = g->s;
	long long count = g->o->so.greedy ? 1 : g->o->n;
	for (long long i = 0; i < count; i++) {
		llr_rng rng;
		llr_rng_seed(&rng, llr_rng_u64(&g->master));
		llr_buf_clear(&g->out);
		g->n = 0;
		push(g, s->bos);
		double lp = 0;
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t w = llr_ngram_word(s->m, tok, tl);
			fill_row(g);
			lp += w >= 0 ? g->row[w] : (s->unk >= 0 ? g->row[s->unk] : 0);
			push(g, w >= 0 ? w : s->unk);
			put_word(g, tok, tl);
		}
		for (int k = 0; k < g->o->max_len; k++) {
			fill_row(g);
			int32_t id = llr_sample(g->sampler, &g->o->so, g->row, &rng);
			if (id < 0)
				cli_die("the model gives no finite log-probability to any word");
			lp += g->row[id];
			if (id == s->eos)
				break;
			push(g, id);
			const char *w = llr_ngram_token(s->m, id);
			put_word(g, w, strlen(w));
		}
		if (g->o->logprob && llr_buf_printf(&g->out, "\t%.4f", lp) < 0)
			cli_oom();
		if (llr_buf_putc(&g->out, '\n'))
			cli_oom();
		fwrite(g->out.data, 1, g->out.len, g->fp);
		g->sentences++;
		g->tokens += (long long)g->n; /* <s>'s place counts the </s> */
		if (cli_progress_due(&g->prog))
			cli_progress_show(&g->prog, g->sentences, "sentences", g->tokens, "tok",
			                  g->want > 0 ? (double)g->sentences / (double)g->want : cli_progress_fraction(&g->prog));
	}
}

int gen_ngram(const llr_ngram *m, const gen_ngram_opts *o)
{
	gmodel s = {m, llr_ngram_order(m), llr_ngram_vocab_size(m), llr_ngram_bos(m), llr_ngram_eos(m), llr_ngram_unk(m)};
	gctx g = {0};
	llr_err err = {0};
	g.s = &s;
	g.o = o;
	if (!(g.sampler = llr_sampler_new(s.V, &err)))
		cli_die_err(&err);
	g.row = emalloc((size_t)s.V * sizeof *g.row);
	llr_rng_seed(&g.master, o->seed);
	cli_output out;
	cli_output_open_lines(&out, o->output);
	g.fp = out.fp;
	cli_progress_init(&g.prog, o->quiet, out.fp == stdout);
	g.want = o->prefix_file ? -1 : o->so.greedy ? 1 : o->n;
	if (o->prefix_file) {
		llr_lines *l = llr_lines_open(o->prefix_file, 0, &err);
		if (!l)
			cli_die_err(&err);
		cli_progress_inputs(&g.prog, (char *const *)&o->prefix_file, 1);
		cli_progress_lines(&g.prog, o->prefix_file, l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &err)) > 0)
			generate(&g, line, len);
		if (rc < 0)
			cli_die_err(&err);
		llr_lines_close(l);
	} else {
		const char *t = o->prefix_text ? o->prefix_text : "";
		generate(&g, t, strlen(t));
	}
	cli_progress_clear();
	cli_output_close(&out);
	llr_sampler_free(g.sampler);
	free(g.row);
	free(g.ids);
	llr_buf_free(&g.out);
	return 0;
}
