/*
 * train_disc.c - train's discourse sentence-encoder family (train --task):
 * an encoder (CBOW, GRU or BiGRU, lib/nn/sentenc.c) with bilinear heads
 * for ORDER, NEXT and CONJ, trained on disc-pairs output over the
 * vocabulary and input features of a featurize stream, jointly when
 * several tasks are given.  The optimisers, gradient clipping, validation
 * with early stopping, per-epoch checkpoints and seeds are the language
 * models' (llr_optim_*, llr_train_state, trainstate.c).  Under
 * --distributed each rank holds every N-th example of each task, every
 * rank plans the same batches, trains on its share of each and the
 * gradients are summed (train_dist.h); rank 0 validates and writes.
 * train(1) is the spec.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"
#include "train_dist.h"

static const char *const task_names[3] = {"order", "next", "conj"};

typedef struct dtrain {
	const train_opts *o;
	train_dist *dist;
	llr_senc_model *m;
	llr_train_state ts;
	llr_disc_set tr, va;
	llr_disc_batch_buf buf;
	size_t n;
	float *w, *g, *best;
	int tasks;
	size_t *order[3]; /* a task's examples by their index in the file */
	size_t *mine;     /* this rank's share of a batch, indices into tr */
	size_t *plan;     /* batch k: task plan[2k], first example plan[2k+1] */
	size_t nplan;
	double train_time;
	uint64_t train_tokens;
	const char *stop;
	double valid_acc[3], best_acc[3];
} dtrain;

static llr_lexicon *read_lexicon(const char *path)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	if (!r)
		cli_die_err(&e);
	llr_lexicon *lex = NULL;
	if (llr_lexicon_read(r, &lex, &e) < 0) {
		if (strncmp(e.msg, path, strlen(path)))
			llr_err_prefix(&e, "%s", path);
		cli_die_err(&e);
	}
	llr_tr_close(r);
	return lex;
}

/* Loss and accuracy of the encoder on every task of d in tasks. */
static void evaluate(dtrain *T, const llr_disc_set *d, double loss[3], double acc[3])
{
	llr_err e = {0};
	size_t bs = (size_t)T->o->batch, *idx = ecalloc(bs, sizeof *idx);
	for (int t = 0; t < 3; t++) {
		loss[t] = acc[t] = NAN;
		if (!(T->tasks & (1 << t)) || d->task[t].n == 0)
			continue;
		double l = 0;
		size_t correct = 0;
		for (size_t s = 0; s < d->task[t].n; s += bs) {
			size_t k = d->task[t].n - s < bs ? d->task[t].n - s : bs;
			for (size_t i = 0; i < k; i++)
				idx[i] = s + i;
			llr_senc_batch b;
			if (llr_disc_set_batch(d, t, idx, k, &T->buf, &b) != LLR_OK)
				cli_oom();
			double bl = 0;
			if (llr_senc_run(T->m->enc, &b, 0, &bl, &correct, NULL, &e) < 0)
				cli_die_err(&e);
			l += bl;
		}
		loss[t] = l / (double)d->task[t].n;
		acc[t] = 100.0 * (double)correct / (double)d->task[t].n;
	}
	free(idx);
}

static void shuffle(size_t *a, size_t n, llr_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, i), x = a[i - 1];
		a[i - 1] = a[j];
		a[j] = x;
	}
}

/* The examples of task t an epoch trains: all, or --task-cap of them. */
static size_t epoch_examples(const dtrain *T, int t)
{
	size_t n = T->tr.task[t].total;
	return T->o->task_cap > 0 && (unsigned long long)T->o->task_cap < n ? (size_t)T->o->task_cap : n;
}

/* The batches of an epoch: each task's examples shuffled, the first
 * epoch_examples of them cut into batches, the batches of all tasks
 * shuffled together. */
