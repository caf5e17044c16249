/*
 * cli.c - the tools' shared helpers (see cli.h): messages, exits, option
 * number parsing, atomic output files (compressed by their suffix through
 * the library's llr_compress_fdopen), terminal checks, wall clock.
 */
#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *cli_prog = "llrnn";
static const char *cli_name = "llrnn"; /* the name the usage texts are written with */

/* Under an address-space limit (ulimit -v), OpenBLAS's worker threads
 * can fail to get their work buffers and retry forever, and its exit
 * handler joins them, so exit would hang.  Under a limit, then, exit
 * flushes stdio and ends the process without the libraries' exit
 * handlers (the tools' own atexit handlers, registered later, run first). */
static void exit_now(int status, void *arg)
{
	(void)arg;
	fflush(NULL);
	_exit(status);
}

/* Before main: on a CPU the system's OpenBLAS does not know (it then
 * runs its generic kernels, 3-4x slower: llr_blas_better_core), set
 * OPENBLAS_CORETYPE to the kernels the CPU runs and execute this program
 * again with the same arguments, once: the variable is then set, as it is
 * when the user chose the kernels (OPENBLAS_CORETYPE=Prescott keeps the
 * generic ones).  Not under valgrind, whose tools would not follow the
 * new image.  glibc passes an executable's constructors main's argv
 * (other C libraries do not: there the tools keep OpenBLAS's choice). */
#ifdef __GLIBC__
__attribute__((constructor)) static void cli_blas_core(int argc, char **argv, char **envp)
{
	(void)envp;
	const char *set = getenv("OPENBLAS_CORETYPE"), *pre = getenv("LD_PRELOAD");
	if (argc < 1 || !argv || (set && *set) || (pre && strstr(pre, "vgpreload")))
		return;
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0)
		return;
	self[len] = '\0';
	if (strstr(self, "/ld-")) /* started by the dynamic loader: it would run again, not us */
		return;
	const char *core = llr_blas_better_core();
	if (!core || setenv("OPENBLAS_CORETYPE", core, 1))
		return;
	execv("/proc/self/exe", argv);
	unsetenv("OPENBLAS_CORETYPE"); /* no /proc: carry on with the generic kernels */
}
#endif

void cli_init(const char *argv0, const char *name)
{
	cli_name = name;
	cli_prog = name;
	if (argv0 && *argv0) {
		const char *slash = strrchr(argv0, '/');
		if (!slash || slash[1])
			cli_prog = slash ? slash + 1 : argv0;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		on_exit(exit_now, NULL);
}

/* "prog: message\n" in one write when it fits, so the lines of tools
 * sharing a stderr (make -j, the ranks of mpirun) never interleave. */
static void vmsg(const char *fmt, va_list ap)
{
	char line[4096];
	va_list aq;
	fflush(stdout);
	cli_progress_clear();
	va_copy(aq, ap);
	int p = snprintf(line, sizeof line, "%s: ", cli_prog);
	int n = p >= 0 && (size_t)p < sizeof line ? vsnprintf(line + p, sizeof line - (size_t)p, fmt, aq) : -1;
	va_end(aq);
	if (n >= 0 && (size_t)p + (size_t)n + 1 < sizeof line) {
		line[p + n] = '\n';
		fwrite(line, 1, (size_t)p + (size_t)n + 1, stderr);
		return;
	}
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cli_notice(void *ctx, const char *line)
{
	(void)ctx;
	cli_warn("%s", line);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(1);
}

void cli_die_err(const llr_err *e)
{
	if (e && e->msg[0])
		cli_die("%s", e->msg);
	cli_die("%s", llr_strerror(e ? e->code : LLR_EIO));
}

void cli_oom(void)
{
	cli_die("out of memory");
}

void *emalloc(size_t size)
{
	void *p = llr_malloc(size ? size : 1);
	if (!p)
		cli_oom();
	return p;
}

void *ecalloc(size_t n, size_t size)
{
	void *p = llr_calloc(n ? n : 1, size ? size : 1);
	if (!p)
		cli_oom();
	return p;
}

void *ereallocarray(void *p, size_t n, size_t size)
{
	void *q = llr_reallocarray(p, n ? n : 1, size ? size : 1);
	if (!q)
		cli_oom();
	return q;
}

char *estrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		cli_oom();
	return p;
}

/* The usage text under the name the tool was invoked by: a line that
 * starts "usage: NAME " or "       NAME " gets cli_prog for NAME, and the
 * continuation lines aligned under NAME's end move with it. */
static void put_usage(const char *usage, FILE *fp)
{
	static const char lead[] = "usage: ";
	size_t lead_n = sizeof lead - 1, name_n = strlen(cli_name);
	long shift = (long)strlen(cli_prog) - (long)name_n;
	const char *s = usage;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
		size_t sp = strspn(s, " ");
		int head = (!strncmp(s, lead, lead_n) || sp == lead_n) && n > lead_n + name_n &&
		           !strncmp(s + lead_n, cli_name, name_n) && s[lead_n + name_n] == ' ';
		if (head) {
			fwrite(s, 1, lead_n, fp);
			fputs(cli_prog, fp);
			fwrite(s + lead_n + name_n, 1, n - lead_n - name_n, fp);
		} else if (sp == lead_n + name_n + 1 && shift) {
			long ind = (long)sp + shift;
			fprintf(fp, "%*s", ind > 1 ? (int)ind : 1, "");
			fwrite(s + sp, 1, n - sp, fp);
		} else {
			fwrite(s, 1, n, fp);
		}
		s += n;
	}
}

void cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	put_usage(usage, stderr);
	exit(2);
}

/* The option that getopt_long refused, for the message: a short option
 * is in optopt (argv[optind - 1] may be another word while getopt is
 * inside a group such as -qx); a long one is the word itself, up to any
 * "=value". */
static void bad_option(const char *usage, int c, char *const argv[])
{
	const char *word = optind > 0 ? argv[optind - 1] : "";
	int is_long = !strncmp(word, "--", 2) && (c == ':' || optopt == 0);
	const char *what = c == ':' ? "missing argument" : "unknown option";
	if (is_long) {
		const char *eq = strchr(word, '=');
		int n = eq ? (int)(eq - word) : (int)strlen(word);
		cli_usage_error(usage, "%.*s: %s", n, word, what);
	}
	cli_usage_error(usage, "-%c: %s", optopt > 0 && optopt < 128 ? optopt : '?', what);
}

static const char *help_options;

void cli_set_help(const char *options)
{
	help_options = options;
}

int cli_getopt(int argc, char *const argv[], const char *shortopts, const struct option *longopts, const char *usage)
{
	LLR_ASSERT(shortopts[0] == ':');
	opterr = 0;
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (c) {
	case 'h':
		put_usage(usage, stdout);
		if (help_options)
			printf("\n%s", help_options);
		printf("\nSee %s(1).\n", cli_prog);
		cli_flush_stdout();
		exit(0);
	case CLI_OPT_VERSION:
		printf("%s (llrnn) %s\n", cli_prog, LLR_VERSION);
		cli_flush_stdout();
		exit(0);
	case ':':
	case '?':
		bad_option(usage, c, argv);
	}
	return c;
}

long long cli_parse_int(const char *usage, const char *opt, const char *s, long long lo, long long hi)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		cli_usage_error(usage, "%s: not an integer: '%s'", opt, s);
	if (v < lo || v > hi)
		cli_usage_error(usage, "%s: %lld out of range [%lld, %lld]", opt, v, lo, hi);
	return v;
}

double cli_parse_double(const char *usage, const char *opt, const char *s, double lo, double hi)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		cli_usage_error(usage, "%s: not a number: '%s'", opt, s);
	if (v < lo || v > hi)
		cli_usage_error(usage, "%s: %g out of range [%g, %g]", opt, v, lo, hi);
	return v;
}

/* The file cli_output_open is writing: whatever way the tool exits
 * (cli_die included) before cli_output_close, its temporary is removed. */
static cli_output *open_output;

static void remove_open_output(void)
{
	if (open_output)
		cli_output_abort(open_output);
}

