/*
 * trainer.c - the discourse sentence encoders' side of train(1)
 * (train --task, or --resume of an encoder): the options the family adds
 * or that a resumed model fixes, the new or resumed model
 * (llr_senc_model_new, llr_senc_model_load), the pairs (rank 0 alone
 * reads --valid), the meta of the options, and the lines beyond the
 * driver's (the examples and encoder at the start, each task's
 * validation accuracy after every epoch).  The training is the job of
 * train.c on the one driver.
 */
#include "family/family.h"

#include <math.h>
#include <stdlib.h>

#define SECTION "Discourse sentence encoders:"
#define REFUSE_DECAY "--lr-decay, --lr-patience and --lr-decays: not for the discourse encoders (--task)"
static const llr_train_opt opts[] = {
	{"task", 0, LLR_TOPT_CHOICE, LLR_TOPT_SELECTS, .choices = "order|next|conj|all", .arg = "order|next|conj|all",
	 .help = "train a sentence encoder on these disc-pairs examples", .section = SECTION,
	 .bad = "unknown task '%s' (order, next, conj, all)"},
	{"features", 0, LLR_TOPT_PATH, 0, .arg = "stream", .help = "the features stream of the vocabulary and input features",
	 .section = SECTION},
	{"encoder", 0, LLR_TOPT_CHOICE, 0, .choices = "cbow|gru|bigru", .dflt = "bigru", .arg = "cbow|gru|bigru",
	 .help = "the encoder (default bigru)", .section = SECTION, .bad = "unknown encoder '%s' (cbow, gru, bigru)"},
	{"word-dropout", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.95, .arg = "p",
	 .help = "zero each word's embedding with probability p in training", .section = SECTION},
	{"task-cap", 0, LLR_TOPT_INT, 0, 1, 1LL << 40, .arg = "n", .help = "train at most n examples of every task an epoch",
	 .section = SECTION},
	{"next-negatives", 0, LLR_TOPT_CHOICE, 0, .choices = "own|batch", .dflt = "own", .arg = "own|batch",
	 .help = "NEXT's candidates: the example's own, or the batch's", .section = SECTION, .bad = "'%s' is neither own nor batch"},
	{"hidden", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "256", .arg = "n", .help = "the encoder's size (default 256)", .section = SECTION},
	{"embed", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "256", .arg = "n", .help = "embedding size (default 256)", .section = SECTION},
	{"dropout", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.95, .arg = "p", .help = "dropout probability in training (default 0)",
	 .section = SECTION},
	{"lr-decay", 0, LLR_TOPT_REFUSED, .msg = REFUSE_DECAY},
	{"lr-patience", 0, LLR_TOPT_REFUSED, .msg = REFUSE_DECAY},
	{"lr-decays", 0, LLR_TOPT_REFUSED, .msg = REFUSE_DECAY},
	{0},
};

static const char *const task_names[3] = {"order", "next", "conj"};
static const int task_masks[4] = {LLR_TASK_ORDER, LLR_TASK_NEXT, LLR_TASK_CONJ, LLR_TASK_ALL};

/* The options as the setup uses them. */
typedef struct sopts {
	llr_train_common run;
	const char *features;
	int task, encoder, embed, hidden, batch, optim, next_batch_negatives;
	long long task_cap;
	double dropout, word_dropout, lr, eps;
	uint64_t seed;
} sopts;

typedef struct srun {
	sopts o;
	const llr_train_comm *comm;
	llr_senc_model *m;
	llr_train_state ts;
	llr_disc_set tr, va;
	int tasks;
	const llr_train_job *job;
} srun;

static void srun_free(void *p)
{
	srun *T = p;
	if (!T)
		return;
	llr_disc_set_free(&T->tr);
	llr_disc_set_free(&T->va);
	llr_optim_free(T->ts.optim);
	free(T->ts.best);
	llr_senc_model_free(T->m);
	free(T);
}

static int check(const llr_train_args *a, llr_err *err)
{
	for (int i = 1; i < llr_train_args_noperands(a); i++)
		if (!strcmp(llr_train_args_operand(a, i), "-"))
			return llr_train_usage_err(err, "'-' (stdin) can only be the first stream");
	if (llr_train_args_noperands(a) > 1)
		return llr_train_usage_err(err, "--task: at most one pairs file");
	return LLR_OK;
}