static void plan_epoch(dtrain *T, llr_rng *r)
{
	size_t bs = (size_t)T->o->batch;
	T->nplan = 0;
	for (int t = 0; t < 3; t++) {
		size_t n = T->tr.task[t].total;
		if (!(T->tasks & (1 << t)))
			continue;
		for (size_t i = 0; i < n; i++)
			T->order[t][i] = i;
		shuffle(T->order[t], n, r);
		n = epoch_examples(T, t);
		for (size_t s = 0; s < n; s += bs) {
			T->plan[2 * T->nplan] = (size_t)t;
			T->plan[2 * T->nplan + 1] = s;
			T->nplan++;
		}
	}
	for (size_t i = T->nplan; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, i);
		size_t a = T->plan[2 * (i - 1)], b = T->plan[2 * (i - 1) + 1];
		T->plan[2 * (i - 1)] = T->plan[2 * j];
		T->plan[2 * (i - 1) + 1] = T->plan[2 * j + 1];
		T->plan[2 * j] = a;
		T->plan[2 * j + 1] = b;
	}
}

/* This rank's examples among idx[0..n) (indices in the file), as indices
 * into its shard; their count. */
static size_t my_share(const dtrain *T, const size_t *idx, size_t n)
{
	size_t m = 0, N = (size_t)T->dist->size, r = (size_t)T->dist->rank;
	for (size_t i = 0; i < n; i++)
		if (idx[i] % N == r)
			T->mine[m++] = idx[i] / N;
	return m;
}

/* One step on the batch idx[0..n) of task t: this rank's share run, the
 * gradients of the mean loss over the whole batch summed across ranks,
 * clipped, applied.  Returns the batch's summed loss; *tokens gets the
 * batch's tokens, *late whether --max-time has passed on any rank. */
static double train_step(dtrain *T, int t, const size_t *idx, size_t n, double t0, uint64_t *tokens, int *late)
{
	const train_opts *o = T->o;
	llr_err e = {0};
	size_t m = my_share(T, idx, n);
	if (T->dist->on) /* the summed gradient's rows are every rank's */
		memset(T->g, 0, T->n * sizeof *T->g);
	dist_step s = {0};
	llr_rng mine_rng, *rng = dist_dropout_rng(T->dist, o->dropout > 0 || o->word_dropout > 0, &T->ts.rng, &mine_rng);
	if (m) {
		llr_senc_batch b;
		if (llr_disc_set_batch(&T->tr, t, T->mine, m, &T->buf, &b) != LLR_OK)
			cli_oom();
		b.rng = rng;
		b.next_batch_negatives = o->next_batch_negatives;
		if (llr_senc_run(T->m->enc, &b, 1, &s.nll, NULL, NULL, &e) < 0)
			cli_die_err(&e);
		s.ntok = (int64_t)T->buf.tokens;
		if (m < n) { /* the mean over m examples, as a share of the mean over n */
			float f = (float)((double)m / (double)n);
			for (size_t i = 0; i < T->n; i++)
				T->g[i] *= f;
		}
	}
	s.time_up = o->lim.max_time > 0 && T->train_time + (cli_now() - t0) >= o->lim.max_time;
	dist_reduce_step(T->dist, T->g, T->n, &s);
	/* One process: the gradient is zero outside the embedding rows the
	 * batch used (llr_senc_rows), so only those are clipped and zeroed
	 * after the update (the same bits as the dense pass; g starts zero). */
	const llr_rows *rows = NULL;
	int nb = 0;
	if (!T->dist->on && (nb = llr_senc_rows(T->m->enc, &rows, &e)) < 0)
		cli_die_err(&e);
	double norm = T->dist->on ? llr_clip_grad_norm(T->g, T->n, o->lim.clip) : llr_clip_grad_norm_rows(T->g, T->n, rows, nb, o->lim.clip);
	if (!isfinite(norm) || !isfinite(s.nll))
		cli_die("training diverged (loss %g, gradient norm %g) at epoch %lld; try a lower --lr", s.nll, norm, (long long)T->ts.epoch + 1);
	llr_optim_step(T->ts.optim, T->w, T->g);
	if (!T->dist->on)
		llr_grad_zero_rows(T->g, T->n, rows, nb);
	T->ts.step++;
	*tokens = (uint64_t)s.ntok;
	*late = s.time_up;
	return s.nll;
}

