/*
 * run.c - train's side of the library's training driver
 * (llr_train_run): the SIGINT and SIGTERM handler whose flag the driver
 * polls, the driver's events as train(1)'s lines on stderr (the step
 * line, drawn in place on a terminal, else every --progress steps; the
 * epoch lines, each followed by the family's own line when it has one;
 * the closing lines), and the exits: 128 + the signal after
 * an interrupted run saved, 1 on an error.  CLI-only.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli.h"
#include "../progress.h"
#include "train.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

const volatile sig_atomic_t *train_signal_flag(void)
{
	return &got_signal;
}

void train_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND; /* a second signal kills */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

typedef struct shown {
	const train_run_opts *r;
	const llr_train_opts *o;
	cli_progress prog;
	int tty;
	int64_t epoch; /* of the last step line: a new epoch draws at once */
} shown;

static void show_step(shown *S, const llr_train_event *ev)
{
	const llr_train_state *ts = ev->ts;
	if (ts->epoch != S->epoch) {
		S->epoch = ts->epoch;
		S->prog.last = 0;
	}
	int every = S->r->progress > 0 && ts->step % S->r->progress == 0;
	if (!(S->tty ? cli_now() - S->prog.last >= 0.25 || ev->batch == ev->nbatches : every))
		return;
	char dur[32], rdur[32];
	cli_progress_step(&S->prog, "epoch %lld step %lld batch %zu/%zu loss %.4f %.0f tok/s ETA %s run ETA %s", (long long)ts->epoch + 1,
	                  (long long)ts->step, ev->batch, ev->nbatches, ev->loss, ev->tok_s, cli_duration(ev->eta, dur, sizeof dur),
	                  cli_duration(ev->run_eta, rdur, sizeof rdur));
}

static void show_epoch(const llr_train_event *ev)
{
	char dur[32];
	const llr_train_state *ts = ev->ts;
	if (isfinite(ev->valid))
		cli_warn("epoch %lld train %.4f valid %.4f%s lr %.3g %.0f tok/s %s", (long long)ts->epoch, ev->loss, ev->valid,
		         ev->best ? " (best)" : "", ev->lr, ev->tok_s, cli_duration(ev->seconds, dur, sizeof dur));
	else
		cli_warn("epoch %lld train %.4f lr %.3g %.0f tok/s %s", (long long)ts->epoch, ev->loss, ev->lr, ev->tok_s,
		         cli_duration(ev->seconds, dur, sizeof dur));
}

static void show_done(shown *S, const llr_train_event *ev)
{
	const llr_train_state *ts = ev->ts;
	const char *stop = ev->stop ? ev->stop : "?";
	if (S->o->lim.max_tokens > 0)
		cli_warn("max-tokens: %lld training tokens in %.3f s: %.0f tokens/s", (long long)ev->run_tokens, ev->run_seconds,
		         ev->run_seconds > 0 ? (double)ev->run_tokens / ev->run_seconds : 0.0);
	if (isfinite(ts->best_valid) && S->o->has_valid)
		cli_warn("stopped (%s) after epoch %lld; best valid %.4f at epoch %lld; wrote %s", stop, (long long)ts->epoch, ts->best_valid,
		         (long long)ts->best_epoch, S->o->out);
	else
		cli_warn("stopped (%s) after epoch %lld; wrote %s", stop, (long long)ts->epoch, S->o->out);
}

static void show(void *ctx, const llr_train_event *ev)
{
	shown *S = ctx;
	if (S->r->quiet)
		return;
	switch (ev->kind) {
	case LLR_TRAIN_START:
		cli_warn("epoch 0 valid %.4f (%zu parameters, %lld training tokens)", ev->valid, ev->params, (long long)S->r->train_tokens);
		break;
	case LLR_TRAIN_STEP: show_step(S, ev); break;
	case LLR_TRAIN_EPOCH:
		cli_progress_clear();
		show_epoch(ev);
		if (S->r->epoch_note)
			S->r->epoch_note(S->r->note_ctx, ev);
		break;
	case LLR_TRAIN_CUT:
		cli_progress_clear();
		cli_warn("--%s reached in epoch %lld (batch %lld of %zu); saved %s", ev->stop, (long long)ev->ts->epoch + 1,
		         (long long)ev->ts->batch, ev->nbatches, S->o->out);
		break;
	case LLR_TRAIN_DONE: show_done(S, ev); break;
	}
}

void train_run(llr_train_job *job, llr_train_state *ts, llr_train_opts *o, const train_run_opts *r, train_dist *dist)
{
	shown S = {.r = r, .o = o, .tty = isatty(2), .epoch = -1};
	if (dist->rank == 0)
		train_lock_model(o->out);
	cli_progress_init(&S.prog, r->quiet, 0);
	o->comm = &dist->comm;
	o->signal = &got_signal;
	o->event = show;
	o->ctx = &S;
	train_catch_signals();
	llr_train_result res;
	llr_err e = {0};
	if (llr_train_run(job, ts, o, &res, &e) < 0)
		cli_die_err(&e);
	cli_progress_clear();
	if (!res.signal)
		return;
	if (dist->rank == 0)
		cli_warn("%s: epoch %lld batch %lld: saved %s; continue with --resume %s", res.signal == SIGINT ? "interrupted" : "terminated",
		         (long long)ts->epoch + 1, (long long)ts->batch, o->out, o->out);
	dist_finish(dist);
	exit(128 + res.signal);
}
