/*
 * driver.c - the one training loop (llr_train_run, lib/llrnn.h) of every
 * family trained by gradient steps: epochs of the job's batches, one
 * optimiser step each (the gradient summed over the ranks of a
 * distributed run through the program's hooks), validation on rank 0 at
 * every epoch end with the schedule of schedule.c, the model file
 * rewritten then (a summary in its meta), a save when a signal or a
 * budget cuts an epoch short, the --log file and the progress events.
 * What a batch is and how a model computes, updates and saves itself is
 * the family's (llr_train_ops); formatting the events is the program's.
 */
#include "train/train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct driver {
	llr_train_job *job;
	const llr_train_ops *ops;
	void *st;
	llr_train_state *ts;
	const llr_train_opts *o;
	const llr_train_limits *lim;
	const llr_train_comm *comm;
	int rank;
	size_t n;          /* parameters */
	float *best;       /* weights of the best epoch (with validation) */
	int best_current;  /* the net holds them */
	int saved_epoch;   /* last epoch end written to the model file, -1 none */
	const char *stop;  /* why training ended */
	double last_train; /* last epoch's train loss */
	FILE *log;
	double t0;
	int wrote;       /* the model file was written by this run */
	int sig;         /* a signal caught by any rank, 0 none */
	int64_t run_tok; /* training tokens of this run's steps */
	double run_sec;  /* wall-clock seconds spent in them */
	size_t nbatches; /* of the current epoch */
	size_t ep_k0;    /* its first batch this run trains */
	int64_t ep_tok0; /* ts->epoch_tok then */
	double ep_t0;    /* its start time */
} driver;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void emit(driver *D, llr_train_event *ev)
{
	ev->ts = D->ts;
	if (D->o->event)
		D->o->event(D->o->ctx, ev);
}