/* One epoch of updates; returns the mean training loss per example. */
static double train_epoch(dtrain *T)
{
	const train_opts *o = T->o;
	llr_rng r = T->ts.rng_epoch;
	plan_epoch(T, &r);
	double sum = 0, t0 = cli_now();
	size_t seen = 0;
	for (size_t k = 0; k < T->nplan; k++) {
		int t = (int)T->plan[2 * k], late;
		size_t s = T->plan[2 * k + 1], total = epoch_examples(T, t);
		size_t n = total - s < (size_t)o->batch ? total - s : (size_t)o->batch;
		uint64_t tokens;
		sum += train_step(T, t, T->order[t] + s, n, t0, &tokens, &late);
		seen += n;
		T->train_tokens += tokens;
		if (late || (o->lim.max_tokens > 0 && T->train_tokens >= (uint64_t)o->lim.max_tokens)) {
			T->stop = late ? "--max-time" : "--max-tokens";
			break;
		}
	}
	T->train_time += cli_now() - t0;
	T->ts.rng_epoch = r;
	return seen ? sum / (double)seen : NAN;
}

/* --next-negatives as the meta and the messages spell it. */
static const char *negatives_name(const train_opts *o)
{
	return o->next_batch_negatives ? "batch" : "own";
}

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
	llr_meta_set(m, "valid_criterion", "error");
	for (int t = 0; t < 3; t++) {
		char k[32];
		snprintf(k, sizeof k, "valid_%s_acc", task_names[t]);
		if (isfinite(T->best_acc[t]))
			llr_meta_setf(m, k, "%.4f", T->best_acc[t]);
	}
}

static void save(dtrain *T, int have_best)
{
	llr_err e = {0};
	set_meta(T);
	T->ts.best = have_best ? T->best : NULL;
	if (llr_senc_model_save(T->o->out, T->m, &T->ts, &e) < 0)
		cli_die_err(&e);
	T->ts.best = NULL;
}

/* Validation (rank 0's), early stopping, checkpoint: 1 to stop.  The
 * criterion is the mean over the tasks of the validation error rate
 * (100 - accuracy, in points), not the loss: for NEXT the accuracy still
 * climbs for epochs after an overconfident model's loss has turned. */
static int end_epoch(dtrain *T, double train_loss)
{
	const train_opts *o = T->o;
	double vl[3], va[3], mean = 0;
	int nt = 0, lead = T->dist->rank == 0;
	llr_buf line = {0};
	llr_buf_printf(&line, "epoch %lld: train loss %.4f", (long long)T->ts.epoch, train_loss);
	if (o->valid && lead) {
		evaluate(T, &T->va, vl, va);
		llr_buf_printf(&line, ", valid loss");
		for (int t = 0; t < 3; t++)
			if (isfinite(vl[t])) {
				mean += 100.0 - va[t]; /* the criterion: error rate, in points */
				nt++;
				T->valid_acc[t] = va[t];
				llr_buf_printf(&line, " %s %.4f (%.2f%%)", task_names[t], vl[t], va[t]);
			}
		mean = nt ? mean / nt : INFINITY;
	}
	llr_buf_printf(&line, "; %.0f tokens/s", T->train_time > 0 ? (double)T->train_tokens / T->train_time : 0.0);
	if (!o->quiet)
		cli_warn("%s", line.data);
	llr_buf_free(&line);
	if (!o->valid) {
		if (lead)
			save(T, 0);
		return 0;
	}
	mean = dist_bcast_double(T->dist, mean); /* every rank decides alike */
	int improved = mean < T->ts.best_valid - o->lim.min_impr;
	if (mean < T->ts.best_valid) {
		T->ts.best_valid = mean;
		T->ts.best_epoch = T->ts.epoch;
		memcpy(T->best, T->w, T->n * sizeof *T->w);
		memcpy(T->best_acc, T->valid_acc, sizeof T->best_acc);
	}
	T->ts.bad_epochs = improved ? 0 : T->ts.bad_epochs + 1;
	if (lead)
		save(T, T->ts.best_epoch != T->ts.epoch);
	if (T->ts.bad_epochs >= o->lim.patience) {
		T->stop = "no improvement";
		return 1;
	}
	return 0;
}