static void read_opts(const llr_train_args *a, const llr_train_comm *comm, sopts *o)
{
	memset(o, 0, sizeof *o);
	/* --resume without --task trains the model's tasks (resume_model) */
	o->task = llr_train_args_given(a, "task") ? task_masks[llr_train_args_int(a, "task")] : LLR_TASK_ALL;
	o->encoder = (int)llr_train_args_int(a, "encoder") + LLR_SENC_CBOW;
	o->embed = (int)llr_train_args_int(a, "embed");
	o->hidden = (int)llr_train_args_int(a, "hidden");
	o->batch = (int)llr_train_args_int(a, "batch");
	o->optim = llr_optim_parse(llr_train_args_str(a, "optim"));
	o->next_batch_negatives = llr_train_args_int(a, "next-negatives") == 1;
	o->task_cap = llr_train_args_int(a, "task-cap");
	o->dropout = llr_train_args_num(a, "dropout");
	o->word_dropout = llr_train_args_num(a, "word-dropout");
	o->lr = llr_train_args_num(a, "lr");
	o->eps = llr_train_args_num(a, "eps");
	o->seed = (uint64_t)llr_train_args_int(a, "seed");
	llr_train_args_common(a, comm, &o->run);
	o->features = llr_train_args_str(a, "features");
}

/* --next-negatives as the meta and the messages spell it. */
static const char *negatives_name(const sopts *o)
{
	return o->next_batch_negatives ? "batch" : "own";
}

/* The options in the meta, in the order the file has always had them
 * (the job keeps epochs_trained and the accuracies up to date). */
