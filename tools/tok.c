/*
 * tok - tokenize text into one sentence per line (see man/tok.1).
 *
 * Reads text, CoNLL-U or word/TAG files (each operand through
 * llr_archive_open: an archive's regular members are documents, a plain
 * or compressed file is one), writes tokens separated by single spaces,
 * documents and paragraphs separated by one empty line.  The rules
 * themselves live in libllrnn (llr_tokenize, llr_normalize,
 * llr_conllu_parse); this file is options, reading and writing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llrnn.h"

static const char usage[] =
    "usage: tok [-hl] [--chars] [--from text|conllu|tagged] [--lang en|fr] [--nfkc]\n"
    "           [-o file] [--replace-invalid] [--sentences] [--surface] [--tags] [file ...]\n"
    "       tok --version\n";

static const char help[] =
    "Options:\n"
    "  --chars                  character mode: each character a token, spaces as U+2581\n"
    "  --from text|conllu|tagged  the input format (default text)\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n"
    "  -l, --lower              lowercase (Unicode simple case mapping)\n"
    "  --lang en|fr             language rules: clitics, elisions, abbreviations\n"
    "  --nfkc                   normalise to NFKC instead of NFC\n"
    "  -o, --output file        write to file (atomically; .gz .bz2 .xz .zst compress)\n"
    "  --replace-invalid        replace invalid UTF-8 with U+FFFD instead of failing\n"
    "  --sentences              split running text into sentences\n"
    "  --surface                with --from conllu, write multiword tokens as written\n"
    "  --tags                   with --from conllu or tagged, write each token as word/TAG\n";

enum { FROM_TEXT,
       FROM_CONLLU,
       FROM_TAGGED };

typedef struct tok_state {
	llr_tok_opts opts;
	int from, sentences, surface, tags, flags;
	llr_tokenizer *tz;
	FILE *out;
	cli_output o;
	llr_buf line, word, para, chunk;
	int wrote_any;   /* some line written so far (any document) */
	int doc_started; /* a line written in the current document */
	int blank;       /* an empty line is due before the next line */
	size_t ntok;
} tok_state;

static tok_state S;

/* Write one non-empty output line (a sentence), with the blank line due
 * before it. */
static void emit(const char *s, size_t n)
{
	if (n == 0)
		return;
	if ((S.blank && S.doc_started) || (!S.doc_started && S.wrote_any))
		fputc('\n', S.out);
	S.blank = 0;
	fwrite(s, 1, n, S.out);
	fputc('\n', S.out);
	S.wrote_any = S.doc_started = 1;
	if (ferror(S.out)) {
		cli_die("%s: write error: %s", S.o.path ? S.o.path : "<stdout>", strerror(errno));
	}
}

/* Write the result of llr_tokenize (sentences joined by '\n'). */
static void emit_lines(const llr_buf *b)
{
	size_t i = 0;
	while (i < b->len) {
		const char *nl = memchr(b->data + i, '\n', b->len - i);
		size_t n = nl ? (size_t)(nl - (b->data + i)) : b->len - i;
		emit(b->data + i, n);
		i += n + 1;
	}
}

static void tokenize(const char *s, size_t n, int split)
{
	llr_err e = {0};
	llr_buf_clear(&S.chunk);
	if (llr_tokenize(S.tz, s, n, split, &S.chunk, &e))
		cli_die_err(&e);
	emit_lines(&S.chunk);
}

static void flush_paragraph(void)
{
	if (S.para.len)
		tokenize(S.para.data, S.para.len, 1);
	llr_buf_clear(&S.para);
}

static int is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\f' && s[i] != '\v')
			return 0;
	return 1;
}

static void text_line(const char *s, size_t n)
{
	if (is_blank(s, n)) {
		if (S.sentences)
			flush_paragraph();
		S.blank = 1;
		return;
	}
	if (S.sentences) {
		if ((S.para.len && llr_buf_putc(&S.para, '\n')) || llr_buf_append(&S.para, s, n))
			cli_oom();
		return;
	}
	tokenize(s, n, 0);
}

/* Normalise, lowercase and protect the spaces of one word of a CoNLL-U or
 * tagged corpus, appending it to S.line, with "/TAG" after it under
 * --tags (tag[0..tl), as read). */
