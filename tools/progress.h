/*
 * progress.h - the tools' live progress line on stderr (CLI-only, never
 * used by lib/): "score: 1200 lines 5300 tok/s 43% ETA 12s", redrawn in
 * place (\r) at most four times a second while stderr is a terminal,
 * erased before any other message and at the end; nothing at all when
 * stderr is not a terminal, when standard output writes to the same
 * terminal, or under -q.  The fraction and ETA come from
 * the bytes read of inputs of known size (regular files), or from a count
 * known in advance (gen -n).
 */
#ifndef LLR_PROGRESS_H
#define LLR_PROGRESS_H

#include <stdint.h>

#include "llrnn.h"

typedef struct cli_progress {
	int on;           /* stderr is a terminal and not -q */
	double t0, last;  /* start and last draw, wall clock */
	int64_t total;    /* bytes of all the inputs, -1 when one is unknown */
	int64_t done;     /* bytes of the inputs finished */
	int64_t cur_size; /* bytes of the current input, -1 when unknown */
	const llr_lines *lines;     /* the current input, if lines */
	const llr_archive *archive; /* or an archive */
} cli_progress;

/* Start: on when stderr is a terminal and not quiet, unless the tool
 * writes its output to standard output (to_stdout) and that is the same
 * terminal (its lines would run into the progress line). */
void cli_progress_init(cli_progress *p, int quiet, int to_stdout);
/* The inputs about to be read (n 0: standard input), for the fraction. */
void cli_progress_inputs(cli_progress *p, char *const *paths, int n);
/* The next input, as opened from path (its bytes read count from now). */
void cli_progress_lines(cli_progress *p, const char *path, const llr_lines *l);
void cli_progress_archive(cli_progress *p, const char *path, const llr_archive *a);
/* The share of the inputs' bytes read, in [0, 1]; -1 when not known. */
double cli_progress_fraction(const cli_progress *p);
/* Whether to redraw now: on, and a quarter second since the last draw
 * (or the start, so a short run draws nothing). */
int cli_progress_due(cli_progress *p);
/* The usual line when due: "prog: N unit R rate_unit/s [P% ETA T]", the
 * rate of rate_n per second since the start, the part from frac (-1: not
 * shown). */
void cli_progress_show(cli_progress *p, long long n, const char *unit, long long rate_n, const char *rate_unit, double frac);
/* Draw "prog: text" now, in place of the line before (when on). */
void cli_progress_draw(cli_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* train's step lines: drawn in place when on, else one line
 * "prog: text\n" (a log's --progress line; the caller decides when). */
void cli_progress_step(cli_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The time left in a training run, in seconds: the rest of this epoch
 * (epoch_left), epochs_after more epochs of epoch_secs each, at most
 * what is left of max_time (0: none) after elapsed seconds. */
double cli_progress_run_eta(double epoch_left, double epoch_secs, long long epochs_after, double max_time, double elapsed);
/* Erase the line, if one is shown (cli_warn and cli_die call this). */
void cli_progress_clear(void);

#endif
