/*
 * disc.c - train's discourse sentence-encoder family (train --task):
 * the options the family adds or that a resumed model fixes, the new or
 * resumed model (llr_senc_model_new, llr_senc_model_load), the pairs
 * (rank 0 alone reads --valid), the meta of the options, and the lines on
 * stderr beyond the driver's (the examples and encoder at the start, each
 * task's validation accuracy after every epoch).  The training is the
 * library's: the job of lib/family/sentenc/train.c on the one driver
 * (run.c), distributed as dist.h says.  train(1) is the spec.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "train.h"
#include "dist.h"

static const char *const task_names[3] = {"order", "next", "conj"};

typedef struct dtrain {
	const train_opts *o;
	train_dist *dist;
	llr_senc_model *m;
	llr_train_state ts;
	llr_disc_set tr, va;
	int tasks;
	llr_train_job *job;
} dtrain;

/* --next-negatives as the meta and the messages spell it. */
static const char *negatives_name(const train_opts *o)
{
	return o->next_batch_negatives ? "batch" : "own";
}

/* The options in the meta, in the order the file has always had them
 * (the job keeps epochs_trained and the accuracies up to date). */
static void set_meta(dtrain *T)
{
	llr_meta *m = T->m->meta;
	const train_opts *o = T->o;
	train_optim_meta(m, T->ts.optim);
	llr_meta_setf(m, "batch", "%d", o->batch);
	llr_meta_setf(m, "task_cap", "%lld", o->task_cap);
	llr_meta_set(m, "next_negatives", negatives_name(o));
	llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed);
	llr_meta_setf(m, "epochs_trained", "%lld", (long long)T->ts.epoch);
	train_limits_meta(o, m);
	if (llr_meta_set(m, "valid_criterion", "error") < 0)
		cli_oom();
}

/* --resume: the model with its encoder, CONJ classes and training state;
 * the options it fixes are checked against those given and taken from
 * it.  --features, when given, must be the model's lexicon. */
static void resume_model(dtrain *T, train_opts *o)
{
	llr_err e = {0};
	llr_train_state *ts = NULL;
	if (llr_senc_model_load(o->resume, &T->m, &ts, &e) < 0)
		cli_die_err(&e);
	if (!ts)
		cli_die("%s: no training state to resume from", o->resume);
	const llr_meta *m = T->m->meta;
	char b[5][32];
	snprintf(b[0], 32, "%d", o->embed);
	snprintf(b[1], 32, "%d", o->hidden);
	snprintf(b[2], 32, "%d", o->batch);
	snprintf(b[3], 32, "%lld", o->task_cap);
	snprintf(b[4], 32, "%llu", (unsigned long long)o->seed);
	train_fixed_opt(o->set_encoder, "--encoder", m, "encoder", llr_senc_encoder_name(o->encoder));
	train_fixed_opt(o->set_embed, "--embed", m, "embed", b[0]);
	train_fixed_opt(o->set_hidden, "--hidden", m, "hidden", b[1]);
	train_fixed_opt(o->set_batch, "--batch", m, "batch", b[2]);
	train_fixed_opt(o->set_task_cap, "--task-cap", m, "task_cap", b[3]);
	train_fixed_opt(o->set_optim, "--optim", m, "optim", llr_optim_name(o->optim));
	train_fixed_opt(o->set_seed, "-s", m, "seed", b[4]);
	const char *seed = llr_meta_get(m, "seed"); /* the meta is written with it again */
	if (seed)
		o->seed = strtoull(seed, NULL, 10);
	const llr_senc_config *c = llr_senc_cfg(T->m->enc);
	train_resume_prob(o->set_dropout, "--dropout", "dropout", &o->dropout, c->dropout);
	train_resume_prob(o->set_word_dropout, "--word-dropout", "word_dropout", &o->word_dropout, c->word_dropout);
	if ((o->task & c->tasks) != c->tasks)
		cli_usage_error(train_usage, "--task: the resumed model trains%s%s%s", c->tasks & 1 ? " order" : "", c->tasks & 2 ? " next" : "",
		                c->tasks & 4 ? " conj" : "");
	o->task = c->tasks;
	o->encoder = c->encoder;
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->task_cap = (long long)llr_meta_num(m, "task_cap", 0); /* none before the option */
	const char *neg = llr_meta_get(m, "next_negatives");     /* own before the option */
	if (!neg)
		neg = "own";
	if (o->set_next_negatives && strcmp(neg, negatives_name(o)))
		cli_usage_error(train_usage, "--next-negatives %s: the resumed model has next_negatives=%s", negatives_name(o), neg);
	o->next_batch_negatives = !strcmp(neg, "batch");
	llr_senc_model *f = NULL;
	if (o->features && llr_senc_model_new(o->features, &f, &e) < 0)
		cli_die_err(&e);
	if (f && llr_lexicon_same(T->m->lex, f->lex, o->resume, o->features, &e) < 0)
		cli_die("%s: not the vocabulary of %s: %s", o->features, o->resume, e.msg);
	llr_senc_model_free(f);
	train_resume_limits(o, m, ts);
	T->ts = *ts;
	free(ts);
}

/* The model (new, or --resume's), the pairs (rank 0 alone reads --valid)
 * and a new model's encoder. */