/* A new model: the lexicon of --features and the built-in CONJ classes
 * (llr_disc_set_read adds the others the pairs name). */
static void new_model(dtrain *T, const train_opts *o)
{
	if (!o->features)
		cli_die("--task needs --features FILE, the featurize stream of the vocabulary");
	T->m = ecalloc(1, sizeof *T->m);
	T->m->lex = read_lexicon(o->features);
	T->m->meta = llr_meta_new();
	if (!T->m->meta)
		cli_oom();
	llr_disc_conj_builtin(T->m->conj, &T->m->n_conj);
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
	char buf[32];
	train_fixed_opt(o->set_encoder, "--encoder", m, "encoder", llr_senc_encoder_name(o->encoder));
	snprintf(buf, sizeof buf, "%d", o->embed);
	train_fixed_opt(o->set_embed, "--embed", m, "embed", buf);
	snprintf(buf, sizeof buf, "%d", o->hidden);
	train_fixed_opt(o->set_hidden, "--hidden", m, "hidden", buf);
	snprintf(buf, sizeof buf, "%d", o->batch);
	train_fixed_opt(o->set_batch, "--batch", m, "batch", buf);
	snprintf(buf, sizeof buf, "%lld", o->task_cap);
	train_fixed_opt(o->set_task_cap, "--task-cap", m, "task_cap", buf);
	train_fixed_opt(o->set_optim, "--optim", m, "optim", llr_optim_name(o->optim));
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->seed);
	train_fixed_opt(o->set_seed, "-s", m, "seed", buf);
	/* the model's seed, which its meta is written with again */
	const char *seed = llr_meta_get(m, "seed");
	if (seed)
		o->seed = strtoull(seed, NULL, 10);
	const llr_senc_config *c = llr_senc_cfg(T->m->enc);
	train_resume_prob(o->set_dropout, "--dropout", "dropout", &o->dropout, c->dropout);
	train_resume_prob(o->set_word_dropout, "--word-dropout", "word_dropout", &o->word_dropout, c->word_dropout);
	int tasks = (int)llr_meta_num(m, "tasks", 0);
	if ((o->task & tasks) != tasks)
		cli_usage_error(train_usage, "--task: the resumed model trains%s%s%s", tasks & 1 ? " order" : "",
		                tasks & 2 ? " next" : "", tasks & 4 ? " conj" : "");
	o->task = tasks;
	o->encoder = llr_senc_encoder_parse(llr_meta_get(m, "encoder"));
	o->batch = (int)llr_meta_num(m, "batch", o->batch);
	o->task_cap = (long long)llr_meta_num(m, "task_cap", 0); /* none before the option */
	const char *neg = llr_meta_get(m, "next_negatives"); /* own before the option */
	if (!neg)
		neg = "own";
	if (o->set_next_negatives && strcmp(neg, negatives_name(o)))
		cli_usage_error(train_usage, "--next-negatives %s: the resumed model has next_negatives=%s", negatives_name(o), neg);
	o->next_batch_negatives = !strcmp(neg, "batch");
	if (o->features) {
		llr_lexicon *lex = read_lexicon(o->features);
		if (llr_lexicon_same(T->m->lex, lex, o->resume, o->features, &e) < 0)
			cli_die("%s: not the vocabulary of %s: %s", o->features, o->resume, e.msg);
		llr_lexicon_free(lex);
	}
	train_resume_limits(o, m, ts);
	T->ts = *ts;
	free(ts);
	for (int t = 0; t < 3; t++) {
		char k[32];
		snprintf(k, sizeof k, "valid_%s_acc", task_names[t]);
		T->best_acc[t] = llr_meta_num(m, k, NAN);
	}
	if (!llr_meta_get(m, "valid_criterion") && isfinite(T->ts.best_valid)) {
		/* written when the criterion was the loss: its best epoch's error */
		double err = 0;
		int nt = 0;
		for (int t = 0; t < 3; t++)
			if (isfinite(T->best_acc[t])) {
				err += 100.0 - T->best_acc[t];
				nt++;
			}
		T->ts.best_valid = nt ? err / nt : INFINITY;
	}
}