static int set_meta(srun *T)
{
	llr_meta *m = T->m->meta;
	const sopts *o = &T->o;
	if (llr_train_optim_meta(m, T->ts.optim) < 0 || llr_meta_setf(m, "batch", "%d", o->batch) < 0 ||
	    llr_meta_setf(m, "task_cap", "%lld", o->task_cap) < 0 || llr_meta_set(m, "next_negatives", negatives_name(o)) < 0 ||
	    llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed) < 0 ||
	    llr_meta_setf(m, "epochs_trained", "%lld", (long long)T->ts.epoch) < 0 || llr_train_limits_meta(&o->run.lim, m) < 0 ||
	    llr_train_schedule_meta(&o->run.lim, m) < 0 || llr_meta_set(m, "valid_criterion", "error") < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

/* --resume: the options the model fixes, checked against those given. */
static int resume_fixed(const llr_train_args *a, sopts *o, const llr_meta *m, llr_err *err)
{
	char b[5][32];
	snprintf(b[0], 32, "%d", o->embed);
	snprintf(b[1], 32, "%d", o->hidden);
	snprintf(b[2], 32, "%d", o->batch);
	snprintf(b[3], 32, "%lld", o->task_cap);
	snprintf(b[4], 32, "%llu", (unsigned long long)o->seed);
	int rc;
	if ((rc = llr_train_fixed(a, "encoder", m, "encoder", llr_senc_encoder_name(o->encoder), err)) < 0 ||
	    (rc = llr_train_fixed(a, "embed", m, "embed", b[0], err)) < 0 || (rc = llr_train_fixed(a, "hidden", m, "hidden", b[1], err)) < 0 ||
	    (rc = llr_train_fixed(a, "batch", m, "batch", b[2], err)) < 0 ||
	    (rc = llr_train_fixed(a, "task-cap", m, "task_cap", b[3], err)) < 0 ||
	    (rc = llr_train_fixed(a, "optim", m, "optim", llr_optim_name(o->optim), err)) < 0 ||
	    (rc = llr_train_fixed(a, "seed", m, "seed", b[4], err)) < 0)
		return rc;
	const char *seed = llr_meta_get(m, "seed"); /* the meta is written with it again */
	if (seed)
		o->seed = strtoull(seed, NULL, 10);
	return LLR_OK;
}

/* --resume: the model with its encoder, CONJ classes and training state;
 * the options it fixes are taken from it.  --features, when given, must
 * be the model's lexicon. */
static int resume_model(const llr_train_args *a, srun *T, llr_err *err)
{
	sopts *o = &T->o;
	llr_train_state *ts = NULL;
	int rc = llr_senc_model_load(o->run.resume, &T->m, &ts, err);
	if (rc < 0)
		return rc;
	if (!ts)
		return llr_err_set(err, LLR_EFORMAT, "%s: no training state to resume from", o->run.resume);
	T->ts = *ts; /* owned by T from here */
	free(ts);
	const llr_meta *m = T->m->meta;
	const llr_senc_config *c = llr_senc_cfg(T->m->enc);
	if ((rc = resume_fixed(a, o, m, err)) < 0 ||
	    (rc = llr_train_fixed_prob(a, "dropout", "dropout", &o->dropout, c->dropout, err)) < 0 ||
	    (rc = llr_train_fixed_prob(a, "word-dropout", "word_dropout", &o->word_dropout, c->word_dropout, err)) < 0)
		return rc;
	if ((o->task & c->tasks) != c->tasks)
		return llr_train_usage_err(err, "--task: the resumed model trains%s%s%s", c->tasks & 1 ? " order" : "", c->tasks & 2 ? " next" : "",
		                           c->tasks & 4 ? " conj" : "");
	o->task = c->tasks;
	o->encoder = c->encoder;
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->task_cap = (long long)llr_meta_num(m, "task_cap", 0); /* none before the option */
	const char *neg = llr_meta_get(m, "next_negatives");     /* own before the option */
	if (!neg)
		neg = "own";
	if (llr_train_args_given(a, "next-negatives") && strcmp(neg, negatives_name(o)))
		return llr_train_usage_err(err, "--next-negatives %s: the resumed model has next_negatives=%s", negatives_name(o), neg);
	o->next_batch_negatives = !strcmp(neg, "batch");
	llr_senc_model *f = NULL;
	if (o->features && (rc = llr_senc_model_new(o->features, &f, err)) < 0)
		return rc;
	llr_err e = {0};
	if (f && llr_lexicon_same(T->m->lex, f->lex, o->run.resume, o->features, &e) < 0)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: not the vocabulary of %s: %s", o->features, o->run.resume, e.msg);
	llr_senc_model_free(f);
	if (rc < 0 || (rc = llr_train_limits_resume(&o->run.lim, o->run.lim_given, m, o->run.resume, err)) < 0)
		return rc;
	if (!T->ts.optim)
		return llr_err_set(err, LLR_EFORMAT, "%s: the training state has no optimiser", o->run.resume);
	return llr_train_optim_resume(&T->ts, llr_train_args_given(a, "lr") ? o->lr : 0, o->eps, err);
}

/* The pairs: the training ones (this rank's share), and rank 0's --valid. */
static int read_pairs(srun *T, llr_err *err)
{
	const sopts *o = &T->o;
	int rank = T->comm ? T->comm->rank : 0;
	T->tr.conj = T->va.conj = T->m->conj;
	T->tr.n_conj = T->m->n_conj;
	T->tr.shard_rank = rank;
	T->tr.shard_size = T->comm && T->comm->on ? T->comm->size : 1;
	/* a resumed model's CONJ classes are fixed: its head has their rows */
	int rc = llr_disc_set_read(&T->tr, o->run.stream ? o->run.stream : "-", T->m->lex->vocab, T->m->lex->unk_id, o->task, !o->run.resume, err);
	if (rc != LLR_OK)
		return rc;
	T->m->n_conj = T->va.n_conj = T->tr.n_conj;
	if (o->run.valid && rank == 0) {
		if ((rc = llr_disc_set_read(&T->va, o->run.valid, T->m->lex->vocab, T->m->lex->unk_id, o->task, 0, err)) != LLR_OK)
			return rc;
		if (!(T->va.task[0].n + T->va.task[1].n + T->va.task[2].n))
			return llr_err_set(err, LLR_EEMPTY, "%s: no validation examples of the tasks trained", o->run.valid);
	}
	for (int t = 0; t < 3; t++)
		if ((o->task & (1 << t)) && T->tr.task[t].total)
			T->tasks |= 1 << t;
	if (!T->tasks || (o->run.resume && T->tasks != o->task))
		return llr_err_set(err, LLR_EEMPTY, "%s: no training examples of %s", o->run.stream ? o->run.stream : "<stdin>",
		                   o->run.resume ? "every task of the resumed model" : "the tasks asked for");
	return LLR_OK;
}

/* The model (new, or --resume's), the pairs and a new model's encoder. */
static int setup(const llr_train_args *a, srun *T, llr_err *err)
{
	const sopts *o = &T->o;
	int rc;
	if (o->run.resume)
		rc = resume_model(a, T, err);
	else if (!o->features)
		rc = llr_err_set(err, LLR_EINVAL, "--task needs --features FILE, the featurize stream of the vocabulary");
	else
		rc = llr_senc_model_new(o->features, &T->m, err);
	if (rc < 0 || (rc = read_pairs(T, err)) < 0 || o->run.resume)
		return rc;
	llr_senc_config c = {.encoder = o->encoder, .E = o->embed, .H = o->hidden, .tasks = T->tasks, .dropout = (float)o->dropout,
	                     .word_dropout = (float)o->word_dropout};
	llr_optim_config oc;
	llr_train_optim_config(&oc, o->optim, o->lr, o->eps);
	return llr_senc_train_init(T->m, &c, o->seed, &oc, &T->ts, err);
}

/* The epoch's accuracies, after the driver's line. */
static int show_valid(void *fam, const llr_train_event *ev, llr_buf *line)
{
	const srun *T = fam;
	double loss[3], acc[3];
	if (!isfinite(ev->valid) || llr_senc_train_valid(T->job, loss, acc) < 0)
		return LLR_OK;
	int rc = llr_buf_printf(line, "epoch %lld valid loss (accuracy):", (long long)ev->ts->epoch);
	for (int t = 0; rc >= 0 && t < 3; t++)
		if (isfinite(loss[t]))
			rc = llr_buf_printf(line, " %s %.4f (%.2f%%)", task_names[t], loss[t], acc[t]);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

/* The opening lines: the examples, the encoder, the ranks. */
static void say_start(const llr_train_args *a, const srun *T)
{
	int64_t counts[2] = {(int64_t)T->tr.tokens, (int64_t)T->tr.unknown}; /* every shard's */
	if (T->comm && T->comm->on)
		T->comm->sum_i64(T->comm->ctx, counts, 2);
	const sopts *o = &T->o;
	if (o->run.quiet)
		return;
	size_t n = llr_senc_n_params(T->m->enc);
	char at[48] = "";
	if (o->run.resume)
		snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)T->ts.epoch + 1);
	llr_train_note(a, "%s: ORDER %zu, NEXT %zu, CONJ %zu examples (%.0f tokens, %.0f unknown); %s encoder, D %d, %zu parameters%s",
	               o->run.stream ? o->run.stream : "<stdin>", T->tr.task[0].total, T->tr.task[1].total, T->tr.task[2].total, (double)counts[0],
	               (double)counts[1], llr_senc_encoder_name(o->encoder), llr_senc_dim(T->m->enc), n, at);
	if (T->comm && T->comm->on)
		llr_train_note(a, "distributed: %d ranks (rank 0 holds %zu of the %zu examples), %zu bytes summed across them per step",
		               T->comm->size, T->tr.task[0].n + T->tr.task[1].n + T->tr.task[2].n,
		               T->tr.task[0].total + T->tr.task[1].total + T->tr.task[2].total, llr_train_step_bytes(n));
}

