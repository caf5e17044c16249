/*
 * score_disc.h - score's sentence-encoder modes (score_disc.c): --embed
 * and --task.  CLI-only.
 */
#ifndef LLR_SCORE_DISC_H
#define LLR_SCORE_DISC_H

typedef struct score_disc_opts {
	const char *model, *output;
	int embed;  /* --embed: vectors; else --task: predictions */
	int task;   /* LLR_TASK_* mask (--task) */
	int tensor; /* --embed --tensor */
	int batch;
	int quiet;
} score_disc_opts;

/* Runs the mode over the files (none: stdin); returns the exit status. */
int score_disc(const score_disc_opts *o, int nfiles, char **files);

#endif
