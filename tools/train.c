/*
 * train - train a model: an LSTM language model (log-linear or softmax
 * output) from featurize streams, or any family the library declares.
 * The man page train(1) is the spec; llrnn-model(5) describes the file.
 * The options, their checks, the choice of the family and its setup are
 * the library's (llr_train_option, llr_train_args, llr_train_build); this
 * file turns them into a command line, --help and usage, and runs the
 * family's job with the library's driver (run.c) or its estimation.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train/train.h"
#include "train/dist.h"

/* The command line the library's option rows make. */
typedef struct cmdline {
	struct option *longopts;
	const llr_train_opt **rows; /* the first row of each name; longopts' val - 256 */
	size_t n;
	char shortopts[64];
	llr_buf usage, help;
} cmdline;

static int seen(const cmdline *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->rows[i]->name, name))
			return 1;
	return 0;
}

/* "  -s, --seed seed          seed of every random choice (default 1)" */
static void help_line(llr_buf *b, const llr_train_opt *r)
{
	char left[96];
	int n;
	if (r->flags & LLR_TOPT_NOLONG)
		n = snprintf(left, sizeof left, "-%c", r->letter);
	else if (r->letter)
		n = snprintf(left, sizeof left, "-%c, --%s", r->letter, r->name);
	else
		n = snprintf(left, sizeof left, "--%s", r->name);
	if (r->arg)
		n += snprintf(left + n, sizeof left - (size_t)n, " %s", r->arg);
	if (n < 24)
		llr_buf_printf(b, "  %-24s %s\n", left, r->help);
	else
		llr_buf_printf(b, "  %s  %s\n", left, r->help);
}

/* The help: the options' lines, section by section, in the rows' order. */
static void make_help(cmdline *c)
{
	llr_buf_printf(&c->help, "Options:\n  -h, --help               print this help and exit\n"
	                         "  --version                print the version and exit\n");
	const char *sections[16];
	size_t ns = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *s = c->rows[i]->section;
		size_t k = 0;
		while (s && k < ns && strcmp(sections[k], s))
			k++;
		if (s && k == ns && ns < 16)
			sections[ns++] = s;
	}
	for (size_t k = 0; k <= ns; k++) {
		if (k > 0)
			llr_buf_printf(&c->help, "\n%s\n", sections[k - 1]);
		for (size_t i = 0; i < c->n; i++) {
			const char *s = c->rows[i]->section;
			if (k == 0 ? !s : s && !strcmp(s, sections[k - 1]))
				help_line(&c->help, c->rows[i]);
		}
	}
}

/* getopt's tables, the usage and the help from the library's rows. */
static void make_cmdline(cmdline *c)
{
	memset(c, 0, sizeof *c);
	size_t cap = 0;
	while (llr_train_option(cap))
		cap++;
	c->rows = ecalloc(cap, sizeof *c->rows);
	c->longopts = ecalloc(cap + 3, sizeof *c->longopts);
	size_t nl = 0, ns = 0;
	c->shortopts[ns++] = ':';
	c->shortopts[ns++] = 'h';
	const llr_train_opt *r;
	for (size_t i = 0; (r = llr_train_option(i)); i++) {
		if (r->kind == LLR_TOPT_REFUSED || seen(c, r->name))
			continue;
		int arg = r->kind != LLR_TOPT_FLAG;
		if (!(r->flags & LLR_TOPT_NOLONG))
			c->longopts[nl++] = (struct option){r->name, arg ? required_argument : no_argument, NULL, r->letter ? r->letter : 256 + (int)c->n};
		if (r->letter && ns + 3 < sizeof c->shortopts) {
			c->shortopts[ns++] = r->letter;
			if (arg)
				c->shortopts[ns++] = ':';
		}
		c->rows[c->n++] = r;
	}
	c->longopts[nl++] = (struct option){"help", no_argument, NULL, 'h'};
	c->longopts[nl++] = (struct option){"version", no_argument, NULL, CLI_OPT_VERSION};
	const char *syn;
	for (size_t i = 0; (syn = llr_train_synopsis(i)); i++)
		llr_buf_printf(&c->usage, "%s%s", i ? "       " : "usage: ", syn);
	llr_buf_printf(&c->usage, "       train --version\n");
	make_help(c);
}