static int set_summary(driver *D)
{
	llr_meta *m = D->job->meta;
	llr_train_state *ts = D->ts;
	int rc = 0;
	rc |= llr_meta_setf(m, "epochs_done", "%lld", (long long)ts->epoch);
	rc |= llr_meta_setf(m, "steps", "%lld", (long long)ts->step);
	rc |= llr_meta_setf(m, "train_tokens", "%lld", (long long)D->job->train_tokens);
	int err = D->job->error_rate;
	if (isfinite(D->last_train))
		rc |= llr_meta_setf(m, err ? "train_loss" : "train_logppl", "%.6f", D->last_train);
	if (isfinite(ts->best_valid)) {
		rc |= llr_meta_setf(m, err ? "valid_error" : "valid_logppl", "%.6f", ts->best_valid);
		rc |= llr_meta_setf(m, "best_epoch", "%lld", (long long)ts->best_epoch);
	}
	rc |= llr_meta_set(m, "stopped", D->stop ? D->stop : "running");
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

/* The model file, with the summary and the best weights when the net no
 * longer holds them (rank 0 writes the files). */
static int save(driver *D, llr_err *err)
{
	D->wrote = 1;
	if (D->rank != 0)
		return LLR_OK;
	if (set_summary(D) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	D->ts->best = D->best && !D->best_current ? D->best : NULL;
	int rc = D->ops->save(D->st, D->o->out, D->ts, err);
	D->ts->best = NULL;
	return rc;
}

static int log_row(driver *D, double train, double valid, double lr, llr_err *err)
{
	if (!D->log)
		return LLR_OK;
	fprintf(D->log, "%lld\t%lld\t%.3f\t%.6f\t%.6f\t%.6g\n", (long long)D->ts->epoch, (long long)D->ts->step, now() - D->t0, train, valid, lr);
	if (fflush(D->log) != 0 || ferror(D->log))
		return llr_err_set(err, LLR_EIO, "%s: write error: %s", D->o->log, strerror(errno));
	return LLR_OK;
}

static int diverged(driver *D, const char *what, llr_err *err)
{
	const llr_train_state *ts = D->ts;
	if (D->saved_epoch >= 0)
		return llr_err_set(err, LLR_ENAN,
		                   "epoch %lld step %lld: %s: training diverged; %s keeps the model of epoch %d (try a lower --lr or --clip)",
		                   (long long)ts->epoch + 1, (long long)ts->step + 1, what, D->o->out, D->saved_epoch);
	return llr_err_set(err, LLR_ENAN,
	                   "epoch %lld step %lld: %s: training diverged before the first epoch ended; no model written (try a lower --lr or --clip)",
	                   (long long)ts->epoch + 1, (long long)ts->step + 1, what);
}

/* A signal stopped the run: save where it stands. */
static int interrupted(driver *D, llr_err *err)
{
	D->stop = "interrupted";
	return save(D, err);
}

static int got_signal(const driver *D)
{
	return D->o->signal ? (int)*D->o->signal : 0;
}

/* The validation loss, computed by rank 0 and known to every rank; NaN
 * when it is not finite (the model diverged). */
static int validate(driver *D, double *v, llr_err *err)
{
	double x = NAN;
	if (D->rank == 0 && D->ops->evaluate(D->st, &x, err) < 0)
		return llr_err_code(err, LLR_EIO);
	*v = llr_comm_bcast_f64(D->comm, x);
	return LLR_OK;
}

/* Before the first step of a fresh run with validation: the untrained
 * model's validation loss is epoch 0 of the log and the first best (not
 * an error rate's: its first best is epoch 1's). */
static int initial_valid(driver *D, llr_err *err)
{
	llr_train_state *ts = D->ts;
	if (!D->o->has_valid || D->job->error_rate || ts->epoch != 0 || ts->batch != 0 || isfinite(ts->best_valid))
		return LLR_OK;
	double v;
	if (validate(D, &v, err) < 0)
		return llr_err_code(err, LLR_EIO);
	if (!isfinite(v))
		return llr_err_set(err, LLR_ENAN, "the initial model gives a non-finite validation loss");
	ts->best_valid = v;
	ts->best_epoch = 0;
	ts->last_valid = v;
	memcpy(D->best, D->ops->params(D->st, NULL, NULL), D->n * sizeof(float));
	D->best_current = 1;
	emit(D, &(llr_train_event){.kind = LLR_TRAIN_START, .valid = v, .params = D->n});
	return log_row(D, NAN, v, ts->lr, err);
}

/* Has the time budget passed, by this rank's clock? */
static int time_up(const driver *D)
{
	return D->lim->max_time > 0 && now() - D->t0 >= D->lim->max_time;
}

/* The epoch's mean training loss so far. */
static double epoch_loss(const driver *D)
{
	const llr_train_state *ts = D->ts;
	if (D->ops->train_loss)
		return D->ops->train_loss(D->st, ts);
	return ts->epoch_nll / (double)(ts->epoch_tok ? ts->epoch_tok : 1);
}

/* One optimiser step on batch k: this rank's gradient, summed over the
 * ranks with the signals and the clock, averaged over the batch's
 * tokens, clipped, applied.  *late: the time budget has passed. */
static int step(driver *D, size_t k, int *late, llr_err *err)
{
	llr_train_state *ts = D->ts;
	llr_train_sums s = {0};
	int rc = D->ops->grad(D->st, k, ts, &s, err);
	if (rc < 0 && rc != LLR_ENAN)
		return rc;
	if (rc == LLR_ENAN)
		s.nll = NAN;
	s.signal = got_signal(D);
	s.time_up = time_up(D);
	float *g;
	D->ops->params(D->st, &g, NULL);
	llr_comm_reduce_step(D->comm, g, D->n, &s);
	D->sig = s.signal;
	if (!isfinite(s.nll))
		return diverged(D, "the loss is not finite", err);
	double norm;
	if (D->ops->apply(D->st, ts, s.ntok, D->lim->clip, &norm, err) < 0)
		return llr_err_code(err, LLR_EIO);
	if (!isfinite(norm))
		return diverged(D, "the gradient is not finite", err);
	D->best_current = 0;
	ts->step++;
	ts->batch = (int64_t)k + 1;
	ts->epoch_nll += s.nll;
	ts->epoch_tok += s.ntok;
	D->run_tok += s.ntok;
	*late = s.time_up;
	if (D->ops->after_step && D->ops->after_step(D->st, ts, err) < 0)
		return llr_err_code(err, LLR_EIO);
	return LLR_OK;
}

/* The progress after batch k: the run's ETA counts the epochs left at
 * this epoch's pace (validation not counted), at most what is left of
 * the time budget. */
static void progress(driver *D, size_t k, double t)
{
	const llr_train_state *ts = D->ts;
	size_t nb = D->nbatches;
	double el = t - D->ep_t0;
	double per_batch = el / (double)(k + 1 - D->ep_k0);
	double eta = per_batch * (double)(nb - k - 1);
	int64_t after = D->lim->epochs - ts->epoch - 1;
	double run = eta + (double)(after > 0 ? after : 0) * per_batch * (double)nb;
	if (D->lim->max_time > 0)
		run = LLR_MIN(run, LLR_MAX(D->lim->max_time - (t - D->t0), 0.0));
	llr_train_event ev = {
	    .kind = LLR_TRAIN_STEP,
	    .batch = k + 1,
	    .nbatches = nb,
	    .loss = epoch_loss(D),
	    .tok_s = el > 0 ? (double)(ts->epoch_tok - D->ep_tok0) / el : 0,
	    .eta = eta,
	    .run_eta = run,
	};
	emit(D, &ev);
}

/* Train the rest of the current epoch's batches (from D->ep_k0).  *cut:
 * 0 when they are done, 1 when the time budget, 2 when the token budget
 * stopped the run after a batch; a signal saves and ends it. */
static int run_batches(driver *D, int *cut, llr_err *err)
{
	*cut = 0;
	for (size_t k = D->ep_k0; k < D->nbatches; k++) {
		double t0 = now();
		int late = 0;
		if (step(D, k, &late, err) < 0)
			return llr_err_code(err, LLR_EIO);
		double t = now();
		D->run_sec += t - t0;
		progress(D, k, t);
		if (D->sig)
			return interrupted(D, err);
		if (late) {
			*cut = 1;
			return LLR_OK;
		}
		if (D->lim->max_tokens > 0 && D->run_tok >= D->lim->max_tokens) {
			*cut = 2;
			return LLR_OK;
		}
	}
	return LLR_OK;
}

/* Why training stops now, or NULL.  Before an epoch the epoch count,
 * patience and the schedule decide; after one (limits), also the time and
 * token budgets, so the file written then says why training stopped. */
static const char *stop_reason(const driver *D, int limits)
{
	const llr_train_limits *l = D->lim;
	const llr_train_state *ts = D->ts;
	if (ts->epoch >= l->epochs)
		return "epochs";
	if (D->o->has_valid && ts->bad_epochs >= l->patience)
		return "patience";
	if (ts->converged)
		return "converged";
	if (limits && l->max_time > 0 && llr_comm_any(D->comm, time_up(D)))
		return "max-time";
	if (limits && l->max_tokens > 0 && D->run_tok >= l->max_tokens)
		return "max-tokens";
	return NULL;
}

/* The epoch is complete: the validation loss and its bookkeeping, the
 * event, the log row, and the model file.  r is the epoch's random state
 * after the shuffle (the next epoch starts from it). */
static int end_epoch(driver *D, const llr_rng *r, llr_err *err)
{
	llr_train_state *ts = D->ts;
	double train = epoch_loss(D);
	double el = now() - D->ep_t0;
	int64_t ep_tok = ts->epoch_tok - D->ep_tok0;
	ts->epoch++;
	ts->batch = 0;
	ts->rng_epoch = *r;
	if (D->ops->epoch_done && D->ops->epoch_done(D->st, ts, err) < 0)
		return llr_err_code(err, LLR_EIO);
	ts->epoch_nll = 0;
	ts->epoch_tok = 0;
	D->last_train = train;
	double v = NAN, lr_used = ts->lr;
	if (D->o->has_valid) {
		if (validate(D, &v, err) < 0)
			return llr_err_code(err, LLR_EIO);
		if (!isfinite(v))
			return diverged(D, "the validation loss is not finite", err);
		float *w = D->ops->params(D->st, NULL, NULL);
		if (D->job->error_rate)
			llr_train_epoch_error(ts, D->lim, v, w, D->best, D->n, &D->best_current);
		else
			llr_train_epoch_valid(ts, D->lim, v, w, D->best, D->n, &D->best_current);
	} else {
		D->best_current = 1; /* the last weights are the ones kept */
	}
	llr_train_event ev = {
	    .kind = LLR_TRAIN_EPOCH,
	    .loss = train,
	    .valid = v,
	    .best = D->o->has_valid && ts->best_epoch == ts->epoch,
	    .lr = lr_used,
	    .tok_s = el > 0 ? (double)ep_tok / el : 0.0,
	    .seconds = el,
	};
	emit(D, &ev);
	if (log_row(D, train, v, lr_used, err) < 0)
		return llr_err_code(err, LLR_EIO);
	D->stop = stop_reason(D, 1);
	if (save(D, err) < 0)
		return llr_err_code(err, LLR_EIO);
	D->saved_epoch = (int)ts->epoch;
	return LLR_OK;
}

/* The epoch loop, from wherever the training state stands. */
static int epochs(driver *D, llr_err *err)
{
	llr_train_state *ts = D->ts;
	if (initial_valid(D, err) < 0)
		return llr_err_code(err, LLR_EIO);
	while (!(D->stop = stop_reason(D, 0))) {
		llr_rng r = ts->rng_epoch;
		if (D->ops->plan(D->st, &r, &D->nbatches, err) < 0)
			return llr_err_code(err, LLR_EIO);
		D->ep_k0 = (size_t)ts->batch;
		D->ep_tok0 = ts->epoch_tok;
		D->ep_t0 = now();
		int cut, rc = run_batches(D, &cut, err);
		if (rc < 0 || D->sig)
			return rc;
		if (cut && (size_t)ts->batch < D->nbatches) {
			D->stop = cut == 2 ? "max-tokens" : "max-time";
			if (save(D, err) < 0)
				return llr_err_code(err, LLR_EIO);
			emit(D, &(llr_train_event){.kind = LLR_TRAIN_CUT, .batch = (size_t)ts->batch, .nbatches = D->nbatches, .stop = D->stop});
			break;
		}
		if (end_epoch(D, &r, err) < 0)
			return llr_err_code(err, LLR_EIO);
		D->sig = llr_comm_any(D->comm, got_signal(D));
		if (D->sig)
			return interrupted(D, err);
		if (D->stop)
			break;
	}
	return LLR_OK;
}

/* The best weights so far (with validation), the --log file. */
static int start(driver *D, llr_err *err)
{
	const llr_train_opts *o = D->o;
	float *w = D->ops->params(D->st, NULL, &D->n);
	if (o->has_valid) {
		if (!(D->best = malloc(D->n * sizeof(float))))
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		memcpy(D->best, D->ts->best ? D->ts->best : w, D->n * sizeof(float));
		D->best_current = !D->ts->best;
	}
	free(D->ts->best);
	D->ts->best = NULL;
	if (o->resumed)
		D->saved_epoch = (int)D->ts->epoch;
	D->t0 = now();
	if (o->log && D->rank == 0) {
		int append = o->resumed && access(o->log, F_OK) == 0;
		if (!(D->log = fopen(o->log, append ? "a" : "w")))
			return llr_err_set(err, LLR_EIO, "%s: %s", o->log, strerror(errno));
		if (!append)
			fputs("epoch\tstep\tseconds\ttrain\tvalid\tlr\n", D->log);
	}
	return LLR_OK;
}

int llr_train_run(llr_train_job *job, llr_train_state *ts, const llr_train_opts *o, llr_train_result *res, llr_err *err)
{
	driver D = {
	    .job = job,
	    .ops = job->ops,
	    .st = job->state,
	    .ts = ts,
	    .o = o,
	    .lim = &o->lim,
	    .comm = o->comm,
	    .rank = llr_comm_rank(o->comm),
	    .saved_epoch = -1,
	    .last_train = NAN,
	};
	int rc = start(&D, err);
	if (rc == LLR_OK)
		rc = epochs(&D, err);
	if (rc == LLR_OK && !D.sig && !D.wrote)
		rc = save(&D, err); /* no epoch to train, or a resumed run that had already ended */
	if (rc == LLR_OK && !D.sig)
		emit(&D, &(llr_train_event){.kind = LLR_TRAIN_DONE, .stop = D.stop, .run_tokens = D.run_tok, .run_seconds = D.run_sec});
	if (D.log && fclose(D.log) != 0 && rc == LLR_OK)
		rc = llr_err_set(err, LLR_EIO, "%s: write error: %s", o->log, strerror(errno));
	free(D.best);
	res->stop = D.stop;
	res->signal = D.sig;
	return rc;
}
