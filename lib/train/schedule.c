/*
 * schedule.c - what the training driver (driver.c) does at the end of an
 * epoch with the validation loss: keep the best weights, count the
 * epochs without one (patience), and change the learning rate: the decay
 * schedule (restore the best weights, multiply the rate) for any
 * optimiser, else SGD's RNNLM halving; for an error rate (the discourse
 * encoders') a best is any drop and the rate stays.  Its state is the training
 * state's (bad_epochs, decays, stalls, halving, converged, lr), so a
 * resumed run goes on exactly.  The spec is train(1), --lr-decay and --optim.
 */
#include "train/train.h"

#include <math.h>
#include <stdlib.h>

static void set_lr(llr_train_state *ts, double lr)
{
	ts->lr = lr;
	llr_optim_set_lr(ts->optim, (float)lr);
}

static void restore(float *w, const float *best, size_t n, int *best_current)
{
	if (!*best_current)
		memcpy(w, best, n * sizeof(float));
	*best_current = 1;
}

/* The decay schedule: after lr_patience epochs in a row that do not beat
 * the best by min_impr (gain: the best before this epoch minus v), the
 * best weights back and the rate times lr_decay; such a stall after the
 * last decay stops training.  The optimiser's moments are kept. */
static void decay_schedule(llr_train_state *ts, const llr_train_limits *l, double gain, float *w, const float *best, size_t n,
                           int *best_current)
{
	if (gain >= l->min_impr) {
		ts->stalls = 0;
		return;
	}
	if (++ts->stalls < l->lr_patience)
		return;
	ts->stalls = 0;
	if (ts->decays >= l->lr_decays) {
		ts->converged = 1;
		return;
	}
	restore(w, best, n, best_current);
	ts->decays++;
	set_lr(ts, ts->lr * l->lr_decay);
}

/* RNNLM schedule (Mikolov), SGD without a decay: a worse epoch is
 * undone; once the gain falls below min_impr the rate is halved every
 * epoch, and the second time it falls below, training stops. */
static void rnnlm_schedule(llr_train_state *ts, double min_impr, double v, float *w, const float *best, size_t n, int *best_current)
{
	int bad = isfinite(ts->last_valid) && v >= ts->last_valid;
	if (bad)
		restore(w, best, n, best_current);
	if (bad || (isfinite(ts->last_valid) && ts->last_valid - v < min_impr)) {
		if (ts->halving)
			ts->converged = 1;
		ts->halving = 1;
	}
	if (ts->halving && !ts->converged)
		set_lr(ts, ts->lr / 2);
	if (!bad)
		ts->last_valid = v;
}

void llr_train_epoch_valid(llr_train_state *ts, const llr_train_limits *l, double v, float *w, float *best, size_t n, int *best_current)
{
	int improved = v < ts->best_valid - 1e-4;
	double gain = ts->best_valid - v;
	if (improved) {
		ts->best_valid = v;
		ts->best_epoch = ts->epoch;
		ts->bad_epochs = 0;
		memcpy(best, w, n * sizeof(float));
		*best_current = 1;
	} else {
		ts->bad_epochs++;
	}
	if (l->lr_decay > 0)
		decay_schedule(ts, l, gain, w, best, n, best_current);
	else if (llr_optim_cfg(ts->optim)->kind == LLR_OPT_SGD)
		rnnlm_schedule(ts, l->min_impr, v, w, best, n, best_current);
}

void llr_train_epoch_error(llr_train_state *ts, const llr_train_limits *l, double v, const float *w, float *best, size_t n,
                           int *best_current)
{
	int improved = v < ts->best_valid - l->min_impr;
	if (v < ts->best_valid) {
		ts->best_valid = v;
		ts->best_epoch = ts->epoch;
		memcpy(best, w, n * sizeof(float));
		*best_current = 1;
	}
	ts->bad_epochs = improved ? 0 : ts->bad_epochs + 1;
}
