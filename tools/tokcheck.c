/*
 * tokcheck.c - score's and gen's input against the model's recorded
 * tokenisation (see tokcheck.h); the counting and the wording are
 * llr_tokstat and llr_tokprof_check in libllrnn.
 */
#include "tokcheck.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

void tokcheck_init(tokcheck *c, const char *path, const llr_meta *meta, int strict, int raw)
{
	llr_err e = {0};
	memset(c, 0, sizeof *c);
	c->strict = strict;
	int rc = meta ? llr_tokprof_from_meta(&c->prof, meta, &e) : 0;
	if (rc < 0)
		cli_die("%s: %s", path, e.msg);
	c->on = rc > 0;
	if (raw && !c->on)
		cli_die("%s: the model records no tokenisation (made before featurize recorded it, or not from featurize): tokenise with tok and score without --raw", path);
	if (!c->on)
		return;
	if (!(c->st = llr_tokstat_new()))
		cli_oom();
	if (raw) {
		llr_tok_opts o;
		llr_tokprof_tok_opts(&c->prof, &o);
		if (!(c->tz = llr_tokenizer_new(&o, &e)))
			cli_die_err(&e);
	}
}

void tokcheck_raw(tokcheck *c, const char **line, size_t *len, const char *file, size_t lineno)
{
	if (!c->tz)
		return;
	llr_err e = {0};
	llr_buf_clear(&c->raw);
	if (llr_tokenize(c->tz, *line, *len, 0, &c->raw, &e) < 0)
		cli_die("%s:%zu: %s", file, lineno, e.msg[0] ? e.msg : llr_strerror(e.code));
	if (llr_buf_putc(&c->raw, '\0') < 0)
		cli_oom();
	*line = c->raw.data;
	*len = c->raw.len - 1;
}

int tokcheck_line(tokcheck *c, const char *line, size_t len)
{
	if (!c->on)
		return 0;
	llr_err e = {0};
	if (llr_tokstat_line(c->st, line, len, &e) < 0)
		cli_die_err(&e);
	if (!c->strict)
		return 0;
	llr_buf_clear(&c->msg);
	int n = llr_tokprof_check(&c->prof, c->st, 0, &c->msg);
	if (n < 0)
		cli_oom();
	return n > 0;
}

/* Each line of c->msg as a message, at file:lineno when file is set
 * (file alone when lineno is 0);
 * the last one exits 1 when die. */
static void say(tokcheck *c, const char *file, size_t lineno, int die)
{
	char *s = c->msg.data;
	while (s && *s) {
		char *nl = strchr(s, '\n');
		*nl = '\0';
		int last = nl[1] == '\0';
		char at[64] = "";
		if (file && lineno)
			snprintf(at, sizeof at, ":%zu", lineno);
		if (last && die) {
			if (file)
				cli_die("%s%s: %s (--strict)", file, at, s);
			cli_die("%s (--strict)", s);
		}
		if (file)
			cli_warn("%s%s: %s", file, at, s);
		else
			cli_warn("%s", s);
		s = nl + 1;
	}
}

void tokcheck_fail(tokcheck *c, const char *file, size_t lineno)
{
	say(c, file, lineno, 1);
	exit(1); /* say exits on its last line */
}

void tokcheck_end(tokcheck *c)
{
	if (!c->on)
		return;
	llr_buf_clear(&c->msg);
	int n = llr_tokprof_check(&c->prof, c->st, 1, &c->msg);
	if (n < 0)
		cli_oom();
	if (n > 0)
		say(c, NULL, 0, c->strict);
}

void tokcheck_free(tokcheck *c)
{
	llr_tokstat_free(c->st);
	llr_tokenizer_free(c->tz);
	llr_buf_free(&c->raw);
	llr_buf_free(&c->msg);
	memset(c, 0, sizeof *c);
}