static int build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	srun *T = llr_train_setup_own(s, sizeof *T, srun_free);
	if (!T)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	T->comm = comm;
	read_opts(a, comm, &T->o);
	const sopts *o = &T->o;
	int rc = setup(a, T, err);
	if (rc < 0)
		return rc;
	if (o->next_batch_negatives && comm && comm->on && comm->size > 1)
		return llr_train_usage_err(err, "--next-negatives batch: not on several ranks (a rank holds only its share of a batch)");
	if (set_meta(T) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	llr_senc_train_cfg cfg = {.batch = o->batch, .task_cap = o->task_cap, .tasks = T->tasks, .dropout = o->dropout > 0 || o->word_dropout > 0,
	                          .next_batch_negatives = o->next_batch_negatives};
	int rank = comm ? comm->rank : 0;
	if ((rc = llr_senc_train_job(T->m, &T->tr, o->run.valid && rank == 0 ? &T->va : NULL, &cfg, comm, &s->job, err)) < 0)
		return rc;
	T->job = s->job;
	say_start(a, T);
	s->ts = &T->ts;
	s->lim = o->run.lim;
	s->train_tokens = (int64_t)T->tr.tokens;
	s->has_valid = o->run.valid != NULL;
	s->epoch_note = show_valid;
	return LLR_OK;
}

const llr_trainer llr_senc_trainer = {
	.opts = opts,
	.synopsis = "train --task order|next|conj|all --features stream\n"
	            "             [--encoder cbow|gru|bigru] [-q] [-o model] [-s seed] [--hidden n]\n"
	            "             [--embed n] [--dropout p] [--word-dropout p] [--batch n]\n"
	            "             [--task-cap n] [--next-negatives own|batch]\n"
	            "             [--optim rmsprop|adam|sgd] [--lr x] [--eps x] [--clip x]\n"
	            "             [--valid pairs] [--patience n] [--epochs n] [--max-time duration]\n"
	            "             [--max-tokens n] [--threads n] [--log file] [--progress n]\n"
	            "             [--distributed] [pairs]\n"
	            "       train [--task order|next|conj|all] --resume encoder [the options above] [pairs]\n",
	.foreign = "not for the discourse encoders (--task)",
	.only = "for the discourse encoders only (--task)",
	.check = check,
	.build = build,
};
