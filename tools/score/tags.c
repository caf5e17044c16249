/*
 * tags.c - score --tags: one line of word/TAG a sentence from a tagger
 * (llr_model_tag), and on stderr the counts and, when the input is
 * tagged (gold), the accuracy in all, on the words of the training
 * lexicon and on the others.  score(1) is the spec.
 */
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../progress.h"
#include "disc.h"

typedef struct tagger {
	llr_model *m;
	const score_disc_opts *o;
	llr_tag_opts to;
	FILE *fp;
	int gold;         /* -1 not known yet (no line read), 0 bare words, 1 word/TAG */
	llr_buf text;     /* the line's words, NUL-terminated */
	size_t *word, *goldtag; /* their offsets into text */
	const char **words, **pred;
	unsigned char *unknown;
	size_t cap;
	llr_buf out;
	uint64_t sentences, tokens, unk, right, right_unk;
	cli_progress prog;
} tagger;

/* The offset of the last '/' of t[0..n) with text on both sides, or 0. */
static size_t tag_slash(const char *t, size_t n)
{
	for (size_t k = n; k-- > 0;)
		if (t[k] == '/')
			return k > 0 && k + 1 < n ? k : 0;
	return 0;
}

/* Is every token of the line word/TAG? */
static int tagged_line(const char *s, size_t len)
{
	size_t pos = 0, tl, n = 0;
	const char *t;
	while (llr_token_next(s, len, &pos, &t, &tl)) {
		if (!tag_slash(t, tl))
			return 0;
		n++;
	}
	return n > 0;
}

static void grow(tagger *x, size_t n)
{
	if (n < x->cap)
		return;
	x->cap = 2 * n + 64;
	x->word = ereallocarray(x->word, x->cap, sizeof *x->word);
	x->goldtag = ereallocarray(x->goldtag, x->cap, sizeof *x->goldtag);
	x->words = ereallocarray(x->words, x->cap, sizeof *x->words);
	x->pred = ereallocarray(x->pred, x->cap, sizeof *x->pred);
	x->unknown = ereallocarray(x->unknown, x->cap, 1);
}

/* Split the line into words (and gold tags); its word count. */
static size_t split(tagger *x, const char *s, size_t len, const char *file, size_t lineno)
{
	size_t pos = 0, tl, n = 0;
	const char *t;
	llr_buf_clear(&x->text);
	while (llr_token_next(s, len, &pos, &t, &tl)) {
		size_t wl = tl, sl = x->gold ? tag_slash(t, tl) : 0;
		if (x->gold && !sl) {
			fflush(x->fp);
			cli_die("%s:%zu: token '%.*s' has no /TAG (the input's first line is tagged, so every line must be)", file, lineno,
			        (int)tl, t);
		}
		if (sl)
			wl = sl;
		grow(x, n);
		x->word[n] = x->text.len;
		if (llr_buf_append(&x->text, t, wl) || llr_buf_putc(&x->text, '\0'))
			cli_oom();
		x->goldtag[n] = x->text.len;
		if ((sl && llr_buf_append(&x->text, t + sl + 1, tl - sl - 1)) || llr_buf_putc(&x->text, '\0'))
			cli_oom();
		n++;
	}
	for (size_t i = 0; i < n; i++)
		x->words[i] = x->text.data + x->word[i];
	return n;
}

static void tag_line(tagger *x, const char *s, size_t len, const char *file, size_t lineno)
{
	size_t pos = 0, tl;
	const char *t;
	if (x->gold < 0 && llr_token_next(s, len, &pos, &t, &tl)) /* the first line with a word decides */
		x->gold = tagged_line(s, len);
	size_t n = split(x, s, len, file, lineno);
	llr_err e = {0};
	llr_sentence sent = {x->words, n};
	if (n && llr_model_tag(x->m, &sent, 1, &x->to, x->pred, x->unknown, &e) < 0) {
		fflush(x->fp);
		llr_err_prefix(&e, "%s:%zu", file, lineno);
		cli_die_err(&e);
	}
	llr_buf_clear(&x->out);
	for (size_t i = 0; i < n; i++) {
		int ok = x->gold == 1 && !strcmp(x->pred[i], x->text.data + x->goldtag[i]);
		x->unk += x->unknown[i];
		x->right += ok;
		x->right_unk += ok && x->unknown[i];
		if ((i && llr_buf_putc(&x->out, ' ')) || llr_buf_append(&x->out, x->words[i], strlen(x->words[i])) ||
		    llr_buf_putc(&x->out, '/') || llr_buf_append(&x->out, x->pred[i], strlen(x->pred[i])))
			cli_oom();
	}
	if (llr_buf_putc(&x->out, '\n'))
		cli_oom();
	fwrite(x->out.data, 1, x->out.len, x->fp);
	x->tokens += n;
	x->sentences += n > 0;
	if (cli_progress_due(&x->prog))
		cli_progress_show(&x->prog, (long long)x->sentences, "lines", (long long)x->tokens, "tok", cli_progress_fraction(&x->prog));
}

/* "96.12% (9612 of 10000)", or "n/a (0 words)". */
static const char *rate(char *buf, size_t size, uint64_t right, uint64_t n)
{
	if (n)
		snprintf(buf, size, "%.2f%% (%llu of %llu)", 100.0 * (double)right / (double)n, (unsigned long long)right, (unsigned long long)n);
	else
		snprintf(buf, size, "n/a (0 words)");
	return buf;
}

static void summary(const tagger *x)
{
	cli_warn("%llu sentences, %llu words: %llu known, %llu unknown (not in the training lexicon)", (unsigned long long)x->sentences,
	         (unsigned long long)x->tokens, (unsigned long long)(x->tokens - x->unk), (unsigned long long)x->unk);
	if (x->gold != 1)
		return;
	char a[80], k[80], u[80];
	cli_warn("accuracy %s; known words %s; unknown words %s", rate(a, sizeof a, x->right, x->tokens),
	         rate(k, sizeof k, x->right - x->right_unk, x->tokens - x->unk), rate(u, sizeof u, x->right_unk, x->unk));
}

int score_tags(const score_disc_opts *o, int nfiles, char **files)
{
	tagger x = {.o = o, .gold = -1, .to = {.beam = o->beam}};
	llr_err e = {0};
	if (llr_model_open(o->model, NULL, &x.m, &e) < 0 || llr_model_tag(x.m, NULL, 0, &x.to, NULL, NULL, &e) < 0)
		cli_die_err(&e);
	cli_output out;
	cli_output_open_lines(&out, o->output);
	x.fp = out.fp;
	cli_progress_init(&x.prog, o->quiet, x.fp == stdout);
	cli_progress_inputs(&x.prog, files, nfiles);
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		llr_lines *l = llr_lines_open(nfiles ? files[f] : "-", 0, &e);
		if (!l)
			cli_die_err(&e);
		cli_progress_lines(&x.prog, nfiles ? files[f] : "-", l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
			tag_line(&x, line, len, llr_lines_name(l), llr_lines_lineno(l));
		if (rc < 0) {
			fflush(x.fp);
			cli_die_err(&e);
		}
		llr_lines_close(l);
	}
	cli_progress_clear();
	cli_output_close(&out);
	if (!o->quiet)
		summary(&x);
	llr_buf_free(&x.text);
	llr_buf_free(&x.out);
	free(x.word);
	free(x.goldtag);
	free(x.words);
	free(x.pred);
	free(x.unknown);
	llr_model_close(x.m);
	return 0;
}
