/*
 * embed.c - score --embed: one sentence vector per input line
 * (llr_model_embed), as TSV or, with --tensor, a tensor archive of
 * chunks "vectors/NNNNNN"; a summary of the sentences, tokens and
 * unknown words on stderr.  score(1) is the spec.
 */
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../progress.h"
#include "disc.h"

#define EMBED_CHUNK 4096 /* rows per tensor member */

typedef struct embedder {
	llr_model *m;
	const score_disc_opts *o;
	int D;
	llr_buf text;      /* the pending lines' tokens, NUL-terminated */
	size_t *tok;       /* their offsets into text */
	size_t n_tok, cap_tok;
	size_t off[EMBED_CHUNK + 1]; /* line i: tok[off[i] .. off[i+1]) */
	size_t n;          /* lines pending */
	const char **words;
	size_t cap_words;
	llr_sentence sent[EMBED_CHUNK];
	unsigned char *oov;
	float *vec;
	FILE *fp;
	llr_tensor_writer *tw;
	size_t chunk;
	uint64_t sentences, tokens, unknown;
	cli_progress prog;
} embedder;

static void put_vectors(embedder *x)
{
	llr_err e = {0};
	if (x->tw) {
		char name[32];
		int64_t shape[2] = {(int64_t)x->n, x->D};
		snprintf(name, sizeof name, "vectors/%06zu", x->chunk++);
		if (llr_tw_put_raw(x->tw, name, LLR_F32, 2, shape, x->vec, &e) < 0)
			cli_die_err(&e);
		return;
	}
	for (size_t i = 0; i < x->n; i++) {
		const float *v = x->vec + i * (size_t)x->D;
		for (int j = 0; j < x->D; j++)
			fprintf(x->fp, j ? "\t%.6g" : "%.6g", (double)v[j]);
		fputc('\n', x->fp);
	}
}

static void embed_flush(embedder *x)
{
	if (!x->n)
		return;
	if (x->n_tok > x->cap_words) {
		x->cap_words = x->n_tok;
		x->words = ereallocarray(x->words, x->cap_words, sizeof *x->words);
		x->oov = ereallocarray(x->oov, x->cap_words, 1);
	}
	for (size_t k = 0; k < x->n_tok; k++)
		x->words[k] = x->text.data + x->tok[k];
	for (size_t i = 0; i < x->n; i++)
		x->sent[i] = (llr_sentence){x->words + x->off[i], x->off[i + 1] - x->off[i]};
	llr_err e = {0};
	if (llr_model_embed(x->m, x->sent, x->n, x->vec, x->oov, &e) < 0)
		cli_die_err(&e);
	for (size_t k = 0; k < x->n_tok; k++)
		x->unknown += x->oov[k];
	put_vectors(x);
	x->n = 0;
	x->n_tok = 0;
	llr_buf_clear(&x->text);
}

/* Queue a line: its tokens are separated by spaces and tabs. */
static void embed_line(embedder *x, const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		size_t st = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (i == st)
			break;
		if (x->n_tok == x->cap_tok) {
			x->cap_tok = x->cap_tok ? 2 * x->cap_tok : 1 << 16;
			x->tok = ereallocarray(x->tok, x->cap_tok, sizeof *x->tok);
		}
		x->tok[x->n_tok++] = x->text.len;
		if (llr_buf_append(&x->text, s + st, i - st) || llr_buf_putc(&x->text, '\0'))
			cli_oom();
		x->tokens++;
	}
	x->off[++x->n] = x->n_tok;
	x->sentences++;
	if (x->n == (size_t)(x->o->batch < EMBED_CHUNK ? x->o->batch : EMBED_CHUNK))
		embed_flush(x);
	if (cli_progress_due(&x->prog))
		cli_progress_show(&x->prog, (long long)x->sentences, "lines", (long long)x->tokens, "tok", cli_progress_fraction(&x->prog));
}

/* The output: a tensor archive (--tensor) whose meta tells the vectors'
 * size and kind, or lines. */
static void open_output(embedder *x, cli_output *out, const char *kind)
{
	const score_disc_opts *o = x->o;
	llr_err e = {0};
	if (!o->tensor) {
		cli_output_open_lines(out, o->output);
		x->fp = out->fp;
		return;
	}
	llr_meta *meta = llr_meta_new();
	if (!meta)
		cli_oom();
	llr_meta_setf(meta, "dim", "%d", x->D);
	llr_meta_set(meta, "encoder", kind);
	if (!o->output || !strcmp(o->output, "-"))
		cli_refuse_tty(1, "a tensor archive");
	if (!(x->tw = llr_tw_open(o->output, "vectors", meta, &e)))
		cli_die_err(&e);
	llr_meta_free(meta);
}

static void embed_files(embedder *x, int nfiles, char **files)
{
	llr_err e = {0};
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		llr_lines *l = llr_lines_open(nfiles ? files[f] : "-", 0, &e);
		if (!l)
			cli_die_err(&e);
		cli_progress_lines(&x->prog, nfiles ? files[f] : "-", l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
			embed_line(x, line, len);
		if (rc < 0)
			cli_die_err(&e);
		llr_lines_close(l);
	}
	embed_flush(x);
}

int score_embed(const score_disc_opts *o, int nfiles, char **files)
{
	embedder *x = ecalloc(1, sizeof *x);
	x->o = o;
	llr_model_opts mo = llr_model_opts_default();
	mo.open = LLR_OPEN_OFF; /* words outside the vocabulary are <unk> */
	llr_err e = {0};
	if (llr_model_open(o->model, &mo, &x->m, &e) < 0 || llr_model_embed(x->m, NULL, 0, NULL, NULL, &e) < 0)
		cli_die_err(&e);
	llr_model_info info;
	llr_model_describe(x->m, &info);
	x->D = info.dim;
	x->vec = emalloc((size_t)EMBED_CHUNK * x->D * sizeof *x->vec);
	cli_output out = {0};
	open_output(x, &out, info.embedding);
	cli_progress_init(&x->prog, o->quiet, !x->tw && x->fp == stdout);
	cli_progress_inputs(&x->prog, files, nfiles);
	embed_files(x, nfiles, files);
	cli_progress_clear();
	if (x->tw && llr_tw_close(x->tw, &e) < 0)
		cli_die_err(&e);
	if (!x->tw)
		cli_output_close(&out);
	if (!o->quiet)
		cli_warn("%llu sentences, %llu tokens, %llu unknown; %d-dimensional %s vectors", (unsigned long long)x->sentences,
		         (unsigned long long)x->tokens, (unsigned long long)x->unknown, x->D, info.embedding);
	llr_buf_free(&x->text);
	free(x->tok);
	free(x->words);
	free(x->oov);
	free(x->vec);
	llr_model_close(x->m);
	free(x);
	return 0;
}