/* The encoder of a new model, seeded; its optimiser and training state. */
static void new_encoder(dtrain *T, const train_opts *o)
{
	llr_err e = {0};
	llr_senc_config c = {.encoder = o->encoder, .E = o->embed, .H = o->hidden, .tasks = T->tasks, .n_conj = T->m->n_conj, .dropout = (float)o->dropout, .word_dropout = (float)o->word_dropout};
	if (!(T->m->enc = llr_senc_new(&c, T->m->lex->psi ? T->m->lex->psi : T->m->lex->phi, &e)))
		cli_die_err(&e);
	llr_rng r;
	llr_rng_seed(&r, o->seed);
	llr_senc_init(T->m->enc, &r);
	size_t n = llr_senc_n_params(T->m->enc);
	llr_optim_config oc;
	train_optim_config(&oc, o->optim, o->lr, o->eps);
	if (!(T->ts.optim = llr_optim_new(&oc, n, &e)))
		cli_die_err(&e);
	T->ts.lr = oc.lr;
	T->ts.best_valid = T->ts.last_valid = INFINITY;
	llr_rng_seed(&T->ts.rng_epoch, o->seed + 1);
	llr_rng_seed(&T->ts.rng, o->seed + 2);
}

static void setup(dtrain *T, train_opts *o)
{
	for (int t = 0; t < 3; t++)
		T->best_acc[t] = T->valid_acc[t] = NAN;
	if (o->resume)
		resume_model(T, o);
	else
		new_model(T, o);
	T->tr.conj = T->va.conj = T->m->conj;
	T->tr.n_conj = T->m->n_conj;
	T->tr.shard_rank = T->dist->rank;
	T->tr.shard_size = T->dist->size;
	/* a resumed model's CONJ classes are fixed: its head has their rows */
	llr_err e = {0};
	if (llr_disc_set_read(&T->tr, o->stream ? o->stream : "-", T->m->lex->vocab, T->m->lex->unk_id, o->task, !o->resume, &e) != LLR_OK)
		cli_die_err(&e);
	T->m->n_conj = T->va.n_conj = T->tr.n_conj;
	if (o->valid && T->dist->rank == 0 && llr_disc_set_read(&T->va, o->valid, T->m->lex->vocab, T->m->lex->unk_id, o->task, 0, &e) != LLR_OK)
		cli_die_err(&e);
	T->tasks = 0;
	for (int t = 0; t < 3; t++)
		if ((o->task & (1 << t)) && T->tr.task[t].total)
			T->tasks |= 1 << t;
	if (!T->tasks || (o->resume && T->tasks != o->task))
		cli_die("%s: no training examples of %s", o->stream ? o->stream : "<stdin>",
		        o->resume ? "every task of the resumed model" : "the tasks asked for");
	if (!o->resume)
		new_encoder(T, o);
	T->n = llr_senc_n_params(T->m->enc);
	T->w = llr_senc_params(T->m->enc);
	T->g = llr_senc_grads(T->m->enc);
	T->best = emalloc(T->n * sizeof *T->best);
	memcpy(T->best, T->ts.best ? T->ts.best : T->w, T->n * sizeof *T->best);
	free(T->ts.best); /* save() lends T->best when it differs */
	T->ts.best = NULL;
	size_t nb = 0;
	for (int t = 0; t < 3; t++) {
		T->order[t] = ecalloc(T->tr.task[t].total + 1, sizeof *T->order[t]);
		nb += T->tr.task[t].total / (size_t)o->batch + 1;
	}
	T->mine = ecalloc((size_t)o->batch, sizeof *T->mine);
	T->plan = ecalloc(2 * nb, sizeof *T->plan);
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
	/* every rank read every line, so they agree on the classes and the
	 * sizes, and they must plan the same batches; a disagreement would sum
	 * gradients of different lengths, or hang */
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	uint64_t sizes[7] = {T.n, (uint64_t)T.m->n_conj, T.tr.task[0].total, T.tr.task[1].total, T.tr.task[2].total, (uint64_t)o->batch, (uint64_t)o->task_cap};
	for (size_t i = 0; i < 7; i++)
		h = (h ^ sizes[i]) * 1099511628211u;
	if (!dist_same(&dist, h))
		cli_die("--distributed: the ranks read %s differently, or were given another --batch or --task-cap", o->stream ? o->stream : "<stdin>");
	double counts[2] = {(double)T.tr.tokens, (double)T.tr.unknown}; /* every shard's */
	dist_sum(&dist, counts, 2);
	if (!o->quiet) {
		const char *sname = o->stream ? o->stream : "<stdin>";
		char at[48] = "";
		if (o->resume)
			snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)T.ts.epoch + 1);
		cli_warn("%s: ORDER %zu, NEXT %zu, CONJ %zu examples (%.0f tokens, %.0f unknown); %s encoder, D %d, %zu parameters%s",
		         sname, T.tr.task[0].total, T.tr.task[1].total, T.tr.task[2].total, counts[0], counts[1],
		         llr_senc_encoder_name(o->encoder), llr_senc_dim(T.m->enc), T.n, at);
		if (dist.on)
			cli_warn("distributed: %d ranks (rank 0 holds %zu of the %zu examples), %zu bytes summed across them per step",
			         dist.size, T.tr.task[0].n + T.tr.task[1].n + T.tr.task[2].n,
			         T.tr.task[0].total + T.tr.task[1].total + T.tr.task[2].total, dist_step_bytes(T.n));
	}
	int64_t first = T.ts.epoch;
	if (o->valid && T.ts.bad_epochs >= o->lim.patience) /* a resumed run that had stopped */
		T.stop = "no improvement";
	while (!T.stop && T.ts.epoch < o->lim.epochs) {
		double tl = train_epoch(&T);
		T.ts.epoch++;
		if (end_epoch(&T, tl))
			break;
	}
	if (T.ts.epoch == first && dist.rank == 0) /* nothing trained: the model as it was */
		save(&T, T.ts.best_epoch != T.ts.epoch);
	if (!T.stop)
		T.stop = "--epochs";
	if (!o->quiet)
		cli_warn("stopped (%s) after epoch %lld: %llu training tokens in %.1f s, %.0f tokens/s; wrote %s", T.stop,
		         (long long)T.ts.epoch, (unsigned long long)T.train_tokens, T.train_time,
		         T.train_time > 0 ? (double)T.train_tokens / T.train_time : 0.0, o->out);
	llr_disc_set_free(&T.tr);
	llr_disc_set_free(&T.va);
	llr_disc_batch_buf_free(&T.buf);
	for (int t = 0; t < 3; t++)
		free(T.order[t]);
	free(T.mine);
	free(T.plan);
	free(T.best);
	llr_optim_free(T.ts.optim);
	llr_senc_model_free(T.m);
	dist_finish(&dist);
	return 0;
}
