/*
 * cli.h - helpers shared by the llrnn tools and never used by lib/:
 * messages and exits in the `tool: object: reason` shape, number parsing
 * with range checks, output files written atomically, terminal checks,
 * wall-clock time.  Exit statuses: 0 ok, 1 runtime or data error,
 * 2 usage error.
 */
#ifndef LLR_CLI_H
#define LLR_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "llrnn.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

extern const char *cli_prog; /* set by cli_init from argv[0]'s basename */

/* name is the tool's own name, the one its usage text is written with;
 * cli_prog, the name in every message and usage line, is the name it
 * was invoked by (argv0's basename: llrnn-score once installed), or name
 * when argv0 is empty. */
void cli_init(const char *argv0, const char *name);
/* "prog: message\n" on stderr; die exits 1. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A library notice (llr_notice, llr_model_on_notice) as cli_warn prints
 * it; ctx unused. */
void cli_notice(void *ctx, const char *line);
_Noreturn void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a library error ("prog: msg") and exit 1. */
_Noreturn void cli_die_err(const llr_err *e);
/* Usage error: "prog: message" then the usage text on stderr, exit 2. */
_Noreturn void cli_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Options every tool takes: put CLI_COMMON_OPTIONS in the option table
 * and read the options with cli_getopt. */
enum { CLI_OPT_VERSION = 0x10000 };
#define CLI_COMMON_OPTIONS {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, CLI_OPT_VERSION}

/* The option list -h and --help print after the usage: every option on a
 * line with what it does, grouped as in the man page.  Set it before
 * cli_getopt; the help then ends with "See prog(1).". */
void cli_set_help(const char *options);

/* getopt_long with the handling every tool shares: -h and --help print
 * the usage, the option list (cli_set_help) and "See prog(1)." on stdout
 * and exit 0; --version prints "prog (llrnn)
 * LLR_VERSION" and exits 0; an unknown option or a missing argument is a
 * usage error ("prog: --bogus: unknown option", "prog: --top: missing
 * argument", then the usage; exit 2).  shortopts must begin with ':' (so
 * a missing argument can be told from an unknown option).  Returns the
 * next option, or -1 at the end, as getopt_long does. */
int cli_getopt(int argc, char *const argv[], const char *shortopts, const struct option *longopts, const char *usage);

/* Allocation that exits 1 ("prog: out of memory") instead of failing,
 * as sbase's emalloc; ereallocarray also when n * size overflows. */
void *emalloc(size_t size);
void *ecalloc(size_t n, size_t size);
void *ereallocarray(void *p, size_t n, size_t size);
char *estrdup(const char *s);
/* Exit 1 with "prog: out of memory" (after a library call that ran out). */
_Noreturn void cli_oom(void);

/* Parse a whole option argument into [lo, hi] or exit 2 naming the option. */
long long cli_parse_int(const char *usage, const char *opt, const char *s, long long lo, long long hi);
double cli_parse_double(const char *usage, const char *opt, const char *s, double lo, double hi);

/* Output: stdout for NULL or "-", otherwise a temporary file beside path
 * that cli_output_close renames into place (never a partial file).  A
 * path ending in .gz, .bz2, .xz or .zst is written compressed with gzip,
 * bzip2, xz or zstd (llr_compress_for_path); stdout never is. */
typedef struct cli_output {
	FILE *fp;
	char *path;     /* final path, NULL for stdout */
	char *tmp_path; /* temporary, NULL for stdout */
} cli_output;
void cli_output_open(cli_output *o, const char *path);
/* The same for line-oriented output: stdout is line-buffered when it is a
 * pipe or terminal (cli_stdout_linebuf), so a line reaches a coprocess or
 * a pipeline as soon as it is written. */
void cli_output_open_lines(cli_output *o, const char *path);
/* Flush, check for write errors, close and rename; exits 1 on failure.
 * A tool that exits before this (cli_die...) leaves no temporary behind. */
void cli_output_close(cli_output *o);
/* Remove the temporary (on an error path). */
void cli_output_abort(cli_output *o);
/* Refuse to write binary data to a terminal unless forced. */
void cli_refuse_tty(int fd, const char *what);
/* Line-buffer stdout when it is a pipe or terminal (not a regular file). */
void cli_stdout_linebuf(void);
/* Whether stdout is a pipe or terminal (or another file that is not a
 * regular file): the output cli_stdout_linebuf line-buffers. */
int cli_stdout_stream(void);
/* Exit 1 if writing stdout failed (sbase fshut). */
void cli_flush_stdout(void);

/* Whether path is a model file (llrnn-model(5)) of meta family family:
 * 0 when it is not, or cannot be read (the family's reader says why
 * later), or is "-" (standard input is not read twice). */
int cli_model_family_is(const char *path, const char *family);
/* 1 if this command line gives the long option opt (NULL: none; as
 * "--opt" or "--opt=V"), or some -m/--model of it names a model with
 * all the LLR_MODEL_* operations ops and none of without
 * (llr_model_file_ops: the models' headers only): which of a tool's
 * modes it asks for, before its options are parsed. */
int cli_models_can(int argc, char **argv, const char *opt, unsigned ops, unsigned without);

/* Under -v: a note that the archive at path (its meta) was written
 * before checksums, so its data are read unverified. */
void cli_note_checksums(const char *path, const llr_meta *meta);

/* Wall clock in seconds. */
double cli_now(void);
/* "3m12s" style duration into buf. */
const char *cli_duration(double seconds, char *buf, size_t size);

/* gen's and score's --fsa, --regex and --grammar exclude each other:
 * a usage error when more than one is given. */
void cli_constraint_one(const char *usage, const char *fsa, const char *regex, const char *grammar);

#endif