static void add_word(const char *w, size_t n, const char *tag, size_t tl)
{
	llr_err e = {0};
	if (llr_normalize(w, n, S.opts.nfkc, S.opts.lower, &S.word, &e))
		cli_die_err(&e);
	if (S.line.len && llr_buf_putc(&S.line, ' '))
		cli_oom();
	for (size_t i = 0; i < S.word.len; i++) {
		int rc = S.word.data[i] == ' ' ? llr_buf_append(&S.line, "\xc2\xa0", 2)
		                               : llr_buf_putc(&S.line, S.word.data[i]);
		if (rc)
			cli_oom();
	}
	if (S.tags && (llr_buf_putc(&S.line, '/') || llr_buf_append(&S.line, tag, tl)))
		cli_oom();
}

static void end_sentence(void)
{
	if (!S.line.len)
		return;
	if (S.opts.chars) {
		/* Spaces inside words stay U+00A0 until here; in character mode
		 * every character is a token anyway. */
		tokenize(S.line.data, S.line.len, 0);
	} else {
		emit(S.line.data, S.line.len);
	}
	llr_buf_clear(&S.line);
}

static void conllu_doc(llr_lines *l)
{
	const char *line;
	size_t len;
	int rc, skip_to = 0;
	llr_err e = {0};
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		if (len == 0 || is_blank(line, len)) {
			end_sentence();
			skip_to = 0;
			continue;
		}
		if (line[0] == '#')
			continue;
		llr_conllu_word w;
		if (llr_conllu_parse((char *)line, len, &w, &e)) {
			llr_err_prefix(&e, "%s:%zu", llr_lines_name(l), llr_lines_lineno(l));
			cli_die_err(&e);
		}
		if (w.kind == 2)
			continue;
		if (w.kind == 1) {
			if (S.surface) {
				add_word(w.form, strlen(w.form), NULL, 0);
				skip_to = w.range_last;
			}
			continue;
		}
		if (skip_to && atoi(w.id) <= skip_to)
			continue;
		skip_to = 0;
		add_word(w.form, strlen(w.form), w.upos, strlen(w.upos));
	}
	if (rc < 0)
		cli_die_err(&e);
	end_sentence();
}

/* Is the line made of word/TAG tokens (a '/' with text on both sides)? */
static int tagged_line(const char *s, size_t n)
{
	size_t pos = 0, ntok = 0, tl;
	const char *t;
	while (llr_token_next(s, n, &pos, &t, &tl)) {
		const char *slash = NULL;
		for (size_t k = 0; k < tl; k++)
			if (t[k] == '/')
				slash = t + k;
		if (!slash || slash == t || slash == t + tl - 1)
			return 0;
		ntok++;
	}
	return ntok > 0;
}

static void tagged_doc(llr_lines *l)
{
	const char *line;
	size_t len;
	int rc, checked = 0;
	llr_err e = {0};
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		if (is_blank(line, len))
			continue;
		if (!checked) {
			if (!tagged_line(line, len)) {
				cli_warn("%s:%zu: not in word/TAG format, skipped", llr_lines_name(l), llr_lines_lineno(l));
				return;
			}
			checked = 1;
		}
		size_t pos = 0, tl;
		const char *t;
		while (llr_token_next(line, len, &pos, &t, &tl)) {
			size_t wl = tl;
			for (size_t k = tl; k > 0; k--)
				if (t[k - 1] == '/') {
					wl = k - 1;
					break;
				}
			if (S.tags && (wl == tl || wl + 1 == tl))
				cli_die("%s:%zu: token '%.*s' has no /TAG", llr_lines_name(l), llr_lines_lineno(l), (int)tl, t);
			if (wl > 0)
				add_word(t, wl, t + wl + 1, wl < tl ? tl - wl - 1 : 0);
		}
		end_sentence();
	}
	if (rc < 0 && !checked && e.code == LLR_EUTF8) {
		cli_warn("%s: not in word/TAG format (%s), skipped", llr_lines_name(l), e.msg);
		return;
	}
	if (rc < 0)
		cli_die_err(&e);
}

static void text_doc(llr_lines *l)
{
	const char *line;
	size_t len;
	int rc;
	llr_err e = {0};
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
		text_line(line, len);
	if (rc < 0)
		cli_die_err(&e);
	if (S.sentences)
		flush_paragraph();
}

static ssize_t archive_read(void *src, void *buf, size_t n, llr_err *err)
{
	return llr_archive_read(src, buf, n, err);
}

