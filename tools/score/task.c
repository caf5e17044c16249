/*
 * task.c - score --task: predicts the labels of disc-pairs examples with
 * a sentence encoder (train --task, family sentenc) and reports the
 * accuracy per task.  score(1) is the spec.
 */
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../progress.h"
#include "disc.h"

static llr_senc_model *load_model(const char *path)
{
	llr_err e = {0};
	llr_senc_model *m = NULL;
	if (llr_senc_model_load(path, &m, NULL, &e) < 0)
		cli_die_err(&e);
	return m;
}

static const char *const upper[3] = {"ORDER", "NEXT", "CONJ"};

/* The examples a --task run has predicted, of how many in the file. */
typedef struct task_progress {
	cli_progress prog;
	long long done, total;
} task_progress;

/* Predict every example of task index t in d: a line each. */
static void predict_task(llr_senc_model *m, const llr_disc_set *d, int t, int batch, FILE *fp, size_t *correct, task_progress *tp)
{
	llr_err e = {0};
	llr_disc_batch_buf buf = {0};
	size_t bs = (size_t)batch, *idx = ecalloc(bs, sizeof *idx);
	int32_t *pred = ecalloc(bs, sizeof *pred);
	for (size_t s = 0; s < d->task[t].n; s += bs) {
		size_t k = d->task[t].n - s < bs ? d->task[t].n - s : bs;
		for (size_t i = 0; i < k; i++)
			idx[i] = s + i;
		llr_senc_batch b;
		if (llr_disc_set_batch(d, t, idx, k, &buf, &b) != LLR_OK)
			cli_oom();
		if (llr_senc_run(m->enc, &b, 0, NULL, correct, pred, &e) < 0)
			cli_die_err(&e);
		for (size_t i = 0; i < k; i++) {
			if (t == 2)
				fprintf(fp, "%s\t%s\t%s\n", upper[t], m->conj[b.label[i]], m->conj[pred[i]]);
			else
				fprintf(fp, "%s\t%d\t%d\n", upper[t], b.label[i], pred[i]);
		}
		tp->done += (long long)k;
		if (cli_progress_due(&tp->prog))
			cli_progress_show(&tp->prog, tp->done, "examples", tp->done, "examples", (double)tp->done / (double)tp->total);
	}
	free(idx);
	free(pred);
	llr_disc_batch_buf_free(&buf);
}

int score_task(const score_disc_opts *o, int nfiles, char **files)
{
	llr_senc_model *m = load_model(o->model);
	int have = llr_senc_cfg(m->enc)->tasks, tasks = o->task & have;
	if (!tasks)
		cli_die("%s: the model has no head for the task asked for", o->model);
	cli_output out;
	cli_output_open_lines(&out, o->output);
	task_progress tp = {0};
	cli_progress_init(&tp.prog, o->quiet, out.fp == stdout);
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		llr_err e = {0};
		llr_disc_set d = {.conj = m->conj, .n_conj = m->n_conj};
		if (llr_disc_set_read(&d, nfiles ? files[f] : "-", m->lex->vocab, m->lex->unk_id, tasks, 0, &e) != LLR_OK)
			cli_die_err(&e);
		tp.done = tp.total = 0;
		for (int t = 0; t < 3; t++)
			if (tasks & (1 << t))
				tp.total += (long long)d.task[t].n;
		for (int t = 0; t < 3; t++) {
			if (!(tasks & (1 << t)))
				continue;
			size_t correct = 0;
			predict_task(m, &d, t, o->batch, out.fp, &correct, &tp);
			cli_progress_clear();
			if (!o->quiet && d.task[t].n)
				cli_warn("%s: %s: %zu examples, accuracy %.2f%%", nfiles ? files[f] : "<stdin>", upper[t], d.task[t].n,
				         100.0 * (double)correct / (double)d.task[t].n);
			else if (!o->quiet)
				cli_warn("%s: %s: no examples", nfiles ? files[f] : "<stdin>", upper[t]);
		}
		llr_disc_set_free(&d);
	}
	cli_output_close(&out);
	llr_senc_model_free(m);
	return 0;
}
