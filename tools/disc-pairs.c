/*
 * disc-pairs - ORDER, NEXT and CONJ discourse examples (Jernite et al.)
 * mined from document collections as they are shipped: archives of any
 * format libarchive reads, or single (possibly compressed) texts.
 *
 * This file parses the options, opens the operands and the output, shows
 * the progress, writes each paragraph's sentences or examples and prints
 * the summary.  The documents are read into paragraphs by
 * lib/discourse/reader.c and formats.c, the examples built by tasks.c,
 * the marker tables are markers.c.  The man page is the spec.
 */
#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: disc-pairs [-hlq] [-o file] [-s seed] [--format text|tagged|conllu|tokens]\n"
    "                  [--lang en|fr] [--tasks list] [--markers file] [--min-par n]\n"
    "                  [--next-stride n] [--min-len n] [--max-len n] [--max-ratio x]\n"
    "                  [--max-member-bytes n] [--include pattern] [--exclude pattern]\n"
    "                  [--html-unit p|run] [--provenance] [--sentences] [file ...]\n"
    "       disc-pairs --list-markers [--lang en|fr] [--markers file]\n"
    "       disc-pairs --version\n";

static const char *const fmt_names[] = {"text", "tagged", "conllu", "tokens"}; /* LLR_DISC_FMT_* */
static const char *const skip_names[] = {"binary", "not UTF-8", "wrong format", "over --max-member-bytes", "truncated or corrupt archive"};

#define DEFAULT_MAX_MEMBER ((uint64_t)256 << 20)
#define MAX_INCLUDE 16

struct run {
	int sentences, provenance, quiet, tasks;
	cli_progress prog;
	const char *include[MAX_INCLUDE]; /* --include patterns */
	const char *exclude[MAX_INCLUDE]; /* --exclude patterns */
	llr_disc_tasks *ctx;
	llr_disc_reader *reader;
	FILE *out;
	int status;
	llr_buf prov;
};

/* A paragraph read: its sentences (--sentences) or its examples. */
static int paragraph(void *arg, const llr_disc_para *p, const char *doc, uint64_t index)
{
	struct run *r = arg;
	llr_buf_clear(&r->prov);
	if (llr_buf_printf(&r->prov, "%s:%" PRIu64, doc, index) != LLR_OK)
		return LLR_ENOMEM;
	if (!r->sentences)
		return llr_disc_tasks_paragraph(r->ctx, p, r->prov.data);
	for (size_t i = 0; i < p->n; i++) {
		fwrite(llr_disc_para_sent(p, i), 1, p->len[i], r->out);
		if (r->provenance) {
			fputc('\t', r->out);
			fputs(r->prov.data, r->out);
		}
		fputc('\n', r->out);
	}
	fputc('\n', r->out);
	return LLR_OK;
}

static void notice(void *arg, int error, const char *msg)
{
	struct run *r = arg;
	cli_warn("%s", msg);
	if (error)
		r->status = 1;
}

static void line_read(void *arg, uint64_t lines)
{
	struct run *r = arg;
	if (cli_progress_due(&r->prog))
		cli_progress_show(&r->prog, (long long)lines, "lines", (long long)lines, "lines", cli_progress_fraction(&r->prog));
}

static void do_operand(struct run *r, const char *path)
{
	llr_err e = {0};
	llr_archive *a = llr_archive_open(path, &e);
	if (!a) {
		cli_warn("%s", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->status = 1;
		return;
	}
	cli_progress_archive(&r->prog, path, a);
	if (llr_disc_reader_read(r->reader, a, &e) != LLR_OK)
		cli_die_err(&e);
	llr_archive_close(a);
}

static int parse_tasks(const char *s)
{
	int mask = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 5 && !strncmp(p, "order", 5))
			mask |= LLR_TASK_ORDER;
		else if (n == 4 && !strncmp(p, "next", 4))
			mask |= LLR_TASK_NEXT;
		else if (n == 4 && !strncmp(p, "conj", 4))
			mask |= LLR_TASK_CONJ;
		else if (n == 3 && !strncmp(p, "all", 3))
			mask |= LLR_TASK_ALL;
		else
			cli_usage_error(usage, "--tasks: unknown task '%.*s' (order, next, conj)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!mask)
		cli_usage_error(usage, "--tasks: no task given");
	return mask;
}

/* --html-unit: 0 for p (each block element a paragraph), 1 for run. */
static int parse_html_unit(const char *s)
{
	if (strcmp(s, "p") && strcmp(s, "run"))
		cli_usage_error(usage, "--html-unit: unknown unit '%s' (p, run)", s);
	return !strcmp(s, "run");
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		cli_usage_error(usage, "--max-member-bytes: not a size: '%s'", s);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || v == 0 || v > (1ULL << 50) >> shift)
		cli_usage_error(usage, "--max-member-bytes: not a size in [1, 2^50]: '%s'", s);
	return (uint64_t)v << shift;
}