/* The row of getopt's answer ch. */
static const llr_train_opt *row_of(const cmdline *c, int ch)
{
	if (ch >= 256 && (size_t)(ch - 256) < c->n)
		return c->rows[ch - 256];
	for (size_t i = 0; i < c->n; i++)
		if (c->rows[i]->letter == ch)
			return c->rows[i];
	return NULL;
}

/* A library error: a usage error under the family's usage text (or
 * train's), else exit 1. */
static _Noreturn void fail(const cmdline *c, const llr_train_args *a, const llr_err *e)
{
	if (e->code == LLR_EUSAGE) {
		const char *u = llr_train_args_usage(a);
		cli_usage_error(u ? u : c->usage.data, "%s", e->msg);
	}
	cli_die_err(e);
}

static llr_train_args *parse(const cmdline *c, int argc, char **argv)
{
	llr_train_args *a = llr_train_args_new();
	if (!a)
		cli_oom();
	llr_err e = {0};
	int ch;
	while ((ch = cli_getopt(argc, argv, c->shortopts, c->longopts, c->usage.data)) != -1) {
		const llr_train_opt *r = row_of(c, ch);
		if (r && llr_train_args_give(a, r->name, r->kind == LLR_TOPT_FLAG ? NULL : optarg, &e) < 0)
			fail(c, a, &e);
	}
	llr_train_args_operands(a, argc - optind, argv + optind);
	if (llr_train_args_check(a, &e) < 0)
		fail(c, a, &e);
	return a;
}

/* The family's own line after each epoch's. */
static void epoch_note(void *ctx, const llr_train_event *ev)
{
	const llr_train_setup *s = ctx;
	llr_buf line = {0};
	if (s->epoch_note(s->fam, ev, &line) < 0)
		cli_oom();
	if (line.data && line.data[0])
		cli_warn("%s", line.data);
	llr_buf_free(&line);
}

/* A family trained by gradient steps: its setup, then the driver. */
static int train_gradient(const cmdline *c, llr_train_args *a)
{
	train_dist dist;
	dist_init(&dist, (int)llr_train_args_int(a, "distributed"));
	llr_train_setup s;
	llr_err e = {0};
	if (llr_train_build(a, &dist.comm, &s, &e) < 0)
		fail(c, a, &e);
	const char *out = llr_train_args_str(a, "o");
	if (!out)
		out = llr_train_args_str(a, "resume");
	llr_train_opts ro = {.out = out,
	                     .log = llr_train_args_str(a, "log"),
	                     .resumed = llr_train_args_given(a, "resume"),
	                     .has_valid = s.has_valid,
	                     .lim = s.lim};
	train_run_opts rr = {.quiet = (int)llr_train_args_int(a, "quiet") || dist.rank != 0,
	                     .progress = (int)llr_train_args_int(a, "progress"),
	                     .train_tokens = s.train_tokens,
	                     .epoch_note = s.epoch_note ? epoch_note : NULL,
	                     .note_ctx = &s};
	train_run(s.job, s.ts, &ro, &rr, &dist);
	llr_train_setup_free(&s);
	dist_finish(&dist);
	return 0;
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "train");
	cmdline c;
	make_cmdline(&c);
	cli_set_help(c.help.data);
	llr_train_args *a = parse(&c, argc, argv);
	llr_train_args_on_note(a, cli_notice, NULL);
	llr_blas_set_threads((int)llr_train_args_int(a, "threads"));
	llr_err e = {0};
	if (llr_blas_reserve(&e) < 0)
		cli_die_err(&e);
	int rc = 0;
	if (llr_train_args_gradient(a)) {
		rc = train_gradient(&c, a);
	} else {
		llr_train_args_on_signal(a, train_catch_signals, train_signal_flag());
		if (llr_train_estimate(a, &e) < 0)
			fail(&c, a, &e);
		cli_flush_stdout();
		int sig = *train_signal_flag();
		if (sig) {
			const char *out = llr_train_args_str(a, "o") ? llr_train_args_str(a, "o") : llr_train_args_str(a, "resume");
			cli_warn("%s: saved %s; continue with --resume %s", sig == SIGINT ? "interrupted" : "terminated", out, out);
			exit(128 + sig);
		}
	}
	llr_train_args_free(a);
	free(c.rows);
	free(c.longopts);
	llr_buf_free(&c.usage);
	llr_buf_free(&c.help);
	return rc;
}