static void do_file(const char *path)
{
	llr_err e = {0};
	llr_archive *a = llr_archive_open(path, &e);
	if (!a)
		cli_die_err(&e);
	const char *member;
	int64_t size;
	int rc;
	llr_buf name = {0};
	while ((rc = llr_archive_next(a, &member, &size, &e)) > 0) {
		const char *an = llr_archive_name(a);
		llr_buf_clear(&name);
		if (!strcmp(member, an) ? llr_buf_printf(&name, "%s", an) : llr_buf_printf(&name, "%s(%s)", an, member))
			cli_oom();
		const char *base = strrchr(member, '/');
		base = base ? base + 1 : member;
		if (S.from == FROM_TAGGED && !strcmp(base, "package.json")) {
			cli_warn("%s: not in word/TAG format, skipped", name.data);
			continue;
		}
		llr_lines *l = llr_lines_from(archive_read, a, name.data, S.flags);
		if (!l)
			cli_oom();
		S.doc_started = 0;
		S.blank = 0;
		if (S.from == FROM_CONLLU)
			conllu_doc(l);
		else if (S.from == FROM_TAGGED)
			tagged_doc(l);
		else
			text_doc(l);
		llr_lines_close(l);
	}
	llr_buf_free(&name);
	if (rc < 0) {
		llr_archive_close(a);
		cli_die_err(&e);
	}
	llr_archive_close(a);
}

int main(int argc, char **argv)
{
	enum { O_CHARS = 256,
	       O_FROM,
	       O_LANG,
	       O_NFKC,
	       O_REPLACE,
	       O_SENT,
	       O_SURFACE,
	       O_TAGS };
	static const struct option longopts[] = {
	    {"chars", no_argument, NULL, O_CHARS},
	    {"from", required_argument, NULL, O_FROM},
	    {"lang", required_argument, NULL, O_LANG},
	    {"lower", no_argument, NULL, 'l'},
	    {"nfkc", no_argument, NULL, O_NFKC},
	    {"output", required_argument, NULL, 'o'},
	    {"replace-invalid", no_argument, NULL, O_REPLACE},
	    {"sentences", no_argument, NULL, O_SENT},
	    {"surface", no_argument, NULL, O_SURFACE},
	    {"tags", no_argument, NULL, O_TAGS},
	    CLI_COMMON_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	cli_init(argv[0], "tok");
	cli_set_help(help);
	const char *outpath = NULL;
	int c;
	while ((c = cli_getopt(argc, argv, ":hlo:", longopts, usage)) != -1) {
		switch (c) {
		case 'l':
			S.opts.lower = 1;
			break;
		case 'o':
			outpath = optarg;
			break;
		case O_CHARS:
			S.opts.chars = 1;
			break;
		case O_FROM:
			if (!strcmp(optarg, "text"))
				S.from = FROM_TEXT;
			else if (!strcmp(optarg, "conllu"))
				S.from = FROM_CONLLU;
			else if (!strcmp(optarg, "tagged"))
				S.from = FROM_TAGGED;
			else
				cli_usage_error(usage, "--from: unknown format '%s' (use text, conllu or tagged)", optarg);
			break;
		case O_LANG:
			if (strcmp(optarg, "en") && strcmp(optarg, "fr"))
				cli_usage_error(usage, "--lang: unknown language '%s' (use en or fr)", optarg);
			S.opts.lang = optarg;
			break;
		case O_NFKC:
			S.opts.nfkc = 1;
			break;
		case O_REPLACE:
			S.flags |= LLR_LINES_REPLACE_INVALID;
			break;
		case O_SENT:
			S.sentences = 1;
			break;
		case O_SURFACE:
			S.surface = 1;
			break;
		case O_TAGS:
			S.tags = 1;
			break;
		}
	}
	if (S.surface && S.from != FROM_CONLLU)
		cli_usage_error(usage, "--surface needs --from conllu");
	if (S.tags && S.from == FROM_TEXT)
		cli_usage_error(usage, "--tags needs --from conllu or --from tagged");
	if (S.tags && (S.surface || S.opts.chars))
		cli_usage_error(usage, "--tags: not with %s (a tag belongs to a syntactic word)", S.surface ? "--surface" : "--chars");
	if (S.sentences && S.from != FROM_TEXT)
		cli_usage_error(usage, "--sentences needs --from text");
	llr_err e = {0};
	S.tz = llr_tokenizer_new(&S.opts, &e);
	if (!S.tz)
		cli_die_err(&e);
	cli_output_open_lines(&S.o, outpath);
	S.out = S.o.fp;
	if (optind == argc)
		do_file("-");
	for (int i = optind; i < argc; i++)
		do_file(argv[i]);
	llr_tokenizer_free(S.tz);
	llr_buf_free(&S.line);
	llr_buf_free(&S.word);
	llr_buf_free(&S.para);
	llr_buf_free(&S.chunk);
	cli_output_close(&S.o);
	return 0;
}