static void summary(const struct run *r, const llr_disc_markers *mk)
{
	const llr_disc_stats *st = llr_disc_reader_stats(r->reader);
	cli_warn("%" PRIu64 " document%s, %" PRIu64 " paragraph%s, %" PRIu64 " sentence%s",
	         st->docs, st->docs == 1 ? "" : "s", st->paras, st->paras == 1 ? "" : "s",
	         st->sents, st->sents == 1 ? "" : "s");
	if (!r->sentences) {
		llr_buf b = {0};
		const llr_disc_tasks *c = r->ctx;
		llr_buf_printf(&b, "pairs: ORDER %zu, NEXT %zu, CONJ %zu", llr_disc_tasks_count(c, LLR_TASK_ORDER),
		               llr_disc_tasks_count(c, LLR_TASK_NEXT), llr_disc_tasks_count(c, LLR_TASK_CONJ));
		if (mk && (r->tasks & LLR_TASK_CONJ)) {
			llr_buf_printf(&b, " (");
			for (size_t i = 0; i < llr_disc_markers_nclass(mk); i++)
				llr_buf_printf(&b, "%s%s %zu", i ? ", " : "", llr_disc_markers_class(mk, i), llr_disc_tasks_class_count(c, i));
			llr_buf_printf(&b, ")");
		}
		cli_warn("%s", b.data ? b.data : "pairs: out of memory");
		llr_buf_free(&b);
	}
	if (st->html_docs)
		cli_warn("%" PRIu64 " HTML document%s", st->html_docs, st->html_docs == 1 ? "" : "s");
	if (st->excluded)
		cli_warn("%" PRIu64 " member%s not matching --include", st->excluded, st->excluded == 1 ? "" : "s");
	if (st->dropped)
		cli_warn("%" PRIu64 " member%s matching --exclude", st->dropped, st->dropped == 1 ? "" : "s");
	uint64_t total = 0;
	for (int i = 0; i < LLR_DISC_SKIP_N; i++)
		total += st->skipped[i];
	if (total) {
		llr_buf b = {0};
		llr_buf_printf(&b, "skipped %" PRIu64 " member%s:", total, total == 1 ? "" : "s");
		int k = 0;
		for (int i = 0; i < LLR_DISC_SKIP_N; i++)
			if (st->skipped[i])
				llr_buf_printf(&b, "%s %" PRIu64 " %s", k++ ? "," : "", st->skipped[i], skip_names[i]);
		cli_warn("%s", b.data ? b.data : "skipped: out of memory");
		llr_buf_free(&b);
	}
}

/* The command line: disc-pairs.1 is its spec. */
enum { O_FORMAT = 256,
       O_LANG,
       O_TASKS,
       O_MARKERS,
       O_MINPAR,
       O_STRIDE,
       O_MINLEN,
       O_MAXLEN,
       O_MAXRATIO,
       O_MAXMEMBER,
       O_INCLUDE,
       O_EXCLUDE,
       O_HTMLUNIT,
       O_PROV,
       O_SENT,
       O_LIST };