void cli_output_open(cli_output *o, const char *path)
{
	static int registered;
	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->fp = stdout;
		return;
	}
	llr_compress c = llr_compress_for_path(path);
	o->path = estrdup(path);
	int fd;
	if (llr_path_is_special(path)) { /* /dev/null, a FIFO: in place */
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			cli_die("%s: %s", path, strerror(errno));
	} else {
		size_t n = strlen(path) + 16;
		o->tmp_path = emalloc(n);
		snprintf(o->tmp_path, n, "%s.tmpXXXXXX", path);
		if ((fd = mkstemp(o->tmp_path)) < 0)
			cli_die("%s: %s", path, strerror(errno));
		fchmod(fd, 0644 & ~umask(umask(0)));
	}
	llr_err e = {0};
	o->fp = c == LLR_COMPRESS_NONE ? fdopen(fd, "w") : llr_compress_fdopen(fd, c, path, &e);
	if (!o->fp) {
		int err = errno;
		close(fd);
		if (o->tmp_path)
			unlink(o->tmp_path);
		if (c != LLR_COMPRESS_NONE)
			cli_die_err(&e);
		cli_die("%s: %s", path, strerror(err));
	}
	if (!o->tmp_path)
		return;
	if (!registered)
		registered = !atexit(remove_open_output);
	open_output = o;
}

void cli_output_close(cli_output *o)
{
	if (open_output == o)
		open_output = NULL;
	if (o->fp == stdout || !o->fp) {
		cli_flush_stdout();
		return;
	}
	int bad = fflush(o->fp) != 0 || ferror(o->fp);
	int err = errno;
	if (fclose(o->fp) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	o->fp = NULL;
	if (bad) {
		if (o->tmp_path)
			unlink(o->tmp_path);
		cli_die("%s: write error: %s", o->path, strerror(err));
	}
	if (o->tmp_path && rename(o->tmp_path, o->path) != 0) {
		err = errno;
		unlink(o->tmp_path);
		cli_die("%s: %s", o->path, strerror(err));
	}
	free(o->path);
	free(o->tmp_path);
	o->path = o->tmp_path = NULL;
}

void cli_output_abort(cli_output *o)
{
	if (open_output == o)
		open_output = NULL;
	if (o->fp && o->fp != stdout) {
		fclose(o->fp);
		if (o->tmp_path)
			unlink(o->tmp_path);
	}
	o->fp = NULL;
}

void cli_refuse_tty(int fd, const char *what)
{
	if (isatty(fd) && !getenv("LLRNN_FORCE_TTY"))
		cli_die("refusing to write %s to a terminal; redirect it or use -o FILE", what);
}

void cli_output_open_lines(cli_output *o, const char *path)
{
	cli_output_open(o, path);
	if (o->fp == stdout)
		cli_stdout_linebuf();
}

int cli_stdout_stream(void)
{
	struct stat st;
	return fstat(1, &st) == 0 && !S_ISREG(st.st_mode);
}

void cli_stdout_linebuf(void)
{
	if (cli_stdout_stream())
		setvbuf(stdout, NULL, _IOLBF, 0);
}

void cli_flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die("<stdout>: write error: %s", strerror(errno));
}

int cli_model_family_is(const char *path, const char *family)
{
	if (!path || !strcmp(path, "-"))
		return 0;
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "model", &e);
	if (!r)
		return 0;
	const char *fam = llr_meta_get(llr_tr_meta(r), "family");
	int yes = fam && !strcmp(fam, family);
	llr_tr_close(r);
	return yes;
}

int cli_models_can(int argc, char **argv, const char *opt, unsigned ops, unsigned without)
{
	size_t ol = opt ? strlen(opt) : 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *path = NULL;
		if (opt && !strncmp(a, opt, ol) && (a[ol] == '\0' || a[ol] == '='))
			return 1;
		if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(a, "-m", 2) && a[2])
			path = a + 2;
		else if (!strncmp(a, "--model=", 8))
			path = a + 8;
		unsigned has = path ? llr_model_file_ops(path) : 0;
		if (has && (has & ops) == ops && !(has & without))
			return 1;
	}
	return 0;
}

void cli_note_checksums(const char *path, const llr_meta *meta)
{
	if (!llr_meta_get(meta, "checksum"))
		cli_warn("%s: no checksums (written before llrnn had them): its data are not verified", path ? path : "<stdin>");
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *cli_duration(double s, char *buf, size_t size)
{
	if (!(s >= 0) || s > 1e8)
		snprintf(buf, size, "?");
	else if (s < 60)
		snprintf(buf, size, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, size, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
	return buf;
}

void cli_constraint_one(const char *usage, const char *fsa, const char *regex, const char *grammar)
{
	if ((fsa != NULL) + (regex != NULL) + (grammar != NULL) > 1)
		cli_usage_error(usage, "--fsa, --regex and --grammar exclude each other");
}