static void setup(dtrain *T, train_opts *o)
{
	llr_err e = {0};
	if (o->resume)
		resume_model(T, o);
	else if (!o->features)
		cli_die("--task needs --features FILE, the featurize stream of the vocabulary");
	else if (llr_senc_model_new(o->features, &T->m, &e) < 0)
		cli_die_err(&e);
	T->tr.conj = T->va.conj = T->m->conj;
	T->tr.n_conj = T->m->n_conj;
	T->tr.shard_rank = T->dist->rank;
	T->tr.shard_size = T->dist->size;
	/* a resumed model's CONJ classes are fixed: its head has their rows */
	if (llr_disc_set_read(&T->tr, o->stream ? o->stream : "-", T->m->lex->vocab, T->m->lex->unk_id, o->task, !o->resume, &e) != LLR_OK)
		cli_die_err(&e);
	T->m->n_conj = T->va.n_conj = T->tr.n_conj;
	if (o->valid && T->dist->rank == 0) {
		if (llr_disc_set_read(&T->va, o->valid, T->m->lex->vocab, T->m->lex->unk_id, o->task, 0, &e) != LLR_OK)
			cli_die_err(&e);
		if (!(T->va.task[0].n + T->va.task[1].n + T->va.task[2].n))
			cli_die("%s: no validation examples of the tasks trained", o->valid);
	}
	for (int t = 0; t < 3; t++)
		if ((o->task & (1 << t)) && T->tr.task[t].total)
			T->tasks |= 1 << t;
	if (!T->tasks || (o->resume && T->tasks != o->task))
		cli_die("%s: no training examples of %s", o->stream ? o->stream : "<stdin>",
		        o->resume ? "every task of the resumed model" : "the tasks asked for");
	if (o->resume)
		return;
	llr_senc_config c = {.encoder = o->encoder, .E = o->embed, .H = o->hidden, .tasks = T->tasks, .dropout = (float)o->dropout,
	                     .word_dropout = (float)o->word_dropout};
	llr_optim_config oc;
	train_optim_config(&oc, o->optim, o->lr, o->eps);
	if (llr_senc_train_init(T->m, &c, o->seed, &oc, &T->ts, &e) < 0)
		cli_die_err(&e);
}

/* The epoch's accuracies, after the driver's line. */
static void show_valid(void *ctx, const llr_train_event *ev)
{
	const dtrain *T = ctx;
	double loss[3], acc[3];
	if (!isfinite(ev->valid) || llr_senc_train_valid(T->job, loss, acc) < 0)
		return;
	llr_buf line = {0};
	for (int t = 0; t < 3; t++)
		if (isfinite(loss[t]))
			llr_buf_printf(&line, " %s %.4f (%.2f%%)", task_names[t], loss[t], acc[t]);
	cli_warn("epoch %lld valid loss (accuracy):%s", (long long)ev->ts->epoch, line.data ? line.data : "");
	llr_buf_free(&line);
}

/* The opening lines: the examples, the encoder, the ranks. */
static void say_start(const dtrain *T, const train_opts *o)
{
	double counts[2] = {(double)T->tr.tokens, (double)T->tr.unknown}; /* every shard's */
	dist_sum(T->dist, counts, 2);
	if (o->quiet)
		return;
	size_t n = llr_senc_n_params(T->m->enc);
	char at[48] = "";
	if (o->resume)
		snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)T->ts.epoch + 1);
	cli_warn("%s: ORDER %zu, NEXT %zu, CONJ %zu examples (%.0f tokens, %.0f unknown); %s encoder, D %d, %zu parameters%s",
	         o->stream ? o->stream : "<stdin>", T->tr.task[0].total, T->tr.task[1].total, T->tr.task[2].total, counts[0], counts[1],
	         llr_senc_encoder_name(o->encoder), llr_senc_dim(T->m->enc), n, at);
	if (T->dist->on)
		cli_warn("distributed: %d ranks (rank 0 holds %zu of the %zu examples), %zu bytes summed across them per step", T->dist->size,
		         T->tr.task[0].n + T->tr.task[1].n + T->tr.task[2].n, T->tr.task[0].total + T->tr.task[1].total + T->tr.task[2].total,
		         dist_step_bytes(n));
}

int train_disc(train_opts *o)
{
	train_dist dist;
	dist_init(&dist, o->distributed);
	if (dist.rank != 0)
		o->quiet = 1; /* rank 0 speaks for the job */
	dtrain T = {.o = o, .dist = &dist};
	setup(&T, o);
	if (o->next_batch_negatives && dist.size > 1)
		cli_usage_error(train_usage, "--next-negatives batch: not on several ranks (a rank holds only its share of a batch)");
	set_meta(&T);
	llr_err e = {0};
	llr_senc_train_cfg cfg = {.batch = o->batch, .task_cap = o->task_cap, .tasks = T.tasks, .dropout = o->dropout > 0 || o->word_dropout > 0,
	                          .next_batch_negatives = o->next_batch_negatives};
	if (llr_senc_train_job(T.m, &T.tr, o->valid && dist.rank == 0 ? &T.va : NULL, &cfg, &dist.comm, &T.job, &e) < 0)
		cli_die_err(&e);
	say_start(&T, o);
	llr_train_opts ro = {.out = o->out, .log = o->log, .resumed = o->resume != NULL, .has_valid = o->valid != NULL, .lim = o->lim};
	train_run_opts rr = {.quiet = o->quiet, .progress = o->progress, .train_tokens = (int64_t)T.tr.tokens, .epoch_note = show_valid, .note_ctx = &T};
	train_run(T.job, &T.ts, &ro, &rr, &dist);
	llr_train_job_free(T.job);
	llr_disc_set_free(&T.tr);
	llr_disc_set_free(&T.va);
	llr_optim_free(T.ts.optim);
	free(T.ts.best);
	llr_senc_model_free(T.m);
	dist_finish(&dist);
	return 0;
}