/* The options in the order of the help (-h), each with its line there. */
static const struct dp_option {
	const char *name;
	int arg, val;
	const char *help;
} options[] = {
    {"help", no_argument, 'h', "  -h, --help               print this help and exit\n"},
    {"version", no_argument, CLI_OPT_VERSION, "  --version                print the version and exit\n"},
    {"lower", no_argument, 'l', "  -l, --lower              lowercase the sentences\n"},
    {"output", required_argument, 'o', "  -o, --output file        write to file (atomically; .gz .bz2 .xz .zst compress)\n"},
    {"quiet", no_argument, 'q', "  -q, --quiet              no progress line and no summary\n"},
    {"seed", required_argument, 's', "  -s, --seed seed          seed of the random choices (default 1)\n"},
    {"format", required_argument, O_FORMAT, "  --format text|tagged|conllu|tokens  the input format (default text)\n"},
    {"lang", required_argument, O_LANG, "  --lang en|fr             language of the tokenizer and markers (default en)\n"},
    {"tasks", required_argument, O_TASKS, "  --tasks list             the tasks to write: order, next, conj (default all)\n"},
    {"markers", required_argument, O_MARKERS, "  --markers file           a phrase<TAB>class table instead of the built-in one\n"},
    {"list-markers", no_argument, O_LIST, "  --list-markers           print the marker table in use and exit\n"},
    {"min-par", required_argument, O_MINPAR, "  --min-par n              NEXT: the sentences of a block (default 9)\n"},
    {"next-stride", required_argument, O_STRIDE, "  --next-stride n          NEXT: a block every n sentences\n"},
    {"min-len", required_argument, O_MINLEN, "  --min-len n              shortest sentence in tokens (default 5)\n"},
    {"max-len", required_argument, O_MAXLEN, "  --max-len n              longest sentence in tokens (default 50)\n"},
    {"max-ratio", required_argument, O_MAXRATIO, "  --max-ratio x            length ratio cap of a pair (default 5)\n"},
    {"max-member-bytes", required_argument, O_MAXMEMBER, "  --max-member-bytes n     cap on a member's decompressed bytes (default 256M)\n"},
    {"include", required_argument, O_INCLUDE, "  --include pattern        read only the members whose name matches (repeatable)\n"},
    {"exclude", required_argument, O_EXCLUDE, "  --exclude pattern        leave out the members whose name matches (repeatable)\n"},
    {"html-unit", required_argument, O_HTMLUNIT, "  --html-unit p|run        what an HTML paragraph is (default p)\n"},
    {"provenance", no_argument, O_PROV, "  --provenance             add a last column doc:paragraph to every line\n"},
    {"sentences", no_argument, O_SENT, "  --sentences              write the paragraphs' sentences instead of examples\n"},
};
#define N_OPTIONS (sizeof options / sizeof *options)

