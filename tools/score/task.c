/*
 * task.c - score --task: a line per labelled example (the task, the gold
 * and the predicted label) and each task's accuracy, over
 * llr_model_predict (a sentence encoder's heads), with progress.
 * score(1) is the spec.
 */
#include "../cli.h"
#include "../progress.h"
#include "disc.h"

typedef struct task_out {
	FILE *fp;
	const char *file;
	int quiet;
	cli_progress prog;
} task_out;

static int put(void *ctx, const llr_prediction *p)
{
	task_out *o = ctx;
	if (p->gold) {
		fprintf(o->fp, "%s\t%s\t%s\n", p->name, p->gold, p->pred);
		if (cli_progress_due(&o->prog))
			cli_progress_show(&o->prog, (long long)p->done, "examples", (long long)p->done, "examples",
			                  (double)p->done / (double)p->total);
		return 0;
	}
	cli_progress_clear();
	if (!o->quiet && p->n)
		cli_warn("%s: %s: %zu examples, accuracy %.2f%%", o->file, p->name, p->n, 100.0 * (double)p->correct / (double)p->n);
	else if (!o->quiet)
		cli_warn("%s: %s: no examples", o->file, p->name);
	return 0;
}

int score_task(const score_disc_opts *o, int nfiles, char **files)
{
	llr_err e = {0};
	llr_model *m;
	if (llr_model_open(o->model, NULL, &m, &e) != LLR_OK)
		cli_die_err(&e);
	cli_output out;
	cli_output_open_lines(&out, o->output);
	task_out to = {.fp = out.fp, .quiet = o->quiet};
	cli_progress_init(&to.prog, o->quiet, out.fp == stdout);
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		to.file = nfiles ? files[f] : "<stdin>";
		if (llr_model_predict(m, (unsigned)o->task, nfiles ? files[f] : "-", (size_t)o->batch, put, &to, &e) != LLR_OK)
			cli_die_err(&e);
	}
	cli_output_close(&out);
	llr_model_close(m);
	return 0;
}
