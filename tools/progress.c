/*
 * progress.c - the live progress line (see progress.h).  One line at a
 * time is on the terminal; the messages of cli.c erase it first, so a
 * warning never lands in the middle of it.
 */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_EVERY 0.25 /* seconds between redraws */

static int shown; /* a progress line is on stderr now */

static int64_t file_size(const char *path)
{
	struct stat st;
	int ok = !path || !strcmp(path, "-") ? fstat(0, &st) == 0 : stat(path, &st) == 0;
	return ok && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
}

/* Output lines on the same terminal would run into the progress line:
 * then the output is the progress. */
static int stdout_is_stderr_tty(void)
{
	struct stat a, b;
	return isatty(1) && fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_rdev == b.st_rdev;
}

void cli_progress_init(cli_progress *p, int quiet, int to_stdout)
{
	memset(p, 0, sizeof *p);
	p->on = !quiet && isatty(2) && !(to_stdout && stdout_is_stderr_tty());
	p->t0 = p->last = cli_now(); /* the first line after a quarter second */
	p->total = p->cur_size = -1;
}

void cli_progress_inputs(cli_progress *p, char *const *paths, int n)
{
	p->total = n ? 0 : file_size("-");
	for (int i = 0; i < n && p->total >= 0; i++) {
		int64_t s = file_size(paths[i]);
		p->total = s < 0 ? -1 : p->total + s;
	}
}

static void next_input(cli_progress *p, const char *path)
{
	if (p->lines || p->archive)
		p->done += p->cur_size > 0 ? p->cur_size : 0;
	p->lines = NULL;
	p->archive = NULL;
	p->cur_size = p->on ? file_size(path) : -1;
}

void cli_progress_lines(cli_progress *p, const char *path, const llr_lines *l)
{
	next_input(p, path);
	p->lines = l;
}

void cli_progress_archive(cli_progress *p, const char *path, const llr_archive *a)
{
	next_input(p, path);
	p->archive = a;
}

double cli_progress_fraction(const cli_progress *p)
{
	if (p->total <= 0 || p->cur_size < 0)
		return -1;
	int64_t at = p->lines ? llr_lines_offset(p->lines) : p->archive ? llr_archive_offset(p->archive) : 0;
	if (at < 0)
		return -1;
	double f = (double)(p->done + MIN(at, p->cur_size)) / (double)p->total;
	return f > 1 ? 1 : f;
}

int cli_progress_due(cli_progress *p)
{
	return p->on && cli_now() - p->last >= PROGRESS_EVERY;
}

static void vdraw(cli_progress *p, int newline, const char *fmt, va_list ap)
{
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	fflush(stdout);
	if (newline) {
		fprintf(stderr, "%s: %s\n", cli_prog, line);
	} else {
		fprintf(stderr, "\r\033[K%s: %s", cli_prog, line);
		fflush(stderr);
		shown = 1;
	}
	p->last = cli_now();
}

void cli_progress_draw(cli_progress *p, const char *fmt, ...)
{
	if (!p->on)
		return;
	va_list ap;
	va_start(ap, fmt);
	vdraw(p, 0, fmt, ap);
	va_end(ap);
}

void cli_progress_step(cli_progress *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdraw(p, !p->on, fmt, ap);
	va_end(ap);
}

double cli_progress_run_eta(double epoch_left, double epoch_secs, long long epochs_after, double max_time, double elapsed)
{
	double left = epoch_left + (double)MAX(epochs_after, 0) * epoch_secs;
	return max_time > 0 ? MIN(left, MAX(max_time - elapsed, 0.0)) : left;
}

void cli_progress_show(cli_progress *p, long long n, const char *unit, long long rate_n, const char *rate_unit, double frac)
{
	if (!cli_progress_due(p))
		return;
	double el = cli_now() - p->t0;
	double rate = el > 0 ? (double)rate_n / el : 0;
	char part[64] = "", dur[32];
	if (frac >= 0)
		snprintf(part, sizeof part, " %.0f%% ETA %s", 100 * frac,
		         frac > 0 ? cli_duration(el * (1 - frac) / frac, dur, sizeof dur) : "?");
	cli_progress_draw(p, "%lld %s %.0f %s/s%s", n, unit, rate, rate_unit, part);
}

void cli_progress_clear(void)
{
	if (!shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	shown = 0;
}