/* getopt's table and the help, both made from options. */
static void set_options(struct option *longopts)
{
	static llr_buf help;
	llr_buf_printf(&help, "Options:\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		longopts[i] = (struct option){options[i].name, options[i].arg, NULL, options[i].val};
		llr_buf_printf(&help, "%s", options[i].help);
	}
	longopts[N_OPTIONS] = (struct option){NULL, 0, NULL, 0};
	if (!help.data)
		cli_oom();
	cli_set_help(help.data);
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "disc-pairs");
	struct option longopts[N_OPTIONS + 1];
	set_options(longopts);
	struct run r = {0};
	llr_disc_opts o = {.tasks = LLR_TASK_ALL, .min_par = 9, .min_len = 5, .max_len = 50, .max_ratio = 5.0, .seed = 1};
	const char *lang = "en", *markers_path = NULL, *out_path = NULL;
	int list = 0;
	llr_disc_read_opts ro = {.max_member = DEFAULT_MAX_MEMBER, .include = r.include, .exclude = r.exclude,
	                         .paragraph = paragraph, .notice = notice, .line = line_read, .arg = &r};
	int c;
	while ((c = cli_getopt(argc, argv, ":hlo:qs:", longopts, usage)) != -1) {
		switch (c) {
		case 'l': ro.lower = 1; break;
		case 'q': r.quiet = 1; break;
		case 'o': out_path = optarg; break;
		case 's': o.seed = (uint64_t)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX); break;
		case O_FORMAT: {
			int f = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, fmt_names[i]))
					f = i;
			if (f < 0)
				cli_usage_error(usage, "--format: unknown format '%s' (text, tagged, conllu, tokens)", optarg);
			ro.format = f;
			break;
		}
		case O_LANG:
			if (strcmp(optarg, "en") && strcmp(optarg, "fr"))
				cli_usage_error(usage, "--lang: unknown language '%s' (en, fr)", optarg);
			lang = optarg;
			break;
		case O_TASKS: o.tasks = parse_tasks(optarg); break;
		case O_MARKERS: markers_path = optarg; break;
		case O_MINPAR: o.min_par = (int)cli_parse_int(usage, "--min-par", optarg, LLR_DISC_NEXT_CONTEXT + LLR_DISC_NEXT_CANDIDATES, 1000000); break;
		case O_STRIDE: o.next_stride = (int)cli_parse_int(usage, "--next-stride", optarg, 1, 1000000); break;
		case O_MINLEN: o.min_len = (int)cli_parse_int(usage, "--min-len", optarg, 1, 1000000); break;
		case O_MAXLEN: o.max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 1000000); break;
		case O_MAXRATIO: o.max_ratio = cli_parse_double(usage, "--max-ratio", optarg, 1.0, 1e9); break;
		case O_MAXMEMBER: ro.max_member = parse_bytes(optarg); break;
		case O_INCLUDE:
			if (ro.n_include == MAX_INCLUDE)
				cli_usage_error(usage, "--include: more than %d patterns", MAX_INCLUDE);
			r.include[ro.n_include++] = optarg;
			break;
		case O_EXCLUDE:
			if (ro.n_exclude == MAX_INCLUDE)
				cli_usage_error(usage, "--exclude: more than %d patterns", MAX_INCLUDE);
			r.exclude[ro.n_exclude++] = optarg;
			break;
		case O_HTMLUNIT: ro.html_runs = parse_html_unit(optarg); break;
		case O_PROV: r.provenance = 1; break;
		case O_SENT: r.sentences = 1; break;
		case O_LIST: list = 1; break;
		}
	}
	if (o.min_len > o.max_len)
		cli_usage_error(usage, "--min-len %d is over --max-len %d", o.min_len, o.max_len);
	o.provenance = r.provenance;
	r.tasks = o.tasks;

	llr_err e = {0};
	llr_tok_opts to = {.lower = ro.lower, .lang = lang};
	ro.tok = llr_tokenizer_new(&to, &e);
	if (!ro.tok)
		cli_die_err(&e);
	llr_disc_markers *mk = NULL;
	if (list || ((o.tasks & LLR_TASK_CONJ) && !r.sentences)) {
		mk = markers_path ? llr_disc_markers_load(markers_path, ro.tok, &e) : llr_disc_markers_builtin(lang, ro.tok, &e);
		if (!mk)
			cli_die_err(&e);
	}
	o.markers = mk;
	if (list) {
		if (optind < argc)
			cli_usage_error(usage, "--list-markers takes no file operands");
		for (size_t i = 0; i < llr_disc_markers_count(mk); i++) {
			size_t cls;
			const char *ph = llr_disc_markers_phrase(mk, i, &cls);
			printf("%s\t%s\n", ph, llr_disc_markers_class(mk, cls));
		}
		cli_flush_stdout();
		llr_disc_markers_free(mk);
		llr_tokenizer_free(ro.tok);
		return 0;
	}

	cli_output out;
	cli_output_open(&out, out_path);
	r.out = out.fp;
	if (!(r.ctx = llr_disc_tasks_new(&o, r.out, &e)) || !(r.reader = llr_disc_reader_new(&ro, &e)))
		cli_die_err(&e);

	cli_progress_init(&r.prog, r.quiet, out.fp == stdout);
	cli_progress_inputs(&r.prog, argv + optind, argc - optind);
	if (optind == argc)
		do_operand(&r, "-");
	for (int i = optind; i < argc; i++)
		do_operand(&r, argv[i]);
	cli_progress_clear();

	if (!r.quiet)
		summary(&r, mk);
	cli_output_close(&out);
	llr_disc_tasks_free(r.ctx);
	llr_disc_markers_free(mk);
	llr_disc_reader_free(r.reader);
	llr_tokenizer_free(ro.tok);
	llr_buf_free(&r.prov);
	return r.status;
}
