/*
 * disc.h - score's sentence modes: --embed (embed.c: a vector a line,
 * llr_model_embed), --task (task.c: the labels of disc-pairs examples)
 * and --tags (tags.c: a tagger's tags, llr_model_tag).  CLI-only.
 */
#ifndef LLR_SCORE_DISC_H
#define LLR_SCORE_DISC_H

typedef struct score_disc_opts {
	const char *model, *output;
	int embed;  /* --embed: vectors; else --task: predictions */
	int task;   /* LLR_TASK_* mask (--task) */
	int tensor; /* --embed --tensor */
	int tags;   /* --tags: a tagger's tags */
	double beam; /* --tags --beam */
	int batch;
	int quiet;
} score_disc_opts;

/* Run the mode over the files (none: stdin); return the exit status. */
int score_embed(const score_disc_opts *o, int nfiles, char **files);
int score_task(const score_disc_opts *o, int nfiles, char **files);
int score_tags(const score_disc_opts *o, int nfiles, char **files);

#endif
